"""Takebacks (app/takeback.py) on SQLite and PostgreSQL: asked, agreed by every other human
seat, applied as a logged rollback; refused with a reason where chance or hidden information
came out, where the move is not the asker's last, where there is nothing to take back; refused
by a player or expired by the clock with the asker told; lapsed by any move. And the cheats: no
answer for another seat, no used link again, no takeback after a die was seen; through the
service, the signed link, the game page, the API and the command line."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from datetime import datetime, timedelta
from typing import Any

import pytest
from werkzeug.serving import make_server

from app import create_app
from app.config import Settings
from app.games import ruleset
from app.mail.render import MailRenderer
from app.models import OutboxMail
from app.service import BadRequest, Forbidden, GameMovedOn, GameService, NotFound
from app.takeback import ALREADY, ANSWERED, HIDDEN, NOT_LAST, NOT_VOTER, NOTHING, install
from tests.apifixtures import SEED, Api, base_env, bearer, clock
from tests.netutil import serve_in_thread
from tests.test_cli_player import Cli
from tests.test_pages import browser, csrf, give_seat

pytest_plugins = ["tests.apifixtures"]

TITAN_OPENING = ["pick yellow", "start A1", "move LLL", "end", "pick purple", "start A1",
                 "move SS", "end"]
"""The first legal option of each decision of a three-player game dealt from SEED: seat 3
plays four inputs, then seat 1; seat 1's ``end`` rerolls a die (a random outcome)."""


def new_game(svc: GameService, seats: list[dict[str, Any]] | None = None,
             rules_name: str = "titan-race") -> str:
    seats = seats or [{"email": f"h{i}@example.com", "name": f"H{i}"} for i in range(3)]
    created = svc.create_game(seats=seats, seed=SEED, rules_name=rules_name)
    for inv in created["invitations"]:
        svc.accept(inv["invite_token"])
    svc.start(created["game"], created["creator_token"])
    uid: str = created["game"]
    return uid


def play(svc: GameService, uid: str, *inputs: str) -> None:
    """Each input by the seat whose decision it is (checked against the expected option)."""
    for text in inputs:
        state = svc.state(uid, None)
        position = state["game"]["to_act"][0]
        assert text in svc.options(uid, position)["options"]
        assert svc.submit(uid, position, state["seq"], text)["applied"]


def log(svc: GameService, uid: str) -> list[tuple[Any, ...]]:
    return [(m["seq"], m["kind"], m["seat"], m["actor"], m["input"])
            for m in svc.export(uid)["moves"]]


def mails(api: Api, kind: str) -> list[tuple[str, dict[str, Any]]]:
    rows = api.rows("SELECT recipient, payload FROM outbox WHERE kind = :kind ORDER BY id",
                    kind=kind)
    return [(to, json.loads(p) if isinstance(p, str) else p) for to, p in rows]


def takebacks(api: Api) -> list[tuple[Any, ...]]:
    return api.rows("SELECT id, seat, move_seq, status FROM takebacks ORDER BY id")


def link_path(api: Api, recipient: str) -> str:
    link = next(p["link"] for to, p in mails(api, "takeback") if to == recipient)
    return "/t/" + link.rsplit("/t/", 1)[1]


# ---------------------------------------------------------------------- the service


def test_every_other_player_agrees_and_the_move_is_taken_back(api: Api) -> None:
    svc = api.service
    uid = new_game(svc)
    play(svc, uid, "pick yellow")
    asked = install(svc).ask(uid, 2)["takeback"]
    assert (asked["status"], asked["voters"], asked["move_seq"]) == ("pending", [0, 1], 1)
    assert [to for to, _ in mails(api, "takeback")] == ["h0@example.com", "h1@example.com"]
    assert install(svc).answer(uid, 0, None, True)["takeback"]["status"] == "pending"
    assert log(svc, uid) == [(1, "move", 2, "player", "pick yellow")]

    done = install(svc).answer(uid, 1, asked["id"], True)["takeback"]
    assert (done["status"], done["rollback_seq"]) == ("agreed", 2)
    assert log(svc, uid) == [(1, "move", 2, "player", "pick yellow"),
                             (2, "rollback", 2, "player", "rollback 0")]
    assert svc.verify(uid) == []
    # the game goes on from the state before the move: the same choice is open again
    assert svc.options(uid, 2)["options"] == ["pick yellow", "pick purple"]
    assert svc.submit(uid, 2, 2, "pick purple")["applied"]
    told = mails(api, "rollback")
    assert sorted(to for to, _ in told) == [f"h{i}@example.com" for i in range(3)]
    assert {p["takeback"] for _, p in told} == {"H2"}
    assert install(svc).pending(uid) is None
    svc.submit(uid, 2, 3, "start A1")
    install(svc).ask(uid, 2)  # the new last move, which a takeback of its own may undo
    for position in (0, 1):
        install(svc).answer(uid, position, None, True)
    with pytest.raises(BadRequest) as twice:  # the move before it was taken back already
        install(svc).ask(uid, 2)
    assert twice.value.words == (NOTHING, {})


def test_no_takeback_once_chance_has_spoken(api: Api) -> None:
    """Seat 1's ``end`` rerolled a die: taking it back would let its player choose again
    knowing the dice (the seeded source would roll the same), so it is refused."""
    svc = api.service
    uid = new_game(svc)
    play(svc, uid, *TITAN_OPENING)
    assert svc.export(uid)["moves"][-1]["outcomes"] != [[]]
    with pytest.raises(BadRequest) as refused:
        install(svc).ask(uid, 0)
    assert refused.value.words == (HIDDEN, {})
    assert takebacks(api) == [] and len(log(svc, uid)) == 8


def test_refusals_say_why_and_change_nothing(api: Api) -> None:
    svc = api.service
    uid = new_game(svc)
    tb = install(svc)
    with pytest.raises(BadRequest) as nothing:
        tb.ask(uid, 0)
    assert nothing.value.words == (NOTHING, {})
    play(svc, uid, *TITAN_OPENING[:5])  # seat 3's turn, then seat 1's pick
    with pytest.raises(BadRequest) as not_last:
        tb.ask(uid, 2)
    assert not_last.value.words == (NOT_LAST, {"player": "H0"})
    tb.ask(uid, 0)
    with pytest.raises(BadRequest) as again:
        tb.ask(uid, 0)
    assert again.value.words == (ALREADY, {})
    assert takebacks(api) == [(1, 0, 5, "pending")]
    assert len(log(svc, uid)) == 5


def test_a_refusal_and_an_expiry_are_told_to_the_asker(api: Api) -> None:
    svc = api.service
    uid = new_game(svc)
    play(svc, uid, "pick yellow")
    tb = install(svc)
    tb.ask(uid, 2)
    assert tb.answer(uid, 0, None, False)["takeback"]["status"] == "refused"
    assert mails(api, "takeback_result") == [
        ("h2@example.com", {"takeback": 1, "status": "refused", "move": 1, "by": "H0"})]
    with pytest.raises(GameMovedOn):  # closed: the other seat's answer comes too late
        tb.answer(uid, 1, 1, True)
    assert len(log(svc, uid)) == 1

    due = datetime.fromisoformat(tb.ask(uid, 2)["takeback"]["due_at"])
    report = clock(api).process_due(now=due - timedelta(minutes=1), max_gap=None)
    assert takebacks(api)[-1][3] == "pending", report.summary()
    clock(api).process_due(now=due + timedelta(minutes=1), max_gap=None)
    assert takebacks(api)[-1][3] == "expired"
    assert [p["status"] for _, p in mails(api, "takeback_result")] == ["refused", "expired"]
    assert api.scalar("SELECT result FROM deadlines WHERE kind = 'takeback-2'") == "expired"
    assert len(log(svc, uid)) == 1


def test_any_move_lapses_the_request(api: Api) -> None:
    svc = api.service
    uid = new_game(svc)
    play(svc, uid, "pick yellow")
    tb = install(svc)
    tb.ask(uid, 2)
    play(svc, uid, "start A1")  # the game does not wait for the answers
    assert tb.pending(uid) is None
    with pytest.raises(GameMovedOn):
        tb.answer(uid, 0, 1, True)
    assert takebacks(api) == [(1, 2, 1, "lapsed")]
    assert tb.ask(uid, 2)["takeback"]["move_seq"] == 2  # the new last move
    assert log(svc, uid)[-1] == (2, "move", 2, "player", "start A1")


def test_a_seat_answers_once_and_for_itself_only(api: Api) -> None:
    svc = api.service
    uid = new_game(svc)
    play(svc, uid, "pick yellow")
    tb = install(svc)
    tb.ask(uid, 2)
    with pytest.raises(Forbidden) as asker:
        tb.answer(uid, 2, None, True)
    assert asker.value.words == (NOT_VOTER, {})
    tb.answer(uid, 0, None, True)
    with pytest.raises(BadRequest) as twice:
        tb.answer(uid, 0, None, False)
    assert twice.value.words == (ANSWERED, {})
    with pytest.raises(NotFound):
        tb.answer(uid, 1, 99, True)
    assert takebacks(api) == [(1, 2, 1, "pending")]


def test_computer_seats_do_not_vote(api: Api) -> None:
    svc = api.service
    uid = new_game(svc, [{"email": "ann@example.com", "name": "Ann"},
                         {"email": "ben@example.com", "name": "Ben"}, {"bot": True}])
    state = svc.state(uid, None)
    position = state["game"]["to_act"][0]
    svc.submit(uid, position, state["seq"], svc.options(uid, position)["options"][0])
    asked = install(svc).ask(uid, position)["takeback"]
    assert asked["voters"] == [1 - position]

    alone = new_game(svc, [{"email": "cy@example.com", "name": "Cy"}, {"bot": True},
                           {"bot": True}])
    play(svc, alone, "pick purple")  # (after the computer's seat 3 played its turn)
    done = install(svc).ask(alone, 0)["takeback"]
    assert (done["voters"], done["status"]) == ([], "agreed")  # nobody else to ask


def test_the_great_race_refuses_after_a_reveal_or_a_draw(api: Api) -> None:
    svc = api.service
    uid = new_game(svc, [{"email": f"g{i}@example.com", "name": f"G{i}"} for i in range(2)],
                   rules_name="great-race")
    tb = install(svc)
    play(svc, uid, "take driver")
    tb.ask(uid, 1)
    assert tb.answer(uid, 0, None, True)["takeback"]["status"] == "agreed"
    play(svc, uid, "take driver", "take repairman")
    seq = svc.state(uid, None)["seq"]
    svc.submit(uid, 0, seq, "plan italian F5")
    svc.submit(uid, 1, seq, "plan english F5")  # the last plan: both revealed
    with pytest.raises(BadRequest) as revealed:
        tb.ask(uid, 0)
    assert revealed.value.words == (HIDDEN, {})


def test_each_game_says_what_reveals_hidden_information() -> None:
    """The game-neutral part (the random source's draws) and each game's own: Titan Race's
    face-down deck, The Great Race's bag and deck (pre-shuffled: a draw takes no new chance)
    and its sealed plans."""
    great = ruleset("great-race")
    state, _ = great.start(variant="standard", setup=great.default_setup("standard"),
                           seats=_seats(2), dealing=_dealing())
    game = great.load(state)
    before = great.load(great.dump(game))
    assert not great.reveals_hidden(before, game)
    for text in ("take driver", "take repairman"):
        great.apply(game, text)
    planning = great.load(great.dump(game))
    great.apply(game, "plan italian F5; plan english F5")
    assert great.reveals_hidden(planning, game)  # the plans revealed
    drawn = great.load(great.dump(game))
    drawn.state.bag.pop()
    assert great.dump(drawn)["rng"] == great.dump(game)["rng"]
    assert great.reveals_hidden(game, drawn)
    titan = ruleset("titan-race")
    state, _ = titan.start(variant="standard", setup=titan.default_setup("standard"),
                           seats=_seats(3), dealing=_dealing())
    race = titan.load(state)
    start = titan.load(titan.dump(race))
    titan.apply(race, "pick yellow")
    assert not titan.reveals_hidden(start, race)
    if race.state.deck:
        dealt = titan.load(titan.dump(race))
        dealt.state.deck.pop()
        assert titan.reveals_hidden(race, dealt)


# ---------------------------------------------------------------------- link, page, API


def test_the_signed_link_answers_once_for_its_own_seat(api: Api) -> None:
    svc = api.service
    uid = new_game(svc)
    play(svc, uid, "pick yellow")
    install(svc).ask(uid, 2)
    ann, ben = browser(api), browser(api)
    path = link_path(api, "h0@example.com")
    page = ann.get(path)
    assert page.status_code == 200 and "pick yellow" in page.text
    assert page.headers["Cache-Control"] == "no-store"
    assert takebacks(api) == [(1, 2, 1, "pending")]  # a GET changes nothing

    give_seat(ben, uid, 1)  # Ben's browser cannot use Ann's link
    refused = ben.post(path, data={"csrf_token": csrf(ben, f"/games/{uid}"),
                                   "answer": "agree"})
    assert refused.status_code == 403
    forged = ann.get(path[:-3] + ("AAA" if not path.endswith("AAA") else "BBB"))
    assert forged.status_code == 403
    assert api.rows("SELECT answers FROM takebacks")[0][0] in ({}, "{}")

    assert ann.post(path, data={"answer": "agree"}).status_code == 400  # no CSRF token
    token = re.search(r'name="csrf_token" value="([^"]+)"', page.text)
    assert token is not None
    answered = ann.post(path, data={"csrf_token": token.group(1), "answer": "refuse"})
    assert answered.status_code == 303
    again = ann.post(path, data={"csrf_token": token.group(1), "answer": "agree"})
    assert again.status_code in (400, 409)
    assert takebacks(api) == [(1, 2, 1, "refused")]
    assert len(log(svc, uid)) == 1


def test_the_game_page_asks_and_answers(api: Api) -> None:
    svc = api.service
    uid = new_game(svc)
    play(svc, uid, "pick yellow")
    asker, ann, ben = browser(api), browser(api), browser(api)
    for client, position in ((asker, 2), (ann, 0), (ben, 1)):
        give_seat(client, uid, position)
    assert "Take back my last move" in asker.get(f"/games/{uid}").text
    asked = asker.post(f"/games/{uid}/takeback",
                       data={"csrf_token": csrf(asker, f"/games/{uid}")})
    assert asked.status_code == 303
    for client in (ann, ben):
        page = client.get(f"/games/{uid}").text
        assert 'value="agree"' in page
        answered = client.post(f"/games/{uid}/takeback/answer",
                               data={"csrf_token": csrf(client, f"/games/{uid}"),
                                     "answer": "agree"})
        assert answered.status_code == 303
    assert takebacks(api) == [(1, 2, 1, "agreed")]
    assert log(svc, uid)[-1][1] == "rollback"
    assert "Taken back to the position after move 0" in asker.get(f"/games/{uid}/log").text


def test_the_api_asks_answers_and_refuses_others(api: Api) -> None:
    table = api.new_started(3)
    position, opts = api.actor(table)
    status, _ = api.submit(table, position, opts["seq"], opts["options"][0])
    assert status == 200
    others = [p for p in range(3) if p != position]
    refused = api.client.post(f"/api/games/{table.uid}/takeback", headers=table.seat(others[0]))
    assert refused.status_code == 400 and "no move" in refused.get_json()["error"]
    asked = api.client.post(f"/api/games/{table.uid}/takeback", headers=table.seat(position))
    assert asked.status_code == 200, asked.get_json()
    shown = api.client.get(f"/api/games/{table.uid}/takeback").get_json()["takeback"]
    assert shown["waiting_for"] == others
    bad = api.client.post(f"/api/games/{table.uid}/takeback/answer", json={"agree": "yes"},
                          headers=table.seat(others[0]))
    assert bad.status_code == 400
    own = api.client.post(f"/api/games/{table.uid}/takeback/answer", json={"agree": True},
                          headers=table.seat(position))
    assert own.status_code == 403
    stranger = api.client.post(f"/api/games/{table.uid}/takeback/answer",
                               json={"agree": True}, headers=bearer("not-a-token"))
    assert stranger.status_code == 401
    for other in others:
        answered = api.client.post(f"/api/games/{table.uid}/takeback/answer",
                                   json={"agree": True}, headers=table.seat(other))
        assert answered.status_code == 200, answered.get_json()
    assert answered.get_json()["takeback"]["status"] == "agreed"
    assert api.client.get(f"/api/games/{table.uid}/takeback").get_json() == {"takeback": None}


def test_the_mails_render_in_polish(api: Api) -> None:
    svc = api.service
    uid = new_game(svc, [{"email": f"h{i}@example.com", "name": f"H{i}", "language": "pl"}
                         for i in range(3)])
    play(svc, uid, "pick yellow")
    tb = install(svc)
    tb.ask(uid, 2)
    tb.answer(uid, 0, None, False)
    tb.ask(uid, 2)
    links = [p["link"] for to, p in mails(api, "takeback") if to == "h1@example.com"]
    page = browser(api).get("/t/" + links[-1].rsplit("/t/", 1)[1])
    assert page.status_code == 200 and "Zgadzam się" in page.text
    used = browser(api).get("/t/" + links[0].rsplit("/t/", 1)[1])  # the refused request's
    assert used.status_code == 409 and "nie czeka już na odpowiedź" in used.text
    tb.answer(uid, 0, None, True)
    tb.answer(uid, 1, None, True)
    renderer = MailRenderer(svc)
    with svc.session() as s:
        from sqlmodel import col, select

        rows = s.exec(select(OutboxMail).where(col(OutboxMail.kind).in_(
            ("takeback", "takeback_result", "rollback"))).order_by(col(OutboxMail.id))).all()
        rendered = {row.kind: renderer.render(row, always=True) for row in rows}
    assert set(rendered) == {"takeback", "takeback_result", "rollback"}
    assert "/t/" in rendered["takeback"].text
    assert "H2" in rendered["rollback"].text


# ---------------------------------------------------------------------- the command line


@pytest.fixture
def site(migrated_database_url: str) -> Iterator[tuple[str, Any]]:
    app = create_app(Settings.from_env(base_env(migrated_database_url)))
    app.config["TESTING"] = True
    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = serve_in_thread(server, "takeback-site")
    try:
        yield f"http://127.0.0.1:{server.port}", app
    finally:
        server.shutdown()
        thread.join(timeout=10)
        app.extensions["titanpost.service"].engine.dispose()


def test_the_command_line_asks_and_answers(site: tuple[str, Any], tmp_path: Any) -> None:
    url, app = site
    svc: GameService = app.extensions["titanpost.service"]
    created = svc.create_game(seats=[{"email": f"c{i}@example.com", "name": f"C{i}"}
                                     for i in range(2)] + [{"bot": True}], seed=SEED)
    tokens = {inv["position"]: svc.accept(inv["invite_token"])["api_token"]
              for inv in created["invitations"] if inv["position"] < 2}
    uid = created["game"]
    svc.start(uid, created["creator_token"])
    state = svc.state(uid, None)
    mover = state["game"]["to_act"][0]
    svc.submit(uid, mover, state["seq"], svc.options(uid, mover)["options"][0])
    clis = {}
    for position in (0, 1):
        clis[position] = Cli(tmp_path / f"seat{position}")
        (tmp_path / f"seat{position}").mkdir()
        clis[position]("login", url, "--token", tokens[position])
    asked = clis[mover]("takeback", uid[:8])
    assert "waiting for seat" in asked.stdout and "by you" in asked.stdout
    other = 1 - mover
    assert "waiting for seat" in clis[other]("takeback", uid[:8], "--status").stdout
    refused = clis[mover]("takeback", uid[:8], "--agree", code=1)
    assert "not yours to answer" in refused.output
    assert clis[other].json("takeback", uid[:8], "--agree")["takeback"]["status"] == "agreed"


def _seats(count: int) -> list[Any]:
    from app.games.base import SeatSetup

    return [SeatSetup(position) for position in range(count)]


def _dealing() -> Any:
    from app.games.rng import Dealing

    return Dealing(seed=SEED)
