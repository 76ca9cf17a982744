"""Numbers a person reads (issue 23): ranges said as ranges, each game's own seat range on
/new, and an API request body's unknown key refused by name rather than read as missing."""

from __future__ import annotations

import pytest

from app.games import ruleset
from app.games.base import SetupError
from tests.apifixtures import Api

pytest_plugins = ["tests.apifixtures"]


@pytest.mark.parametrize(("variant", "seats", "words"), [
    ("standard", 2, "a standard game has 3 to 6 players, not 2"),
    ("teams", 5, "a teams game has 4 or 6 players, not 5"),
    ("two-player", 3, "a two-player game has 2 players, not 3"),
])
def test_a_seat_count_refusal_says_a_range_as_a_range(variant: str, seats: int,
                                                      words: str) -> None:
    with pytest.raises(SetupError) as refused:
        ruleset("titan-race").seat_count(variant, seats)
    assert str(refused.value) == words


def test_an_unknown_key_of_a_seat_is_refused_by_name(api: Api) -> None:
    seats = [{"emial": "ann@example.com"}, {"bot": True}, {"bot": True}]
    response = api.client.post("/api/games", json={"seats": seats})
    assert response.status_code == 400
    body = response.get_json()
    assert "emial" in body["error"], body
    assert api.scalar("SELECT count(*) FROM games") == 0


def test_an_unknown_top_level_key_is_refused_by_name(api: Api) -> None:
    response = api.client.post("/api/games", json={"seats": [{"bot": True}] * 3, "varaint": "x"})
    assert response.status_code == 400
    assert "varaint" in response.get_json()["error"]


def test_api_messages_number_seats_from_one(api: Api) -> None:
    """The API's ``position`` fields count from 0; its messages, read by people, from 1."""
    seats = [{"email": "not-an-address"}, {"bot": True}, {"bot": True}]
    refused = api.client.post("/api/games", json={"seats": seats})
    assert refused.get_json()["error"] == "seat 1: 'not-an-address' is not an e-mail address"
    table = api.create(3)
    missing = api.client.post(f"/api/games/{table.uid}/invitations", headers=table.creator,
                              json={"position": 5, "email": "zoe@example.com"})
    assert missing.status_code == 404
    assert missing.get_json()["error"].endswith("has no seat 6")
    document = api.client.get("/api/openapi.json").get_json()
    described = document["components"]["schemas"]["InviteIn"]["properties"]["position"]
    assert "from 0" in described["description"]


def test_a_great_race_seat_is_named_from_one(api: Api) -> None:
    seats = [{"pieces": {"titans": ["craken"]}}, {"bot": True}]
    seats[0]["email"] = "ann@example.com"
    refused = api.client.post("/api/games", json={"game": "great-race", "seats": seats})
    assert refused.status_code == 400
    assert refused.get_json()["error"].startswith("seat 1: a Great Race seat's pieces")


def test_a_timeout_pause_is_said_with_the_seat_from_one() -> None:
    """The clock's pause reason is a key compared by the service (kept as it was stored); a
    person reads it with the seat's name and its number from 1."""
    from app.service import pause_reason_timeout, pause_said

    assert pause_said(pause_reason_timeout(2), {2: "Cy"}) == (
        "waiting for Cy (seat 3), whose time ran out")
    assert pause_said(pause_reason_timeout(0), {}) == "waiting for seat 1, whose time ran out"
    assert pause_said("lunch", {0: "Ann"}) == "lunch"
    assert pause_said(None, {}) == "by its owner"
