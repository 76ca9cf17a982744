"""A third game, registered by the tests alone (Owl Dice, tests/owldice/), played from start to
end through every channel: the JSON API, the web pages (created with /new?game=owl-dice,
joined, played with the game page's form), the mails and their signed links (a link's GET shows
a confirm page, its POST plays), a reply mail, and the ``titanpost`` player commands against a
server; its game page in a real browser. Nothing in ``app/`` names the game: whatever it needs
the neutral code reads from the registry and the game's Ruleset and GameUI (issue 37).

Each test registers the game (the ``owl_dice`` fixture) before it builds the app, and the
registry is as it was after it."""

from __future__ import annotations

import html as htmllib
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from flask.testing import FlaskClient

from app.games import GAMES
from tests.apifixtures import Api, Table, dispose, make_api

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
    assert "owl-dice" not in GAMES


# ---------------------------------------------------------------------- the API


def owls_of(api: Api, table: Table) -> dict[int, str]:
    seats = api.state(table.uid, table.tokens[0])["game"]["seats"]
    return {seat["position"]: seat["titans"][0] for seat in seats}


def test_a_whole_game_through_the_api(owl_api: Api) -> None:
    api = owl_api
    table = api.accept_all(api.create(3, game="owl-dice", circuits=["hollow-oak"]))
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
            other = players[1 - acting[0]].get(f"/games/{uid}").text
            assert "hooted" in other
            assert played[-1] not in other.replace(f'value="{played[-1]}"', "")
    final = site.service.state(uid, None)
    assert final["game"]["status"] == "finished", final["game"]
    assert any(p.startswith("hoot") for p in played) and "roll" in played
    page = players[0].get(f"/games/{uid}")
    assert page.status_code == 200 and final["game"]["winner"].split(",")[0].capitalize() in (
        page.text)
    log = players[0].get(f"/games/{uid}/log")
    assert log.status_code == 200 and "Roll the moon die" in log.text
