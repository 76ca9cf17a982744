"""The creator takes a seat while creating the game (issue 40): the new-game form's "I play this
seat" (the first seat by default) and the API's ``creator_seat`` take that seat at once, with no
invitation and no invitation mail; its share of the deal is given afterwards, once the set-up
page (or the API client) has the game's commitment, so that the creator cannot have drawn it
knowing the server's secret's commitment in advance nor the server its share (docs/fairness.md).
Choosing no seat keeps the older way (every seat invited); a seat that is not a player's is
refused with the reason, and nothing is created.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

from tests.apifixtures import Api, bearer, csrf_token

if TYPE_CHECKING:
    from tests.browser import LiveServer

pytest_plugins = ["tests.apifixtures", "tests.browser"]

HEX = re.compile(r"[0-9a-f]{64}")


def _new_game_form(api: Api, **fields: str) -> dict[str, str]:
    page = api.client.get("/new").get_data(as_text=True)
    return {"csrf_token": csrf_token(page), "name": "Friday race", "circuit0": "kaldheira",
            "seat0_kind": "human", "seat0_email": "ann@example.com",
            "seat1_kind": "human", "seat1_email": "bob@example.com",
            "seat2_kind": "computer", "seat2_level": "easy", **fields}


def _seats(api: Api) -> list[tuple[Any, ...]]:
    return api.rows("SELECT position, email, accepted_at IS NOT NULL, invite_token_hash IS NULL, "
                    "contribution FROM seats ORDER BY position")


def _invited(api: Api) -> list[str]:
    return [row[0] for row in api.rows("SELECT recipient FROM outbox WHERE kind = 'invitation' "
                                       "ORDER BY recipient")]


def test_the_form_chooses_the_first_seat_as_the_creators_by_default(api: Api) -> None:
    page = api.client.get("/new").get_data(as_text=True)
    mine = re.findall(r'<input type="radio" name="my_seat" value="(\d*)" (checked)?', page)
    assert mine[0] == ("", "")  # "I play no seat"
    assert mine[1] == ("0", "checked")
    assert all(checked == "" for _, checked in mine[2:])


def test_the_creator_takes_the_chosen_seat_and_gives_its_share_on_the_setup_page(
        api: Api) -> None:
    made = api.client.post("/new", data=_new_game_form(api, my_seat="1"))
    assert made.status_code == 303
    uid = made.headers["Location"].split("/games/")[1].split("/")[0]
    setup = api.client.get(made.headers["Location"]).get_data(as_text=True)
    assert "seat 2 is yours" in setup
    share = re.search(r'<form [^>]*id="share-form"[^>]*data-send-at-once[^>]*'
                      r'data-fair-position="1"', setup)
    assert share is not None, "the set-up page sends the seat's share of the deal at once"
    assert 'name="back" value="setup"' in setup
    seats = _seats(api)
    assert seats[1][2:] == (True, True, None)  # taken, no invitation, no share yet
    assert seats[0][2:4] == (False, False)  # Ann is invited as before
    assert _invited(api) == ["ann@example.com"]  # no invitation mail to the creator's seat

    given = api.client.post(f"/games/{uid}/contribution",
                            data={"csrf_token": csrf_token(setup), "contribution": "ab" * 32,
                                  "back": "setup"})
    assert given.status_code == 303
    assert given.headers["Location"].endswith(f"/games/{uid}/setup")
    assert _seats(api)[1][4] == "ab" * 32
    again = api.client.get(f"/games/{uid}/setup").get_data(as_text=True)
    assert 'id="share-form"' not in again  # given once
    game = api.client.get(f"/games/{uid}").get_data(as_text=True)
    assert "(you)" in game  # the browser plays seat 2


def test_no_seat_chosen_invites_every_player(api: Api) -> None:
    made = api.client.post("/new", data=_new_game_form(api, my_seat=""))
    assert made.status_code == 303
    setup = api.client.get(made.headers["Location"]).get_data(as_text=True)
    assert "Send each player their invitation link" in setup
    assert 'id="share-form"' not in setup
    assert [row[2] for row in _seats(api)] == [False, False, True]
    assert _invited(api) == ["ann@example.com", "bob@example.com"]


def test_a_seat_that_is_not_a_players_is_refused_and_nothing_is_created(api: Api) -> None:
    for mine, kind in (("2", "computer"), ("3", "no seat")):
        refused = api.client.post("/new", data=_new_game_form(api, my_seat=mine))
        assert refused.status_code == 400
        said = refused.get_data(as_text=True)
        assert f"seat {int(mine) + 1} is not a player&#39;s seat" in said, kind
        assert re.search(rf'name="my_seat" value="{mine}" checked', said) or mine == "3"
    assert api.scalar("SELECT count(*) FROM games") == 0


def test_the_api_takes_the_creators_seat_and_its_share_afterwards(api: Api) -> None:
    seats = [{"email": "ann@example.com"}, {"email": "bob@example.com"}, {"bot": True}]
    made = api.client.post("/api/games", json={"seats": seats, "creator_seat": 0})
    assert made.status_code == 201, made.get_json()
    created = made.get_json()
    assert created["position"] == 0 and HEX.fullmatch(created["commitment"])
    assert [inv["position"] for inv in created["invitations"]] == [1]
    token = created["api_token"]
    state = api.client.get(f"/api/games/{created['game']}", headers=bearer(token)).get_json()
    assert state["game"]["status"] == "open"
    given = api.client.post(f"/api/games/{created['game']}/contribution",
                            json={"contribution": "cd" * 32}, headers=bearer(token))
    assert given.status_code == 200, given.get_json()
    assert _seats(api)[0][4] == "cd" * 32
    twice = api.client.post(f"/api/games/{created['game']}/contribution",
                            json={"contribution": "ef" * 32}, headers=bearer(token))
    assert twice.status_code == 409
    assert api.scalar("SELECT label FROM api_tokens") == "creator"

    computer = api.client.post("/api/games", json={"seats": seats, "creator_seat": 2})
    assert computer.status_code == 400
    assert "computer" in computer.get_json()["error"]


def test_in_the_browser_the_creator_lands_seated_with_a_share_drawn_after_the_commitment(
        live_server: LiveServer, browser: Any) -> None:
    context = browser.new_context()
    context.set_default_timeout(15_000)
    try:
        page = context.new_page()
        page.goto(f"{live_server.url}/new")
        page.fill("input[name=name]", "Made with my seat")
        page.fill("input[name=seat0_email]", "creator@example.com")
        page.fill("input[name=seat1_email]", "friend@example.com")
        page.select_option("select[name=seat2_kind]", "computer")
        assert page.is_checked("input[name=my_seat][value='0']")
        page.click("form.new-game button[type=submit]")
        page.wait_for_url("**/games/*/setup")
        page.wait_for_load_state("load")
        uid = page.url.split("/games/")[1].split("/")[0]
        page.wait_for_function(f"""() => window.localStorage.getItem('titanpost-fair:{uid}:0')""")
        page.wait_for_selector("#share-form", state="detached")
        kept = json.loads(page.evaluate(
            f"window.localStorage.getItem('titanpost-fair:{uid}:0')"))
        record = live_server.service.export(uid)
        assert record["seats"][0]["contribution"] == kept["contribution"]
        assert kept["commitment"] == record["game"]["dealing_commitment"]
        assert page.url.endswith(f"/games/{uid}/setup")
        assert "Your browser has added its share of the deal." in page.content()
        page.goto(f"{live_server.url}/games/{uid}")
        assert page.locator("#fair-mine code").inner_text() == kept["contribution"]
    finally:
        context.close()
