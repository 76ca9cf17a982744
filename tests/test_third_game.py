"""A third game, registered by the tests alone (Owl Dice, tests/owldice/), played from start to
end through every channel: the JSON API, the web pages (created with /new?game=owl-dice,
joined, played with the game page's form), the mails and their signed links (a link's GET shows
a confirm page, its POST plays), reply mails, and the clock; the ``titanpost`` commands and a
real browser are in tests/test_third_game_live.py. Nothing in ``app/`` names the game: whatever
it needs the neutral code reads from the registry and the game's Ruleset and GameUI (issue 37).

Each test registers the game (the ``owl_dice`` fixture) before it builds the app, and the
registry is as it was after it."""

from __future__ import annotations

import html as htmllib
import json
import re
from collections.abc import Iterator
from email.message import EmailMessage
from pathlib import Path
from typing import Any

import pytest
from flask.testing import FlaskClient

# (imported before any test registers the game: see test_the_registry_is_left_as_it_was)
import app.web.api.schemas
import app.web.pages.newgame  # noqa: F401
from app.games import GAMES
from app.mail.notify import decision_kinds
from app.web.linktokens import read_option_token
from tests.apifixtures import Api, Table, dispose, make_api
from tests.greatrace.test_mail import body, confirm_and_post, full_view, mails, reply
from tests.test_clock import Clock, S
from tests.test_clock import clock as clock  # the fixture: a service on the test database
from tests.test_mail_out import Post, Smtp, links, parts, settings_for, smtp  # noqa: F401

pytest_plugins = ["tests.apifixtures", "tests.owldice"]

OPTION = re.compile(r'<button type="submit" name="option" value="([^"]+)"')
CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')
SEQ = re.compile(r'name="seq" value="(\d+)"')


@pytest.fixture
def owl_api(owl_dice: str, migrated_database_url: str) -> Iterator[Api]:
    """The app, built with Owl Dice registered, on a fresh database of each kind."""
    made = make_api(migrated_database_url)
    yield made
    dispose(made)


@pytest.fixture
def owl_site(owl_dice: str, tmp_path: Path) -> Iterator[Api]:
    """The same on one SQLite file (the pages)."""
    from tests.dbutil import migrate

    url = f"sqlite:///{tmp_path / 'owls.db'}"
    migrate(url)
    made = make_api(url)
    yield made
    dispose(made)


def test_the_registry_is_left_as_it_was() -> None:
    """(This module imports the new-game page and the API's schemas, and asks for the decision
    mails' kinds, before any test registers the game, as a whole run's other tests do: what
    they offer must be read from the registry when asked, not when imported.)"""
    assert "owl-dice" not in GAMES
    assert not {"roll", "hoot"} & decision_kinds()


def test_its_words_are_in_no_shared_template_nor_neutral_module(owl_dice: str) -> None:
    """tests/test_neutral_words.py's check, with Owl Dice's words: its name, title, piece
    word, owls and glade are in no shared template and no module outside the games (not even
    those still pending there, nor the command line)."""
    from app.games.ui import game_ui
    from tests import test_neutral_words as neutral

    ui = game_ui(owl_dice)
    heading = ui.piece_heading.lower()
    words = {owl_dice, ui.title.lower(), heading, heading + "s", *ui.board_choices,
             *(ui.piece_name(piece, "en").lower() for piece in ui.pieces),
             *(v for v in ui.variants if v != "standard")}
    assert {"owl-dice", "owl dice", "owl", "owls", "strix", "tyto", "hollow-oak"} <= words
    pattern = re.compile(r"(?<![\w-])(" + "|".join(sorted(map(re.escape, words), key=len,
                                                            reverse=True)) + r")(?![\w-])",
                         re.IGNORECASE)
    found = [f"{path}:{number}" for path in (*neutral.SHARED_TEMPLATES, *neutral.NEUTRAL_PYTHON)
             for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
             if pattern.search(neutral.PRODUCT.sub("", line))]
    assert found == []


# ---------------------------------------------------------------------- the API


def owls_of(api: Api, table: Table) -> dict[int, str]:
    seats = api.state(table.uid, table.tokens[0])["game"]["seats"]
    return {seat["position"]: seat["titans"][0] for seat in seats}


def test_a_whole_game_through_the_api(owl_api: Api) -> None:
    api = owl_api
    # (fair dealing: no seed, the deal keyed by the server's and every seat's contributions)
    table = api.accept_all(api.create(3, game="owl-dice", circuits=["hollow-oak"], seed=None))
    api.start(table)
    state = api.state(table.uid, table.tokens[0])
    assert state["game"]["ruleset"] == "owl-dice"
    owls = owls_of(api, table)
    assert sorted(owls.values()) == sorted(state["view"]["owls"]) and len(set(owls.values())) == 3
    mine = state["view"]["owls"][owls[0]]
    assert isinstance(mine["hand"], list) and len(mine["hand"]) == 2
    assert all(state["view"]["owls"][owls[p]]["hand"] == 2 for p in (1, 2))
    rounds = 0
    for _ in range(20):
        if api.state(table.uid)["game"]["status"] == "finished":
            break
        acting = api.to_act(table.uid, table.tokens[0])
        if len(acting) == 1:
            position, opts = api.actor(table)
            assert opts["options"] == ["roll"]
            status, body = api.submit(table, position, opts["seq"], "roll")
            assert status == 200 and body["applied"], body
            continue
        # the secret hoot: sealed seat by seat, revealed as one entry when the last is in
        assert sorted(acting) == [0, 1, 2]
        rounds += 1
        rows = api.move_count(table.uid)
        seq = api.options(table, 0)["seq"]
        status, body = api.submit(table, 0, seq, "hoot 3")
        assert status == 200 and body["sealed"], body
        assert api.move_count(table.uid) == rows
        for position in (1, 2):
            other = json.dumps(api.state(table.uid, table.tokens[position]))
            assert "hoot 3" not in other and f"hoot {owls[0]} 3" not in other
            assert api.state(table.uid, table.tokens[position])["view"]["owls"][owls[0]][
                "hooted"] is True
        assert api.state(table.uid, table.tokens[0])["view"]["owls"][owls[0]]["hoot"] == 3
        status, body = api.submit(table, 0, seq, "hoot 1")
        assert status == 403, body  # a sealed hoot is final
        status, body = api.submit(table, 1, seq, f"hoot {owls[2]} 2")
        assert status in (403, 409, 422), body  # not another owl's hoot
        assert api.submit(table, 1, seq, "hoot 2")[0] == 200
        assert api.submit(table, 2, seq, "hoot 1")[0] == 200
        log = api.log(table.uid)
        assert api.move_count(table.uid) == rows + 1
        assert sorted(log[-1]["input"].split("; ")) == sorted(
            [f"hoot {owls[0]} 3", f"hoot {owls[1]} 2", f"hoot {owls[2]} 1"])
    final = api.state(table.uid)
    assert rounds == 3 and final["game"]["status"] == "finished"
    assert final["game"]["winner"] and final["view"]["winners"]
    assert set(final["game"]["winner"].split(",")) == set(final["view"]["winners"])
    assert api.service.verify(table.uid) == []
    # the finished game's record deals it again and replays its log: it checks out
    from app.features.fairness.records import check_record

    record = api.client.get(f"/api/games/{table.uid}/fairness").get_json()
    report = check_record(record)
    assert report.fair and report.outcomes == 3, report.problems


# ---------------------------------------------------------------------- the pages


def browser(site: Api) -> FlaskClient:
    client: FlaskClient = site.app.test_client()
    return client


def csrf(client: FlaskClient, url: str) -> str:
    page = client.get(url)
    assert page.status_code == 200, page.text[:500]
    found = CSRF.search(page.text)
    assert found, url
    return found.group(1)


def play_on_the_page(client: FlaskClient, uid: str) -> str:
    """Answer with the game page's first option button; the option played."""
    page = client.get(f"/games/{uid}")
    assert page.status_code == 200
    options = [htmllib.unescape(o) for o in OPTION.findall(page.text)]
    assert options, page.text[:2000]
    seq = SEQ.search(page.text)
    assert seq is not None
    answer = client.post(f"/games/{uid}/move", data={
        "csrf_token": CSRF.search(page.text).group(1),  # type: ignore[union-attr]
        "seq": seq.group(1), "option": options[0]})
    assert answer.status_code in (302, 303), answer.text[:1000]
    return options[0]


def test_a_whole_game_through_the_pages(owl_site: Api) -> None:
    site = owl_site
    creator = browser(site)
    form = creator.get("/new?game=owl-dice")
    assert form.status_code == 200
    assert 'value="hollow-oak"' in form.text and 'value="tyto"' in form.text
    assert "Owl Dice" in form.text
    token = CSRF.search(form.text)
    assert token is not None
    response = creator.post("/new", data={
        "csrf_token": token.group(1), "game": "owl-dice", "name": "Night moot",
        "variant": "standard", "circuit0": "hollow-oak",
        "seat0_kind": "human", "seat0_email": "ann@example.com", "seat0_name": "Ann",
        "seat0_lang": "en", "seat1_kind": "human", "seat1_email": "ben@example.com",
        "seat1_name": "Ben", "seat1_lang": "en", "seat1_titan": "tyto",
        "seat2_kind": "computer", "seat3_kind": "none", "spectators": "on"})
    assert response.status_code == 303, response.text[:2000]
    uid = response.location.split("/games/")[1].split("/")[0]
    setup = creator.get(response.location).text
    links = {int(seat): link.split("/join/")[1] for link, seat in re.findall(
        r'value="([^"]+/join/[^"]+)" onfocus="this.select\(\)" data-seat="(\d+)"', setup)}
    assert sorted(links) == [0, 1]
    players = {0: browser(site), 1: browser(site)}
    for position, client in players.items():
        url = f"/join/{links[position]}"
        joined = client.post(url, data={"csrf_token": csrf(client, url)})
        assert joined.status_code == 303, joined.text[:500]
    started = creator.post(f"/games/{uid}/start",
                           data={"csrf_token": csrf(creator, f"/games/{uid}/setup")})
    assert started.status_code == 303, started.text[:1000]
    seats = site.service.state(uid, None)["game"]["seats"]
    assert seats[1]["titans"] == ["tyto"]
    page = players[0].get(f"/games/{uid}").text
    assert "<svg" in page and 'data-owl="tyto"' in page and "Round 1 of 3" in page
    played = []
    for _ in range(30):
        state = site.service.state(uid, None)
        if state["game"]["status"] != "active":
            break
        acting = [p for p in state["game"]["to_act"] if p in players]
        assert acting, state["game"]
        played.append(play_on_the_page(players[acting[0]], uid))
        if state["view"]["pending"]["kind"] == "hoot" and len(acting) == 2:
            # Ann's hoot is sealed: Ben's page shows that she hooted, never what
            owl = played[-1].split()[1]
            other = players[1 - acting[0]].get(f"/games/{uid}").text
            row = re.search(f'<tr data-owl="{owl}".*?</tr>', other, re.S)
            assert row is not None and '<td class="hoot"><span class="pill ok">hooted' in (
                row.group(0))
            assert site.service.state(uid, 1 - acting[0])["view"]["owls"][owl]["hoot"] is None
    final = site.service.state(uid, None)
    assert final["game"]["status"] == "finished", final["game"]
    assert any(p.startswith("hoot") for p in played) and "roll" in played
    over = players[0].get(f"/games/{uid}")
    assert over.status_code == 200 and final["game"]["winner"].split(",")[0].capitalize() in (
        over.text)
    log = players[0].get(f"/games/{uid}/log")
    assert log.status_code == 200 and "Roll the moon die" in log.text


# ---------------------------------------------------------------------- mail, links, replies


ANN, BEN = "ann@example.com", "ben@example.com"


@pytest.fixture
def owl_post(owl_dice: str, migrated_database_url: str, smtp: Smtp) -> Iterator[tuple[Post, Any]]:  # noqa: F811
    """The app on a fresh database of each kind, sending its mail to a real SMTP server."""
    from app import create_app

    app = create_app(settings_for(migrated_database_url, smtp.url,
                                  TITANPOST_RATE_LIMIT_LINKS="off"))
    app.config["TESTING"] = True
    post = Post(app.extensions["titanpost.service"], smtp)
    yield post, app.test_client()
    post.service.engine.dispose()


def newest(post: Post, to: str, kinds: tuple[str, ...]) -> EmailMessage:
    found = [m for m in mails(post, to) if m["X-Titan-Post-Kind"] in kinds]
    assert found, [(m["X-Titan-Post-Kind"], m["Subject"]) for m in mails(post, to)]
    return found[-1]


def test_a_whole_game_by_mail_links_and_replies(owl_post: tuple[Post, Any]) -> None:
    """Ann answers every decision by a signed link of her newest mail (the confirm page on GET,
    the move on POST), Ben by replying to his; the computer plays the third owl."""
    from tests.owldice.describe import describe_option as owl_words

    post, client = owl_post
    game = post.service.create_game(
        seats=[{"email": ANN, "name": "Ann"}, {"email": BEN, "name": "Ben"}, {"bot": True}],
        name="Moonlit", seed=3, circuits=["hollow-oak"], rules_name="owl-dice")
    post.send()
    invitation = body(mails(post, ANN, "invitation")[0])
    assert "Owl Dice" in invitation and "The Hollow Oak" in invitation
    for invite in game["invitations"]:
        post.service.accept(invite["invite_token"])
    uid = str(game["game"])
    post.service.start(uid, game["creator_token"])
    owl = {s["position"]: s["titans"][0] for s in post.service.state(uid, None)["game"]["seats"]}
    by = {"link": 0, "reply": 0, "refused": 0}
    kinds: set[str] = set()
    for _ in range(30):
        state = post.service.state(uid, None)
        if state["game"]["status"] != "active":
            break
        post.send()
        acting = [p for p in state["game"]["to_act"] if p in (0, 1)]
        assert acting, state["game"]
        kind = str(state["view"]["pending"]["kind"])
        kinds.add(kind)
        if 0 in acting:
            mail = newest(post, ANN, ("roll", "hoot"))
            assert mail["X-Titan-Post-Kind"] == kind
            # Ann's own pellets are in her mail, the others' never
            hands = {p: full_view(post, uid)["owls"][owl[p]]["hand"] for p in (0, 1, 2)}
            situation = parts(mail)[0].split("THE GLADE", 1)[1]
            assert f"pellets: {', '.join(map(str, hands[0]))}" in situation
            assert situation.count("pellets: ") == 1
            secret = post.service.link_seat(uid, 0).secret
            by_option = {}
            for url in links(parts(mail)[0], "l"):
                link = read_option_token(url.rsplit("/", 1)[1], post.settings.secret_key, secret)
                assert link.seq == state["decision_seq"]
                by_option[link.option] = url
            assert sorted(by_option) == sorted(post.service.options(uid, 0)["options"])
            before = post.service.state(uid, None)["game"]["seq"]
            choice = sorted(by_option)[(state["view"]["round"] - 1) % len(by_option)]
            page, action, token = confirm_and_post(client, by_option[choice])
            assert htmllib.escape(owl_words(choice, None, "en")) in page.get_data(
                as_text=True)
            assert post.service.state(uid, None)["game"]["seq"] == before  # GET plays nothing
            answered = client.post(action, data={"csrf_token": token})
            assert answered.status_code in (302, 303), answered.get_data(as_text=True)[:500]
            by["link"] += 1
        if 1 in acting:
            mail = newest(post, BEN, ("roll", "hoot"))
            assert mail["X-Titan-Post-Kind"] == kind
            if kind == "hoot" and 0 in acting:
                # Ann's sealed hoot (hoot <n> in round n) is in no mail of Ben's
                sealed = post.service.state(uid, 0).get("sealed", "")
                assert sealed == f"hoot {owl[0]} {state['view']['round']}", sealed
                post.send()
                assert all(sealed not in body(m) for m in mails(post, BEN))
            if kind == "hoot" and not by["refused"]:
                # a mistyped hoot is refused with Ben's legal inputs, and changes nothing
                before = post.service.state(uid, 1)
                (outcome,) = reply(post, mail, BEN, "hoot 7")
                assert outcome.reply_kind == "reply-error", outcome
                post.send()
                answer = body(mails(post, BEN, "reply-error")[-1])
                assert f"hoot {owl[1]} 3" in answer or "hoot 3" in answer, answer
                assert post.service.state(uid, 1) == before
                by["refused"] += 1
            (outcome,) = reply(post, mail, BEN, "hoot 2" if kind == "hoot" else "roll")
            assert outcome.reply_kind != "reply-error", outcome
            by["reply"] += 1
    final = post.service.state(uid, None)
    assert final["game"]["status"] == "finished", final["game"]
    assert kinds == {"roll", "hoot"} and by["link"] >= 4 and by["reply"] >= 4, (kinds, by)
    assert post.service.verify(uid) == []
    post.send()
    over = mails(post, ANN)[-1]
    assert over["X-Titan-Post-Kind"] == "game_over"
    assert "Owl Dice" in body(over) or "Moonlit" in body(over)


# ---------------------------------------------------------------------- the clock


@pytest.mark.parametrize("action", ["pass", "bot"])
def test_a_late_hoot_is_given_when_time_runs_out(owl_dice: str, clock: Clock,
                                                 action: str) -> None:
    """Every owl's hoot has its own deadline, all open at once; a sealed hoot stops its seat's
    clock only; the late owl gets hoot 1 (pass) or the computer's hoot, and the reveal is one
    entry."""
    from app.features.clock.arithmetic import aware

    created = clock.service.create_game(
        seats=[{"email": f"p{i}@example.com"} for i in range(3)], seed=4,
        settings={"deadline_hours": 24, "on_timeout": action}, circuits=["hollow-oak"],
        rules_name="owl-dice")
    for invitation in created["invitations"]:
        clock.service.accept(invitation["invite_token"])
    uid = str(created["game"])
    clock.service.start(uid, created["creator_token"])
    clock.play(uid)  # the roll
    state = clock.service.state(uid, None)
    assert state["game"]["to_act"] == [0, 1, 2]
    rows = {row.seat: row for row in clock.deadlines(uid, seq=state["decision_seq"])
            if row.kind.startswith("timeout")}
    assert sorted(rows) == [0, 1, 2] and all(row.done_at is None for row in rows.values())
    before = len(clock.moves(uid))
    for position, count in ((0, 3), (1, 2)):
        seq = int(clock.service.state(uid, position)["seq"])
        assert clock.service.submit(uid, position, seq, f"hoot {count}")["sealed"]
    open_rows = {row.seat: row.done_at for row in clock.deadlines(uid, seq=state["decision_seq"])
                 if row.kind.startswith("timeout")}
    assert open_rows[0] is not None and open_rows[1] is not None and open_rows[2] is None
    due = aware(rows[2].due_at)
    clock.tick(due - S)
    assert len(clock.moves(uid)) == before
    clock.tick(due + S)
    (reveal,) = clock.moves(uid, after=before)
    owls = [seat["titans"][0] for seat in state["game"]["seats"]]
    hoots = reveal.input.split("; ")
    assert hoots[:2] == [f"hoot {owls[0]} 3", f"hoot {owls[1]} 2"]
    assert hoots[2].startswith(f"hoot {owls[2]} ")
    if action == "pass":
        assert hoots[2] == f"hoot {owls[2]} 1"
    assert clock.service.state(uid, None)["view"]["round"] == 2
