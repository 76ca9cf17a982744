"""Takebacks (app/features/takeback/takebacks.py) on SQLite and PostgreSQL: asked, agreed by every
other human seat, applied as a logged rollback; refused with a reason where chance or hidden
information came out, where the move is not the asker's last, where there is nothing to take back;
refused by a player or expired by the clock with the asker told; lapsed by any move. And the cheats:
no answer for another seat, no used link again, no takeback after a die was seen; through the
service, the signed link, the game page, the API and the command line."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import pytest
from werkzeug.serving import make_server

from app import create_app
from app.core.config import Settings
from app.core.models import OutboxMail
from app.features.takeback.takebacks import (
    ALREADY,
    ANSWERED,
    HIDDEN,
    NOT_LAST,
    NOT_VOTER,
    NOTHING,
    install,
)
from app.games import ruleset
from app.mail.render import MailRenderer
from app.service import BadRequest, Forbidden, GameMovedOn, GameService, NotFound
from tests.apifixtures import SEED, Api, base_env, bearer, clock
from tests.netutil import serve_in_thread
from tests.test_cli_player import Cli
from tests.test_pages import browser, csrf, give_seat

pytest_plugins = ["tests.apifixtures"]



def new_game(svc: GameService, seats: list[dict[str, Any]] | None = None,
             rules_name: str = "titan-race") -> str:
    seats = seats or [{"email": f"h{i}@example.com", "name": f"H{i}"} for i in range(3)]
    created = svc.create_game(seats=seats, seed=SEED, rules_name=rules_name)
    for inv in created["invitations"]:
        svc.accept(inv["invite_token"])
    svc.start(created["game"], created["creator_token"])
    uid: str = created["game"]
    return uid


@dataclass(frozen=True)
class Opening:
    """The start of a three-player game: who plays first, the others in their order, and the
    legal options of the first decision."""

    first: int
    others: list[int]
    options: list[str]

    def email(self, position: int) -> str:
        return f"h{position}@example.com"


def opening(svc: GameService, uid: str) -> Opening:
    """Who the deal seats first (the tests follow whatever a seed deals)."""
    (first,) = svc.state(uid, None)["game"]["to_act"]
    return Opening(first, [p for p in range(3) if p != first],
                   list(svc.options(uid, first)["options"]))


def play_first(svc: GameService, uid: str) -> tuple[int, str]:
    """The seat to act answers with its first legal option: (that seat, its input)."""
    (position,) = svc.state(uid, None)["game"]["to_act"]
    text = svc.options(uid, position)["options"][0]
    play(svc, uid, text)
    return position, text


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
    start = opening(svc, uid)
    first, (one, two) = start.first, start.others
    play(svc, uid, start.options[0])
    asked = install(svc).ask(uid, first)["takeback"]
    assert (asked["status"], asked["voters"], asked["move_seq"]) == ("pending", [one, two], 1)
    assert [to for to, _ in mails(api, "takeback")] == [start.email(one), start.email(two)]
    assert install(svc).answer(uid, one, None, True)["takeback"]["status"] == "pending"
    assert log(svc, uid) == [(1, "move", first, "player", start.options[0])]

    done = install(svc).answer(uid, two, asked["id"], True)["takeback"]
    assert (done["status"], done["rollback_seq"]) == ("agreed", 2)
    assert log(svc, uid) == [(1, "move", first, "player", start.options[0]),
                             (2, "rollback", first, "player", "rollback 0")]
    assert svc.verify(uid) == []
    # the game goes on from the state before the move: the same choice is open again
    assert svc.options(uid, first)["options"] == start.options
    assert svc.submit(uid, first, 2, start.options[1])["applied"]
    told = mails(api, "rollback")
    assert sorted(to for to, _ in told) == [f"h{i}@example.com" for i in range(3)]
    assert {p["takeback"] for _, p in told} == {f"H{first}"}
    assert install(svc).pending(uid) is None
    assert play_first(svc, uid)[0] == first  # (the turn goes on)
    install(svc).ask(uid, first)  # the new last move, which a takeback of its own may undo
    for position in (one, two):
        install(svc).answer(uid, position, None, True)
    with pytest.raises(BadRequest) as twice:  # the move before it was taken back already
        install(svc).ask(uid, first)
    assert twice.value.words == (NOTHING, {})


def test_no_takeback_once_chance_has_spoken(api: Api) -> None:
    """A move that rolled a die (an ``end`` rerolling one, a card drawn): taking it back
    would let its player choose again knowing the dice (the seeded source would roll the
    same), so it is refused."""
    svc = api.service
    uid = new_game(svc)
    position, _ = play_first(svc, uid)
    while svc.export(uid)["moves"][-1]["outcomes"] == [[]]:
        position, _ = play_first(svc, uid)
    played = len(log(svc, uid))
    with pytest.raises(BadRequest) as refused:
        install(svc).ask(uid, position)
    assert refused.value.words[0] == HIDDEN
    said = {lang: refused.value.say(lang) for lang in ("en", "pl")}
    assert "(a die rolled or a card drawn)" in said["en"], said
    assert "(rzucono kością lub dobrano kartę)" in said["pl"], said
    assert not re.search(r"tile|plan|kafel", " ".join(said.values()))
    assert takebacks(api) == [] and len(log(svc, uid)) == played


def test_refusals_say_why_and_change_nothing(api: Api) -> None:
    svc = api.service
    uid = new_game(svc)
    tb = install(svc)
    with pytest.raises(BadRequest) as nothing:
        tb.ask(uid, 0)
    assert nothing.value.words == (NOTHING, {})
    first = opening(svc, uid).first
    while svc.state(uid, None)["game"]["to_act"] == [first]:  # the first seat's turn
        play_first(svc, uid)
    after, _ = play_first(svc, uid)  # then the next seat's first decision
    played = len(log(svc, uid))
    with pytest.raises(BadRequest) as not_last:
        tb.ask(uid, first)
    assert not_last.value.words == (NOT_LAST, {"player": f"H{after}"})
    tb.ask(uid, after)
    with pytest.raises(BadRequest) as again:
        tb.ask(uid, after)
    assert again.value.words == (ALREADY, {})
    assert takebacks(api) == [(1, after, played, "pending")]
    assert len(log(svc, uid)) == played


def test_a_refusal_and_an_expiry_are_told_to_the_asker(api: Api) -> None:
    svc = api.service
    uid = new_game(svc)
    start = opening(svc, uid)
    first, (one, two) = start.first, start.others
    play(svc, uid, start.options[0])
    tb = install(svc)
    tb.ask(uid, first)
    assert tb.answer(uid, one, None, False)["takeback"]["status"] == "refused"
    assert mails(api, "takeback_result") == [
        (start.email(first), {"takeback": 1, "status": "refused", "move": 1, "by": f"H{one}"})]
    with pytest.raises(GameMovedOn):  # closed: the other seat's answer comes too late
        tb.answer(uid, two, 1, True)
    assert len(log(svc, uid)) == 1

    due = datetime.fromisoformat(tb.ask(uid, first)["takeback"]["due_at"])
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
    start = opening(svc, uid)
    play(svc, uid, start.options[0])
    tb = install(svc)
    tb.ask(uid, start.first)
    position, text = play_first(svc, uid)  # the game does not wait for the answers
    assert position == start.first
    assert tb.pending(uid) is None
    with pytest.raises(GameMovedOn):
        tb.answer(uid, start.others[0], 1, True)
    assert takebacks(api) == [(1, start.first, 1, "lapsed")]
    assert tb.ask(uid, start.first)["takeback"]["move_seq"] == 2  # the new last move
    assert log(svc, uid)[-1] == (2, "move", start.first, "player", text)


def test_a_seat_answers_once_and_for_itself_only(api: Api) -> None:
    svc = api.service
    uid = new_game(svc)
    start = opening(svc, uid)
    first, (one, two) = start.first, start.others
    play(svc, uid, start.options[0])
    tb = install(svc)
    tb.ask(uid, first)
    with pytest.raises(Forbidden) as asker:
        tb.answer(uid, first, None, True)
    assert asker.value.words == (NOT_VOTER, {})
    tb.answer(uid, one, None, True)
    with pytest.raises(BadRequest) as twice:
        tb.answer(uid, one, None, False)
    assert twice.value.words == (ANSWERED, {})
    with pytest.raises(NotFound):
        tb.answer(uid, two, 99, True)
    assert takebacks(api) == [(1, first, 1, "pending")]


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
    assert play_first(svc, alone)[0] == 0  # (after the computer's seats played theirs)
    done = install(svc).ask(alone, 0)["takeback"]
    assert (done["voters"], done["status"]) == ([], "agreed")  # nobody else to ask


def test_the_great_race_refuses_after_a_reveal_or_a_draw(api: Api) -> None:
    svc = api.service
    uid = new_game(svc, [{"email": f"g{i}@example.com", "name": f"G{i}"} for i in range(2)],
                   rules_name="great-race")
    tb = install(svc)
    first, _ = play_first(svc, uid)
    tb.ask(uid, first)
    assert tb.answer(uid, 1 - first, None, True)["takeback"]["status"] == "agreed"
    while not svc.seals_answers(uid):  # the market, up to the sealed plans
        play_first(svc, uid)
    seq = svc.state(uid, None)["seq"]
    planners = svc.state(uid, None)["game"]["to_act"]
    for position in planners:  # the last plan: all revealed
        svc.submit(uid, position, seq, svc.options(uid, position)["options"][0])
    with pytest.raises(BadRequest) as revealed:
        tb.ask(uid, planners[0])
    assert revealed.value.words[0] == HIDDEN
    said = {lang: revealed.value.say(lang) for lang in ("en", "pl")}
    assert "(a tile or card drawn, a plan revealed or another crew's answer from its cards)" \
        in said["en"], said
    assert "odkryto plan" in said["pl"], said
    assert not re.search(r"\bdie\b|kość|kości", " ".join(said.values()))


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
    start = opening(svc, uid)
    first, (one, two) = start.first, start.others
    play(svc, uid, start.options[0])
    install(svc).ask(uid, first)
    ann, ben = browser(api), browser(api)
    path = link_path(api, start.email(one))
    page = ann.get(path)
    assert page.status_code == 200 and start.options[0] in page.text
    assert page.headers["Cache-Control"] == "no-store"
    assert takebacks(api) == [(1, first, 1, "pending")]  # a GET changes nothing

    give_seat(ben, uid, two)  # Ben's browser cannot use Ann's link
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
    assert takebacks(api) == [(1, first, 1, "refused")]
    assert len(log(svc, uid)) == 1


def test_the_game_page_asks_and_answers(api: Api) -> None:
    svc = api.service
    uid = new_game(svc)
    start = opening(svc, uid)
    play(svc, uid, start.options[0])
    asker, ann, ben = browser(api), browser(api), browser(api)
    for client, position in zip((asker, ann, ben), (start.first, *start.others), strict=True):
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
    assert takebacks(api) == [(1, start.first, 1, "agreed")]
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
    start = opening(svc, uid)
    first, (one, two) = start.first, start.others
    play(svc, uid, start.options[0])
    tb = install(svc)
    tb.ask(uid, first)
    tb.answer(uid, one, None, False)
    tb.ask(uid, first)
    links = [p["link"] for to, p in mails(api, "takeback") if to == start.email(two)]
    page = browser(api).get("/t/" + links[-1].rsplit("/t/", 1)[1])
    assert page.status_code == 200 and "Zgadzam się" in page.text
    used = browser(api).get("/t/" + links[0].rsplit("/t/", 1)[1])  # the refused request's
    assert used.status_code == 409 and "nie czeka już na odpowiedź" in used.text
    tb.answer(uid, one, None, True)
    tb.answer(uid, two, None, True)
    renderer = MailRenderer(svc)
    with svc.session() as s:
        from sqlmodel import col, select

        rows = s.exec(select(OutboxMail).where(col(OutboxMail.kind).in_(
            ("takeback", "takeback_result", "rollback"))).order_by(col(OutboxMail.id))).all()
        rendered = {row.kind: renderer.render(row, always=True) for row in rows}
    assert set(rendered) == {"takeback", "takeback_result", "rollback"}
    assert "/t/" in rendered["takeback"].text
    assert f"H{first}" in rendered["rollback"].text


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
