"""Computer players at three levels (issue 25): a level per computer seat, chosen through the API,
/new, the CLI and carried by exports; easy seats answer inside the move, normal and strong ones are
played by the worker (app/features/clock/botturns.py), never inside the request; a stale turn is
dropped, two workers play a turn once; a seat the clock plays for plays at normal."""

from __future__ import annotations

import json
import threading
from datetime import timedelta
from typing import Any

import pytest
from click.testing import CliRunner
from sqlalchemy import event
from sqlmodel import col, select

from app.core.db import WRITE
from app.core.models import BotTurn, Game, Move, Seat, utcnow
from app.features.clock import botturns
from app.features.clock.timekeeper import install
from app.games import ruleset
from app.service import BotTask, GameEvent, GameService
from cli.main import main as titanpost_main
from tests.apifixtures import ADMIN_TOKEN, SEED, Api, base_env, bearer, make_service
from tests.test_pages import browser, create_through_pages, csrf

pytest_plugins = ["tests.apifixtures"]


pytestmark = pytest.mark.usefixtures("quick_searches")
"""These tests are about who plays a turn and when (the worker, once, never the request),
not about how well: a full strong budget made each worker test here spend 10-20 s searching."""


HUMAN = {"email": "ann@example.com"}
STRONG = {"bot": True, "level": "strong"}
NORMAL = {"bot": True, "level": "normal"}


# ---------------------------------------------------------------------- helpers


def new_game(svc: GameService, seats: list[dict[str, Any]], **kwargs: Any) -> tuple[str, dict]:
    """A started game of ``seats``: its id and the humans' positions to API tokens."""
    created = svc.create_game(seats=seats, seed=SEED, **kwargs)
    tokens = {inv["position"]: svc.accept(inv["invite_token"])["api_token"]
              for inv in created["invitations"]}
    svc.start(created["game"], created["creator_token"])
    return created["game"], tokens


def turns(svc: GameService, uid: str, *, open_only: bool = False) -> list[BotTurn]:
    with svc.session() as s:
        game = s.exec(select(Game).where(Game.uid == uid)).one()
        query = select(BotTurn).where(BotTurn.game_id == game.id)
        if open_only:
            query = query.where(col(BotTurn.done_at).is_(None))
        return list(s.exec(query.order_by(col(BotTurn.id))).all())


def log(svc: GameService, uid: str) -> list[Move]:
    with svc.session() as s:
        game = s.exec(select(Game).where(Game.uid == uid)).one()
        return list(s.exec(select(Move).where(Move.game_id == game.id)
                           .order_by(col(Move.seq))).all())


def humans_until_bot(svc: GameService, uid: str, humans: set[int], limit: int = 200) -> list[int]:
    """Answer the humans' decisions (their first option) until only computer seats owe the
    pending one; the seats that owe it."""
    for _ in range(limit):
        state = svc.state(uid, None)["game"]
        to_act = state["to_act"]
        assert state["status"] == "active", state
        mine = [p for p in to_act if p in humans]
        if not mine:
            return list(to_act)
        options = svc.options(uid, mine[0])
        svc.submit(uid, mine[0], options["seq"], options["options"][0])
    raise AssertionError("the computer never had the decision")


def seat_levels(svc: GameService, uid: str) -> list[str | None]:
    return [seat["level"] for seat in svc.state(uid, None)["game"]["seats"]]


# ---------------------------------------------------------------------- the worker plays


@pytest.mark.parametrize("game", ["titan-race", "great-race"])
def test_a_strong_seat_is_played_by_the_worker_never_the_request(
        service: GameService, game: str) -> None:
    """The move that hands the turn to a strong seat returns with that seat still to act and a
    bot_turns row written; the worker's run plays it (logged as the computer's), and easy seats
    after it go on at once. The Great Race's sealed plans included."""
    uid, tokens = new_game(service, [HUMAN, STRONG, {"bot": True}], rules_name=game)
    assert seat_levels(service, uid) == [None, "strong", "easy"]
    played = 0
    for _ in range(12):
        owing = humans_until_bot(service, uid, set(tokens))
        assert 1 in owing, owing  # only the strong seat waits: the easy one answered inline
        before = log(service, uid)
        assert [(t.seat, t.level) for t in turns(service, uid, open_only=True)] == [(1, "strong")]
        report = botturns.run_due(service, "worker-a")
        assert report.played >= 1 and report.failed == 0
        after = log(service, uid)[len(before):]
        assert after and after[0].actor == "computer"
        assert after[0].seat in (1, None)  # None: a reveal of sealed plans, in seat order
        played += report.played
        if service.state(uid, None)["game"]["status"] != "active":
            break
    assert played >= 12 or service.state(uid, None)["game"]["status"] == "finished"
    assert all(t.result == "played" for t in turns(service, uid))
    if game == "great-race":  # the worker sealed the last plan: its entry is the reveal
        assert any(m.seat is None and m.actor == "computer" and m.input.startswith("plan")
                   for m in log(service, uid))


def test_the_move_over_the_api_returns_before_the_strong_seat_moves(api: Api) -> None:
    """POST /moves answers with the strong seat to act: the request did not play it."""
    response = api.client.post("/api/games", json={"seed": SEED, "seats": [
        {"email": "ann@example.com"}, {"bot": True, "level": "strong"},
        {"bot": True, "level": "normal"}]}, headers=bearer(ADMIN_TOKEN))
    assert response.status_code == 201, response.get_json()
    created = response.get_json()
    token = api.client.post("/api/invitations/accept", json={
        "invite_token": created["invitations"][0]["invite_token"]}).get_json()["api_token"]
    started = api.client.post(f"/api/games/{created['game']}/start", json={},
                              headers={"X-Creator-Token": created["creator_token"]})
    assert started.status_code == 200
    uid = created["game"]
    state = api.state(uid)
    assert [s["level"] for s in state["game"]["seats"]] == [None, "strong", "normal"]
    svc = api.service
    for _ in range(20):
        to_act = api.to_act(uid)
        if to_act == [0]:
            options = api.client.get(f"/api/games/{uid}/options", headers=bearer(token))
            body = options.get_json()
            moved = api.client.post(f"/api/games/{uid}/moves", headers=bearer(token), json={
                "expected_seq": body["seq"], "input": body["options"][0]})
            assert moved.status_code == 200, moved.get_json()
            answered = moved.get_json()["game"]["to_act"]
            if answered != [0]:  # the turn went to a computer seat: still its, and a row
                assert answered[0] in (1, 2)
                assert [t.seat for t in turns(svc, uid, open_only=True)] == answered
                return
        else:
            assert install(svc).process_due().bot_moves >= 1
    raise AssertionError("the human never handed the turn to a computer seat")


# ---------------------------------------------------------------------- stale turns, races


def bot_after_a_human(svc: GameService, uid: str, humans: set[int]) -> None:
    """Play on (the humans their first option, the worker the computer's turns) until a
    computer seat owes a turn right after a human's move (whoever the deal seats first)."""
    for _ in range(20):
        humans_until_bot(svc, uid, humans)
        entries = log(svc, uid)
        if entries and entries[-1].seat in humans:
            return
        assert botturns.run_due(svc, "worker-a").played >= 1
    raise AssertionError("no computer turn came right after a human's move")


def test_a_turn_taken_back_meanwhile_is_dropped(service: GameService) -> None:
    """A rollback between the worker's read and its append: the move is not played (the
    search ran on a state that is gone) and the row is settled as stale; the new decision's
    turn is written afresh."""
    uid, tokens = new_game(service, [HUMAN, STRONG, {"bot": True}])
    bot_after_a_human(service, uid, set(tokens))
    (turn,) = turns(service, uid, open_only=True)
    assert botturns.claim(service, "worker-a", utcnow()) == [turn.id]
    task = service.bot_task(turn.id, "worker-a")
    assert isinstance(task, BotTask)
    choice = task.choose()  # the search, outside any transaction
    head = len(log(service, uid))
    service.rollback(uid, head - 1)  # the human's last move taken back
    assert service.play_bot_turn(task, choice, "worker-a") == "stale"
    entries = log(service, uid)
    assert entries[-1].kind == "rollback" and all(
        m.actor != "computer" or m.seq < head for m in entries)
    (settled,) = [t for t in turns(service, uid) if t.id == turn.id]
    assert settled.result == "stale" and settled.done_at is not None


def test_a_stale_turn_claimed_later_is_dropped_unplayed(service: GameService) -> None:
    uid, tokens = new_game(service, [HUMAN, STRONG, {"bot": True}])
    bot_after_a_human(service, uid, set(tokens))
    head = len(log(service, uid))
    service.rollback(uid, head - 1)
    report = botturns.run_due(service, "worker-a")
    assert report.played == 0 and report.dropped == 1
    assert len(log(service, uid)) == head + 1  # the rollback alone


def test_two_workers_never_play_a_turn_twice(migrated_database_url: str) -> None:
    """Two services (two connection pools, as two processes) run the worker at once over
    several games each owing a strong turn: every turn is played once."""
    one = make_service(migrated_database_url)
    two = make_service(migrated_database_url)
    try:
        games = []
        for _ in range(4):
            uid, tokens = new_game(one, [HUMAN, STRONG, {"bot": True}])
            humans_until_bot(one, uid, set(tokens))
            games.append(uid)
        heads = {uid: len(log(one, uid)) for uid in games}
        reports: dict[str, botturns.BotReport] = {}
        go = threading.Barrier(2)

        def run(name: str, svc: GameService) -> None:
            go.wait()
            reports[name] = botturns.run_due(svc, name)

        threads = [threading.Thread(target=run, args=(name, svc))
                   for name, svc in (("a", one), ("b", two))]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert reports["a"].failed == reports["b"].failed == 0
        assert reports["a"].played + reports["b"].played >= len(games)
        for uid in games:
            moves = log(one, uid)[heads[uid]:]
            assert moves[0].actor == "computer" and moves[0].seat == 1
            first = turns(one, uid)[0]
            assert first.result == "played" and first.attempts == 1
    finally:
        one.engine.dispose()
        two.engine.dispose()


def test_a_turn_whose_worker_died_is_played_after_the_lease(service: GameService) -> None:
    """A claim whose worker never comes back is taken by another once the lease is over, and
    the first worker's late answer is refused (the turn is no longer its)."""
    uid, tokens = new_game(service, [HUMAN, STRONG, {"bot": True}])
    humans_until_bot(service, uid, set(tokens))
    (turn,) = turns(service, uid, open_only=True)
    now = utcnow()
    assert botturns.claim(service, "dead", now) == [turn.id]
    task = service.bot_task(turn.id, "dead")
    assert isinstance(task, BotTask)
    assert botturns.claim(service, "alive", now + timedelta(seconds=5)) == []
    later = now + botturns.LEASE + timedelta(seconds=1)
    assert botturns.claim(service, "alive", later) == [turn.id]
    assert service.play_bot_turn(task, task.choose(), "dead") == "lost"
    report = botturns.BotReport()
    botturns.play(service, turn.id, "alive", report)
    assert report.played == 1
    assert [m.actor for m in log(service, uid)].count("computer") >= 1


# ---------------------------------------------------------------------- the clock's seats


def test_a_timed_out_seat_is_played_at_normal(service: GameService) -> None:
    """The computer's move for a late player (bot mode) is made at normal level: the
    timed_out event says so, the log keeps the timeout actor; after max_missed the seat is
    handed over at normal, its later decisions the worker's."""
    events: list[GameEvent] = []
    service.listeners.append(lambda _s, event: events.append(event))
    keeper = install(service)
    uid, _ = new_game(service, [HUMAN, {"email": "ben@example.com"},
                                {"email": "cy@example.com"}],
                      settings={"deadline_hours": 1, "max_missed": 1})
    late = service.state(uid, None)["game"]["to_act"][0]
    keeper.process_due(utcnow() + timedelta(hours=2), max_gap=None)
    (timed_out,) = [e for e in events if e.kind == "timed_out"]
    assert timed_out.detail["level"] == "normal" and timed_out.detail["mode"] == "bot"
    assert timed_out.detail["handover"] == "computer"
    assert any(m.actor == "timeout" and m.seat == late for m in log(service, uid))
    with service.session() as s:
        seat = s.exec(select(Seat).join(Game, col(Game.id) == col(Seat.game_id)).where(
            Game.uid == uid, Seat.position == late)).one()
        assert seat.is_bot and seat.bot_level == "normal"
    assert seat_levels(service, uid)[late] == "normal"


def test_a_timed_out_turn_is_searched_before_the_write_transaction(
        service: GameService, monkeypatch: pytest.MonkeyPatch) -> None:
    """The normal-level search for a late seat (up to 0.15 s a decision) runs with no write
    transaction of the clock's open (on SQLite it would hold every other move up), and the
    inputs it found are the ones played."""
    writing: list[int] = []  # write transactions open in this thread
    event.listen(service.engine, "begin", lambda conn: writing.append(1)
                 if conn.get_execution_options().get(WRITE) else None)
    for name in ("commit", "rollback"):
        event.listen(service.engine, name, lambda conn: writing.pop()
                     if conn.get_execution_options().get(WRITE) and writing else None)
    searched: list[tuple[str, int]] = []
    keeper = install(service)
    uid, _ = new_game(service, [HUMAN, {"email": "ben@example.com"},
                                {"email": "cy@example.com"}], settings={"deadline_hours": 1})
    rules = ruleset(service.state(uid, None)["game"]["ruleset"])
    original = type(rules).bot_move

    def watched(self: Any, game: Any, seat: int | None = None, level: str = "easy") -> str:
        choice = original(self, game, seat, level)
        if level == "normal":
            searched.append((choice, len(writing)))
        return choice

    monkeypatch.setattr(type(rules), "bot_move", watched)
    late = service.state(uid, None)["game"]["to_act"][0]
    keeper.process_due(utcnow() + timedelta(hours=2), max_gap=None)
    played = [m.input for m in log(service, uid) if m.actor == "timeout" and m.seat == late]
    assert searched and played == [choice for choice, _ in searched]
    assert all(open_writes == 0 for _, open_writes in searched)


# ---------------------------------------------------------------------- the level everywhere


def test_the_api_refuses_a_wrong_level(api: Api) -> None:
    for seat, words in (({"bot": True, "level": "genius"}, "easy, normal or strong"),
                        ({"email": "bo@example.com", "level": "strong"}, "only a computer")):
        response = api.client.post("/api/games", json={"seats": [
            {"email": "ann@example.com"}, seat, {"bot": True}]})
        assert response.status_code == 400 and words in response.get_json()["error"]
    schemas = api.client.get("/api/openapi.json").get_json()["components"]["schemas"]
    (seat_in,) = [s for s in schemas.values() if "bot" in s.get("properties", {})
                  and "email" in s["properties"]]
    level = seat_in["properties"]["level"]
    assert level["enum"] == ["easy", "normal", "strong"] and "Easy when none" in level[
        "description"]


def test_a_level_missing_is_easy_and_fill_with_bots_takes_one(service: GameService) -> None:
    created = service.create_game(seats=[{"bot": True}, {"email": "ann@example.com"},
                                         {"email": "ben@example.com"}], seed=SEED)
    service.start(created["game"], created["creator_token"], fill_with_bots=True,
                  bot_level="normal")
    assert seat_levels(service, created["game"]) == ["easy", "normal", "normal"]


def test_export_and_import_keep_the_level(service: GameService) -> None:
    uid, _ = new_game(service, [HUMAN, STRONG, NORMAL])
    exported = service.export(uid)
    assert [s["level"] for s in exported["seats"]] == ["easy", "strong", "normal"]
    imported = service.import_game(exported)["game"]
    assert seat_levels(service, imported) == [None, "strong", "normal"]
    for seat in exported["seats"]:  # an export made before levels
        del seat["level"]
    older = service.import_game(exported)["game"]
    assert seat_levels(service, older) == [None, "easy", "easy"]


def test_the_new_game_page_offers_a_level_per_computer_seat(api: Api) -> None:
    client = browser(api)
    page = client.get("/new")
    for i in range(6):
        assert f'<select name="seat{i}_level">' in page.text
    assert 'value="strong"' in page.text
    uid, _ = create_through_pages(api, client, seat2_level="strong")
    assert seat_levels(api.service, uid) == [None, None, "strong"]
    polish = client.get("/new?lang=pl")
    assert "Poziom komputera" in polish.text and "silny" in polish.text


def test_the_cli_names_levels(migrated_database_url: str) -> None:
    env = base_env(migrated_database_url)
    result = CliRunner().invoke(titanpost_main, [
        "admin", "new-game", "--seat", "ann@example.org", "--seat", "bot=strong",
        "--bot", "normal", "--bot", "--json"], env=env, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    uid = json.loads(result.output)["game"]
    svc = make_service(migrated_database_url)
    try:
        with svc.session() as s:
            game = s.exec(select(Game).where(Game.uid == uid)).one()
            seats = s.exec(select(Seat).where(Seat.game_id == game.id)
                           .order_by(col(Seat.position))).all()
            assert [(x.is_bot, x.bot_level) for x in seats] == [
                (False, "easy"), (True, "strong"), (True, "normal"), (True, "easy")]
    finally:
        svc.engine.dispose()
    listed = CliRunner().invoke(titanpost_main, ["admin", "games"], env=env)
    assert "computer (strong)" in listed.output and "computer (normal)" in listed.output
    wrong = CliRunner().invoke(titanpost_main, [
        "admin", "new-game", "--seat", "ann@example.org", "--seat", "bot=genius", "--bot"],
        env=env)
    assert wrong.exit_code != 0 and "easy, normal, strong" in wrong.output



def test_admin_tick_plays_the_due_turns_and_serve_looks_every_second(
        migrated_database_url: str) -> None:
    from apscheduler.schedulers.background import BackgroundScheduler

    from app.features.clock.scheduler import Jobs, add_jobs

    svc = make_service(migrated_database_url)
    try:
        uid, tokens = new_game(svc, [HUMAN, STRONG, {"bot": True}])
        humans_until_bot(svc, uid, set(tokens))
        head = len(log(svc, uid))
        result = CliRunner().invoke(titanpost_main, ["admin", "tick"],
                                    env=base_env(migrated_database_url), catch_exceptions=False)
        assert result.exit_code == 0 and "computer moves" in result.output, result.output
        assert log(svc, uid)[head].actor == "computer"
        scheduler = BackgroundScheduler(timezone="UTC")
        add_jobs(scheduler, Jobs(svc))
        (bots,) = [job for job in scheduler.get_jobs() if job.id == "bots"]
        assert bots.trigger.interval == timedelta(seconds=1)
    finally:
        svc.engine.dispose()


def test_a_paused_game_keeps_its_turn_until_resumed(service: GameService) -> None:
    created = service.create_game(seats=[HUMAN, STRONG, {"bot": True}], seed=SEED)
    token = service.accept(created["invitations"][0]["invite_token"])["api_token"]
    assert token
    uid = created["game"]
    service.start(uid, created["creator_token"])
    humans_until_bot(service, uid, {0})
    service.pause(uid, created["creator_token"], reason="dinner")
    assert botturns.run_due(service, "worker-a").claimed == 0
    service.resume(uid, created["creator_token"])
    assert botturns.run_due(service, "worker-a").played >= 1


def test_the_setup_page_fills_seats_at_a_level(api: Api) -> None:
    creator = browser(api)
    uid, html = create_through_pages(api, creator)
    assert 'name="bot_level"' in html
    token = csrf(creator, f"/games/{uid}/setup")
    started = creator.post(f"/games/{uid}/start", data={
        "csrf_token": token, "fill_with_bots": "1", "bot_level": "normal"})
    assert started.status_code == 303
    assert seat_levels(api.service, uid) == ["normal", "normal", "easy"]
    page = creator.get(f"/games/{uid}")
    assert "Computer (normal)" in page.text and "Computer (easy)" in page.text


def test_the_worker_waits_while_a_takeback_is_asked(service: GameService) -> None:
    """A takeback asked while a strong seat owes the decision: the worker does not move
    (which would lapse the request) until the others have answered. A Great Race: a crew's
    sequence can end with nothing drawn, where a Titan Race turn ends with the next roll."""
    from app.features.takeback.takebacks import PENDING
    from app.features.takeback.takebacks import install as install_takebacks
    from app.service import PENDING_TAKEBACK, ServiceError

    assert PENDING_TAKEBACK == PENDING
    takebacks = install_takebacks(service)
    uid, tokens = new_game(service, [HUMAN, {"email": "ben@example.com"}, STRONG],
                           rules_name="great-race")
    for _ in range(40):
        humans_until_bot(service, uid, set(tokens))
        mover = next((m.seat for m in reversed(log(service, uid)) if m.actor == "player"), None)
        try:
            if mover is None:
                raise ServiceError("no move of a player yet")
            asked = takebacks.ask(uid, mover)["takeback"]
        except ServiceError:  # chance came out since that move: try a later one
            assert botturns.run_due(service, "worker-a").played >= 1
            continue
        head = len(log(service, uid))
        assert botturns.run_due(service, "worker-a").claimed == 0
        assert len(log(service, uid)) == head
        takebacks.answer(uid, asked["voters"][0], None, False)
        assert botturns.run_due(service, "worker-a").played >= 1
        return
    pytest.fail("no takeable move came in 40 turns of this deal")


def test_admin_seat_hands_a_seat_to_the_computer_at_a_level(migrated_database_url: str) -> None:
    svc = make_service(migrated_database_url)
    try:
        uid, _ = new_game(svc, [HUMAN, {"email": "ben@example.com"}, {"email": "cy@example.com"}])
        to_act = svc.state(uid, None)["game"]["to_act"][0]
        result = CliRunner().invoke(titanpost_main, [
            "admin", "seat", uid, str(to_act + 1), "--computer", "--level", "strong"],
            env=base_env(migrated_database_url), catch_exceptions=False)
        assert result.exit_code == 0, result.output
        assert seat_levels(svc, uid)[to_act] == "strong"
        assert [(t.seat, t.level) for t in turns(svc, uid, open_only=True)] == [
            (to_act, "strong")]
        assert botturns.run_due(svc, "worker-a").played >= 1
    finally:
        svc.engine.dispose()


@pytest.mark.parametrize("game", ["titan-race", "great-race"])
def test_the_worker_answers_no_sooner_than_the_levels_time(
        service: GameService, game: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """However quickly a search ends (one option to look at ends it at once), the computer's
    answer is appended no sooner than its level's time after the worker took the turn: how
    long a computer seat takes tells nothing of its options."""
    from dataclasses import replace

    from app.games.greatrace.engine import search as great_search
    from app.games.titanrace.engine import search as titan_search

    for module in (titan_search, great_search):
        monkeypatch.setitem(module.BUDGETS, "strong", replace(
            module.BUDGETS["strong"], iterations=1, seconds=0.4))
    assert ruleset(game).think_seconds("strong") == pytest.approx(0.4)
    assert ruleset(game).think_seconds("easy") == 0.0
    uid, tokens = new_game(service, [HUMAN, STRONG, {"bot": True}], rules_name=game)
    humans_until_bot(service, uid, set(tokens))
    report = botturns.run_due(service, "worker-a")
    assert report.played >= 1 and all(seconds < 0.4 for seconds in report.seconds)
    with service.session() as s:
        game_id = s.exec(select(Game.id).where(Game.uid == uid)).one()
        turn = s.exec(select(BotTurn).where(BotTurn.game_id == game_id, BotTurn.seat == 1)
                      .order_by(col(BotTurn.id))).first()
        assert turn is not None and turn.claimed_at is not None
        answered = s.exec(select(Move).where(
            Move.game_id == game_id, Move.actor == "computer", Move.seq > turn.decision_seq)
            .order_by(col(Move.seq))).first()
        assert answered is not None
    assert (answered.created_at - turn.claimed_at).total_seconds() >= 0.4
