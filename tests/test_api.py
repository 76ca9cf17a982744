"""The JSON API under /api, over real migrated databases (SQLite and PostgreSQL).

Every refusal is checked three ways: a 4xx status, a JSON body whose "error" is a non-empty
message, and nothing changed (the move log over the API, the moves table, every view).
"""

from __future__ import annotations

import json
import threading
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from werkzeug.test import TestResponse

from tests.apifixtures import (
    ADMIN_TOKEN,
    MAX_BODY_BYTES,
    Api,
    Table,
    bearer,
    dispose,
    make_api,
    sha256,
)

# The fixtures (api, started, ...) live in tests/apifixtures.py.
pytest_plugins = ["tests.apifixtures"]

UNKNOWN_UID = "0123456789abcdef0123456789abcdef"


def error_of(response: TestResponse, status: int) -> dict[str, Any]:
    """Assert a JSON refusal with ``status`` and an actionable message; return the body."""
    assert response.status_code == status, (response.status_code, response.get_data(as_text=True))
    assert response.is_json, response.get_data(as_text=True)
    body: dict[str, Any] = response.get_json()
    assert isinstance(body, dict)
    assert isinstance(body.get("error"), str) and body["error"].strip(), body
    return body


def moves_url(table: Table) -> str:
    return f"/api/games/{table.uid}/moves"


def other_seat(api: Api, table: Table) -> tuple[int, int, dict[str, Any]]:
    """(seat to act, another seat of the game, the options of the seat to act)."""
    position, opts = api.actor(table)
    return position, next(p for p in table.tokens if p != position), opts


def titan_of(view: dict[str, Any], position: int) -> str:
    return next(name for name, t in view["titans"].items() if t["seat"] == position)


# ---------------------------------------------------------------------- playing a game


def test_whole_game_create_accept_start_play_to_the_end(api: Api) -> None:
    table = api.create(3)
    # Seats 0 and 1 accept; seat 2 never does and a computer player takes it at the start.
    del table.invitations[2]
    api.accept_all(table)
    refused = api.client.post(f"/api/games/{table.uid}/start", json={}, headers=table.creator)
    assert "waiting for seat 3" in error_of(refused, 409)["error"]  # position 2, read from 1
    summary = api.start(table, fill_with_bots=True)
    assert [s["bot"] for s in summary["seats"]] == [False, False, True]
    assert all(s["accepted"] for s in summary["seats"])

    submitted: list[tuple[int, str]] = []
    for _ in range(1000):
        state = api.state(table.uid)
        if state["game"]["status"] != "active":
            break
        position, opts = api.actor(table)
        assert position in (0, 1)  # the computer answers seat 2's decisions itself
        assert opts["seq"] == state["seq"]
        choice = opts["options"][len(submitted) % len(opts["options"])]
        status, body = api.submit(table, position, opts["seq"], choice)
        assert status == 200, body
        assert body["applied"] is True and "already_applied" not in body
        assert body["seq"] > opts["seq"] and body["you"] == position
        submitted.append((position, choice))
    else:
        pytest.fail("the game did not finish")

    final = api.state(table.uid)
    assert final["game"]["status"] == "finished"
    assert final["game"]["winner"] and final["game"]["to_act"] == []
    assert final["view"]["winner"] or final["view"]["winners"]
    log = api.log(table.uid)
    assert [m["seq"] for m in log] == list(range(1, final["seq"] + 1))
    assert api.move_count(table.uid) == final["seq"] == len(log)
    human = [(m["seat"], m["input"]) for m in log if m["seat"] in (0, 1)]
    assert human == submitted
    assert {m["seat"] for m in log} <= {0, 1, 2}
    assert any(m["seat"] == 2 for m in log)  # the computer played seat 2
    assert api.service.verify_all() == {}

    # A finished game appears as such in the players' lists.
    listed = api.client.get("/api/games", headers=table.seat(0)).get_json()["games"]
    assert [(g["game"], g["status"], g["seq"]) for g in listed] == [
        (table.uid, "finished", final["seq"])
    ]


def test_create_refuses_bad_setups_with_json_errors(api: Api) -> None:
    cases: list[dict[str, Any]] = [
        {"seats": [{"email": "not-an-address"}, {"email": "b@x.org"}, {"email": "c@x.org"}]},
        {"seats": [{"email": "a@x.org"}, {"email": "b@x.org"}]},  # standard needs 3 to 6
        {"seats": [{"email": f"{c}@x.org"} for c in "abc"], "variant": "grand-slam"},
        {"seats": [{"email": f"{c}@x.org"} for c in "abc"], "circuits": ["atlantis"]},
        {"seats": [{"email": f"{c}@x.org"} for c in "abc"], "variant": "chess"},
        {"seats": [{"email": f"{c}@x.org"} for c in "abc"], "circuits": ["kaldheira"] * 2},
        {"variant": "standard"},
    ]
    for body in cases:
        error_of(api.client.post("/api/games", json=body), 400)
    assert api.scalar("SELECT count(*) FROM games") == 0


def test_list_my_games(api: Api) -> None:
    first = api.accept_all(api.create(3))
    second = api.accept_all(api.create(3))
    third = api.accept_all(api.create([{"email": "someone@else.org"}, {"email": "p0@example.com"},
                                       {"email": "x@y.org"}]))
    api.start(first)
    response = api.client.get("/api/games", headers=first.seat(0))
    assert response.status_code == 200
    games = {g["game"]: g for g in response.get_json()["games"]}
    assert set(games) == {first.uid, second.uid, third.uid}
    assert games[first.uid]["status"] == "active" and games[first.uid]["position"] == 0
    assert games[second.uid]["status"] == "open" and games[second.uid]["seq"] == 0
    assert games[third.uid]["position"] == 1
    only = api.client.get("/api/games", headers=third.seat(0)).get_json()["games"]
    assert [g["game"] for g in only] == [third.uid]
    error_of(api.client.get("/api/games"), 401)


def test_state_with_a_seat_token_shows_only_its_own_hand(api: Api, started: Table) -> None:
    api.play(started, 4)
    for position, token in started.tokens.items():
        body = api.state(started.uid, token)
        assert body["you"] == position
        mine = titan_of(body["view"], position)
        for name, titan in body["view"]["titans"].items():
            if name == mine:
                assert isinstance(titan["hand"], list)
            else:
                assert isinstance(titan["hand"], int) and not isinstance(titan["hand"], bool)


def test_spectator_view_shows_no_hands_and_no_options(api: Api, started: Table) -> None:
    api.play(started, 4)
    body = api.state(started.uid)
    assert body["you"] is None
    assert body["game"]["status"] == "active" and body["seq"] == 4
    for titan in body["view"]["titans"].values():
        assert isinstance(titan["hand"], int) and not isinstance(titan["hand"], bool)
    assert body["view"]["pending"] is not None and "options" not in body["view"]["pending"]
    assert "options" not in json.dumps(body)
    # A token of another game sees this game as a spectator too.
    other = api.new_started(3, prefix="q")
    assert api.state(started.uid, other.tokens[0])["view"] == body["view"]
    # The options need a seat of this game.
    error_of(api.client.get(f"/api/games/{started.uid}/options"), 401)
    error_of(api.client.get(f"/api/games/{started.uid}/options", headers=other.seat(0)), 403)


def test_private_game_has_no_spectators(api: Api) -> None:
    table = api.accept_all(api.create(3, settings={"spectators": False, "deadline_hours": 72}))
    api.start(table)
    api.play(table, 2)
    other = api.new_started(3, prefix="q")
    for headers in (None, other.seat(0)):
        for path in (f"/api/games/{table.uid}", f"/api/games/{table.uid}/log"):
            assert "spectators" in error_of(api.client.get(path, headers=headers), 403)["error"]
    # The players still see the game and its log.
    assert api.state(table.uid, table.tokens[1])["you"] == 1
    log = api.client.get(f"/api/games/{table.uid}/log", headers=table.seat(2))
    assert log.status_code == 200 and len(log.get_json()["moves"]) == 2
    # Bad settings are refused when the game is created.
    for settings in ({"spectators": "no"}, {"deadline_hours": -1}, {"colour": "red"}, []):
        error_of(api.client.post("/api/games", json={
            "seats": [{"email": f"s{i}@x.org"} for i in range(3)], "settings": settings}), 400)


def test_options_are_given_only_to_the_seat_that_must_act(api: Api, started: Table) -> None:
    _, other, opts = other_seat(api, started)
    assert opts["pending"]["options"] == opts["options"]
    theirs = api.options(started, other)
    assert theirs["yours"] is False and theirs["options"] == []
    assert "options" not in theirs["pending"] and theirs["seq"] == opts["seq"]


def test_log_lists_every_move_in_order(api: Api, started: Table) -> None:
    assert api.log(started.uid) == []
    played = []
    for _ in range(5):
        position, opts = api.actor(started)
        status, _ = api.submit(started, position, opts["seq"], opts["options"][-1])
        assert status == 200
        played.append((position, opts["options"][-1]))
    log = api.log(started.uid)
    assert [(m["seq"], m["seat"], m["input"]) for m in log] == [
        (i + 1, p, text) for i, (p, text) in enumerate(played)
    ]
    assert all(isinstance(m["outcomes"], list) and m["created_at"] for m in log)
    error_of(api.client.get(f"/api/games/{UNKNOWN_UID}/log"), 404)


def test_public_log_hides_hidden_information(api: Api) -> None:
    """Spectators (and opponents) read the log: it must not reveal the deck order after a
    shuffle, nor which card a pickpocket took (hands and the deck are hidden in every view)."""
    admin = bearer(ADMIN_TOKEN)
    for seed in range(12):
        table = api.create([{"bot": True}] * 4, seed=seed)
        api.start(table)  # computer players race it to the end at once
        full = api.client.get(f"/api/admin/games/{table.uid}/export", headers=admin).get_json()
        secret = {
            m["seq"]: o for m in full["moves"] for part in m["outcomes"] for o in part
            if o.startswith(("shuffle ", "steal "))
        }
        if any(o.startswith("shuffle ") for o in secret.values()):
            break
    else:
        pytest.fail("no game among the seeds tried reshuffled the deck: try more seeds")
    public = {m["seq"]: m for m in api.log(table.uid)}
    assert set(public) == {m["seq"] for m in full["moves"]}
    leaks = []
    for seq, outcome in secret.items():
        shown = " ".join(o for part in public[seq]["outcomes"] for o in part)
        hidden_cards = outcome.split()[1:]
        if " ".join(hidden_cards) in shown:
            leaks.append((seq, outcome))
    # The seat views keep the deck and the other hands hidden ...
    view = api.state(table.uid)["view"]
    assert isinstance(view["deck"], int)
    # ... so the log must not give them away.
    assert not leaks, f"the public log reveals hidden cards: {leaks}"


def test_invitation_reissue(api: Api) -> None:
    table = api.create(3)
    url = f"/api/games/{table.uid}/invitations"
    error_of(api.client.post(url, json={"position": 1, "email": "new@example.com"}), 401)
    error_of(api.client.post(url, json={"position": 1, "email": "new@example.com"},
                             headers={"X-Creator-Token": "wrong"}), 403)
    error_of(api.client.post(url, json={"position": 1, "email": "bad"}, headers=table.creator),
             400)
    error_of(api.client.post(url, json={"position": 5, "email": "x@example.com"},
                             headers=table.creator), 404)

    response = api.client.post(url, json={"position": 1, "email": "New@Example.com"},
                               headers=table.creator)
    assert response.status_code == 201, response.get_json()
    fresh = response.get_json()
    assert fresh["position"] == 1 and fresh["email"] == "new@example.com"
    assert fresh["link"].endswith("/join/" + fresh["invite_token"])
    assert fresh["invite_token"] != table.invitations[1]

    # The old invitation no longer works; the new one does, for the new address.
    old = api.client.post("/api/invitations/accept", json={"invite_token": table.invitations[1]})
    error_of(old, 404)
    table.invitations[1] = fresh["invite_token"]
    api.accept_all(table)
    listed = api.client.get("/api/games", headers=table.seat(1)).get_json()["games"]
    assert [g["game"] for g in listed] == [table.uid]
    # A used invitation cannot be used again; a taken seat cannot be re-invited.
    error_of(api.client.post("/api/invitations/accept",
                             json={"invite_token": fresh["invite_token"]}), 404)
    error_of(api.client.post(url, json={"position": 1, "email": "x@example.com"},
                             headers=table.creator), 400)
    start = f"/api/games/{table.uid}/start"
    error_of(api.client.post(start, json={}), 401)
    error_of(api.client.post(start, json={}, headers={"X-Creator-Token": "nope"}), 403)
    api.start(table)
    error_of(api.client.post(start, json={}, headers=table.creator), 409)
    error_of(api.client.post(url, json={"position": 1, "email": "x@example.com"},
                             headers=table.creator), 409)


def test_resign_lets_a_computer_play_on(api: Api, started: Table) -> None:
    position, opts = api.actor(started)
    before = api.state(started.uid)["seq"]
    response = api.client.post(f"/api/games/{started.uid}/resign", headers=started.seat(position))
    assert response.status_code == 200, response.get_json()
    summary = response.get_json()
    seat = summary["seats"][position]
    assert seat["resigned"] is True and seat["bot"] is True
    # The computer answered the resigned seat's pending decision at once.
    assert summary["seq"] > before and position not in summary["to_act"]
    log = api.log(started.uid)
    # The resignation is a note in the log, made by the player; the computer's move follows.
    note, move = log[before], log[before + 1]
    assert (note["kind"], note["actor"], note["seat"]) == ("resign", "player", position)
    assert (move["kind"], move["actor"], move["seat"]) == ("move", "computer", position)
    assert move["input"] in opts["options"]
    assert summary["status"] == "active"
    error_of(api.client.post(f"/api/games/{started.uid}/resign",
                             headers=started.seat(position)), 400)
    # Play on: the humans left never see the resigned seat's decisions.
    for _ in range(10):
        acting, _ = api.actor(started)
        assert acting != position
        api.play(started, 1)
    assert api.service.verify_all() == {}


def test_abandon_then_moves_are_refused(api: Api, started: Table) -> None:
    url = f"/api/games/{started.uid}/abandon"
    error_of(api.client.post(url), 401)
    error_of(api.client.post(url, headers={"X-Creator-Token": "not-the-creator"}), 403)
    api.play(started, 2)
    response = api.client.post(url, headers=started.creator)
    assert response.status_code == 200
    assert response.get_json() == {"game": started.uid, "status": "abandoned"}
    before = api.observe(started)
    assert before["spectator"]["game"]["status"] == "abandoned"
    for position in started.tokens:
        body = error_of(api.client.post(moves_url(started), headers=started.seat(position),
                                        json={"expected_seq": 2, "input": "end"}), 409)
        assert "abandoned" in body["error"]
    error_of(api.client.post(url, headers=started.creator), 409)
    error_of(api.client.post(f"/api/games/{started.uid}/resign", headers=started.seat(0)), 409)
    assert api.observe(started) == before


def test_openapi_document(api: Api) -> None:
    response = api.client.get("/api/openapi.json")
    assert response.status_code == 200
    doc = json.loads(response.get_data(as_text=True))
    assert doc["openapi"].startswith("3.")
    paths = doc["paths"]
    for path, method in [
        ("/api/games", "get"),
        ("/api/games", "post"),
        ("/api/games/{uid}", "get"),
        ("/api/games/{uid}/options", "get"),
        ("/api/games/{uid}/moves", "post"),
        ("/api/games/{uid}/log", "get"),
        ("/api/games/{uid}/invitations", "post"),
        ("/api/invitations/accept", "post"),
        ("/api/games/{uid}/start", "post"),
        ("/api/games/{uid}/resign", "post"),
        ("/api/games/{uid}/abandon", "post"),
    ]:
        assert method in paths.get(path, {}), (path, method, sorted(paths))
    move_body = paths["/api/games/{uid}/moves"]["post"]["requestBody"]
    assert "application/json" in move_body["content"]
    assert "SeatToken" in doc["components"]["securitySchemes"]


def test_api_tokens_are_stored_hashed(api: Api, started: Table) -> None:
    hashes = {row[0] for row in api.rows("SELECT token_hash FROM api_tokens")}
    assert len(hashes) == 3
    dump = json.dumps(
        [api.rows(f"SELECT * FROM {t}") for t in ("api_tokens", "seats", "games")], default=str
    )
    for token in [*started.tokens.values(), *started.invitations.values(), started.creator_token]:
        assert token not in dump
    assert {sha256(t) for t in started.tokens.values()} == hashes
    # The stored hash is not itself a token.
    error_of(api.client.get("/api/games", headers=bearer(next(iter(hashes)))), 401)


def test_admin_endpoints_need_the_admin_token(api: Api, started: Table) -> None:
    api.play(started, 3)
    base = f"/api/admin/games/{started.uid}"
    error_of(api.client.get(f"{base}/replay"), 401)
    error_of(api.client.get(f"{base}/replay", headers=bearer("wrong")), 401)
    error_of(api.client.get(f"{base}/replay", headers=started.seat(0)), 401)
    admin = bearer(ADMIN_TOKEN)
    replay = api.client.get(f"{base}/replay", headers=admin).get_json()
    assert [s["seq"] for s in replay["steps"]] == [0, 1, 2, 3]
    at2 = api.client.get(f"{base}/states/2", headers=admin).get_json()
    assert at2["seq"] == 2 and at2["view"] == replay["steps"][2]["view"]
    error_of(api.client.get(f"{base}/states/9", headers=admin), 404)
    verify = api.client.get("/api/admin/verify", headers=admin).get_json()
    assert verify == {"ok": True, "games": {}}
    export = api.client.get(f"{base}/export", headers=admin).get_json()
    imported = api.client.post("/api/admin/games/import", json=export, headers=admin)
    assert imported.status_code == 201, imported.get_json()
    new_uid = imported.get_json()["game"]
    assert api.state(new_uid)["view"] == api.state(started.uid)["view"]
    error_of(api.client.post("/api/admin/games/import", json={"format": "nope"}, headers=admin),
             400)


# ---------------------------------------------------------------------- bad input


def assert_unchanged(api: Api, table: Table, before: dict[str, Any]) -> None:
    assert api.observe(table) == before


def test_unknown_game_is_404(api: Api, started: Table) -> None:
    before = api.observe(started)
    for path in (f"/api/games/{UNKNOWN_UID}", f"/api/games/{UNKNOWN_UID}/log",
                 "/api/games/not-a-game-id", "/api/games/not-a-game-id/log"):
        assert "no game" in error_of(api.client.get(path), 404)["error"]
    error_of(api.client.post(f"/api/games/{UNKNOWN_UID}/start", json={},
                             headers=started.creator), 404)
    assert_unchanged(api, started, before)


def test_submit_to_an_unknown_game_is_404(api: Api, started: Table) -> None:
    position, opts = api.actor(started)
    before = api.observe(started)
    response = api.client.post(f"/api/games/{UNKNOWN_UID}/moves", headers=started.seat(position),
                               json={"expected_seq": opts["seq"], "input": opts["options"][0]})
    body = error_of(response, 404)
    assert UNKNOWN_UID in body["error"]
    assert_unchanged(api, started, before)


def test_wrong_seat_is_403(api: Api, started: Table) -> None:
    position, other, opts = other_seat(api, started)
    before = api.observe(started)
    response = api.client.post(moves_url(started), headers=started.seat(other),
                               json={"expected_seq": opts["seq"], "input": opts["options"][0]})
    body = error_of(response, 403)
    assert f"seat {position + 1}" in body["error"]  # messages number seats from 1
    assert body["game"]["to_act"] == [position]
    assert_unchanged(api, started, before)


def test_token_of_another_game_is_403(api: Api, started: Table) -> None:
    _position, opts = api.actor(started)
    other = api.new_started(3, prefix="q")
    before = api.observe(started)
    for seat in other.tokens:
        response = api.client.post(moves_url(started), headers=other.seat(seat),
                                   json={"expected_seq": opts["seq"], "input": opts["options"][0]})
        assert "another game" in error_of(response, 403)["error"]
    assert_unchanged(api, started, before)
    assert api.move_count(other.uid) == 0


def test_missing_or_invalid_token_is_401(api: Api, started: Table) -> None:
    _, opts = api.actor(started)
    before = api.observe(started)
    for headers in ({}, {"Authorization": "Bearer not-a-token"},
                    {"Authorization": "Basic dXNlcjpwdw=="}, {"Authorization": "Bearer "},
                    {"X-Creator-Token": started.creator_token}):
        response = api.client.post(moves_url(started), headers=headers,
                                   json={"expected_seq": opts["seq"], "input": opts["options"][0]})
        assert "token" in error_of(response, 401)["error"].lower(), headers
    assert_unchanged(api, started, before)


def test_a_move_refuses_the_token_before_anything_else(api: Api, started: Table) -> None:
    """A move's token is checked with the move (in its transaction) only when nothing else
    could be refused first: a wrong token with a wrong body is still 401, a token of another
    game sent to an unknown or malformed game id 404, and a revoked token sent again with the
    Idempotency-Key of a move it made is refused, not answered that move's stored answer."""
    position, opts = api.actor(started)
    move = {"expected_seq": opts["seq"], "input": opts["options"][0]}
    wrong = {"Authorization": "Bearer not-a-token"}
    for body in ({"expected_seq": -1, "input": ""}, {"input": "x"}, {**move, "extra": 1}, move):
        assert "token" in error_of(api.client.post(moves_url(started), headers=wrong,
                                                   json=body), 401)["error"].lower(), body
    for uid in (UNKNOWN_UID, "not-a-game-id"):
        error_of(api.client.post(f"/api/games/{uid}/moves", headers=wrong, json=move), 401)
        error_of(api.client.post(f"/api/games/{uid}/moves", headers=started.seat(position),
                                 json=move), 404)
    keyed = {**started.seat(position), "Idempotency-Key": "move-then-replaced"}
    assert api.client.post(moves_url(started), headers=keyed, json=move).status_code == 200
    replaced = api.client.post(f"/api/games/{started.uid}/seats/{position}/replace",
                               headers=started.creator, json={"computer": True})
    assert replaced.status_code == 200, replaced.get_json()
    again = api.client.post(moves_url(started), headers=keyed, json=move)
    assert "revoked" in error_of(again, 401)["error"]
    assert error_of(api.client.post(moves_url(started), headers=started.seat(position),
                                    json=move), 401)


def test_malformed_json_is_400(api: Api, started: Table) -> None:
    position, _ = api.actor(started)
    before = api.observe(started)
    for payload in (b'{"expected_seq": 0, "input": "pick', b"not json at all", b'{"a": 1,}',
                    b"\xff\xfe"):
        response = api.client.post(moves_url(started), data=payload,
                                   headers=started.seat(position), content_type="application/json")
        body = error_of(response, 400)
        # The message should tell an API client what is wrong with what it sent.
        assert "json" in body["error"].lower(), (payload, body)
    assert_unchanged(api, started, before)


def test_missing_or_invalid_fields_are_400(api: Api, started: Table) -> None:
    position, _ = api.actor(started)
    before = api.observe(started)
    payloads: list[Any] = [
        {}, {"input": "end"}, {"expected_seq": 0}, {"expected_seq": "soon", "input": "end"},
        {"expected_seq": -1, "input": "end"}, {"expected_seq": 0, "input": ""},
        {"expected_seq": 0, "input": "x" * 501}, {"expected_seq": 0, "input": ["end"]},
        [0, "end"], "end", None,
    ]
    for payload in payloads:
        response = api.client.post(moves_url(started), json=payload,
                                   headers=started.seat(position))
        body = error_of(response, 400)
        assert body.get("detail"), (payload, body)
    missing = api.client.post(moves_url(started), json={"input": "end"},
                              headers=started.seat(position))
    assert "expected_seq" in error_of(missing, 400)["detail"]["json"]
    assert_unchanged(api, started, before)


def test_stale_sequence_is_409_with_the_current_state(api: Api, started: Table) -> None:
    position, opts = api.actor(started)
    api.play(started, 3)
    position, opts = api.actor(started)
    before = api.observe(started)
    for stale in (0, 1, 2, opts["seq"] + 1, opts["seq"] + 50):
        response = api.client.post(moves_url(started), headers=started.seat(position),
                                   json={"expected_seq": stale, "input": opts["options"][0]})
        body = error_of(response, 409)
        assert "moved on" in body["error"]
        assert body["seq"] == opts["seq"] == body["game"]["seq"]
        assert body["game"]["to_act"] == [position]
        assert body["view"] == before["seats"][position]["view"]
    assert_unchanged(api, started, before)


def test_illegal_move_is_422_with_the_legal_options(api: Api, started: Table) -> None:
    position, opts = api.actor(started)
    before = api.observe(started)
    for text in ("pick green" if "pick green" not in opts["options"] else "pick orange",
                 "move SS", "end", f"{opts['options'][0]}; move RRRRRR"):
        response = api.client.post(moves_url(started), headers=started.seat(position),
                                   json={"expected_seq": opts["seq"], "input": text})
        body = error_of(response, 422)
        assert body["legal"] and isinstance(body["legal"], list), body
        assert isinstance(body.get("index"), int)
    assert_unchanged(api, started, before)


def test_oversized_body_is_413(api: Api, started: Table) -> None:
    position, opts = api.actor(started)
    before = api.observe(started)
    payload = json.dumps({"expected_seq": opts["seq"], "input": opts["options"][0],
                          "padding": "x" * MAX_BODY_BYTES})
    response = api.client.post(moves_url(started), data=payload, headers=started.seat(position),
                               content_type="application/json")
    body = error_of(response, 413)
    assert any(word in body["error"].lower() for word in ("too large", "limit")), body
    # A big body on the public create endpoint is refused the same way.
    big = {"seats": [{"email": f"p{i}@example.com", "name": "x" * 90} for i in range(6)] * 40}
    error_of(api.client.post("/api/games", json=big), 413)
    assert_unchanged(api, started, before)


def test_garbage_notation_is_422(api: Api, started: Table) -> None:
    position, opts = api.actor(started)
    before = api.observe(started)
    for text in ("xyzzy", "pick", "move QQ", ";;;", "pick blue;", "pick blue extra"):
        response = api.client.post(moves_url(started), headers=started.seat(position),
                                   json={"expected_seq": opts["seq"], "input": text})
        body = error_of(response, 422)
        assert body["legal"] == opts["options"], (text, body)
    # A NUL is no notation, nor any text: refused before the game is looked at.
    response = api.client.post(moves_url(started), headers=started.seat(position),
                               json={"expected_seq": opts["seq"], "input": "\x00"})
    assert "U+0000" in error_of(response, 400)["error"]
    # Blank input: nothing to read at all.
    response = api.client.post(moves_url(started), headers=started.seat(position),
                               json={"expected_seq": opts["seq"], "input": "   "})
    error_of(response, 400)
    assert_unchanged(api, started, before)


def test_finished_game_is_409(api: Api, started: Table) -> None:
    api.play(started, 2)
    # Every player resigns: the computer plays all three seats to the end.
    for position in started.tokens:
        response = api.client.post(f"/api/games/{started.uid}/resign",
                                   headers=started.seat(position))
        assert response.status_code == 200
    state = api.state(started.uid)
    assert state["game"]["status"] == "finished" and state["game"]["winner"]
    before = api.observe(started)
    for position in started.tokens:
        response = api.client.post(moves_url(started), headers=started.seat(position),
                                   json={"expected_seq": state["seq"], "input": "end"})
        body = error_of(response, 409)
        assert "finished" in body["error"] and body["game"]["status"] == "finished"
    error_of(api.client.post(f"/api/games/{started.uid}/abandon", headers=started.creator), 409)
    assert_unchanged(api, started, before)
    assert api.service.verify_all() == {}


def test_resent_identical_submission_is_already_applied(api: Api, started: Table) -> None:
    api.play(started, 2)
    position, opts = api.actor(started)
    text = opts["options"][0]
    status, first = api.submit(started, position, opts["seq"], text)
    assert status == 200 and first["applied"] is True and "already_applied" not in first
    before = api.observe(started)
    for resent in (text, f"  {text}  ", text.upper()):
        status, again = api.submit(started, position, opts["seq"], resent)
        assert status == 200, again
        assert again["applied"] is True and again["already_applied"] is True
        assert again["applied_seq"] == opts["seq"] + 1
        assert again["seq"] == first["seq"] and again["view"] == first["view"]
    assert_unchanged(api, started, before)
    # A different text for the same decision is not "already applied": the game moved on.
    other = next((o for o in opts["options"] if o != text), None)
    if other is not None:
        error_of(api.client.post(moves_url(started), headers=started.seat(position),
                                 json={"expected_seq": opts["seq"], "input": other}), 409)
    # Nor is the same text from another seat.
    someone = next(p for p in started.tokens if p != position)
    error_of(api.client.post(moves_url(started), headers=started.seat(someone),
                             json={"expected_seq": opts["seq"], "input": text}), 409)
    assert_unchanged(api, started, before)


def test_resent_winning_submission_is_already_applied(api: Api, started: Table) -> None:
    """The re-sent last move of a game must be answered as applied, not as "finished"."""
    # Two seats resign (the computer plays them); seat 0 plays to the end.
    for position in (1, 2):
        assert api.client.post(f"/api/games/{started.uid}/resign",
                               headers=started.seat(position)).status_code == 200
    last: tuple[int, str] | None = None
    for _ in range(500):
        state = api.state(started.uid)
        if state["game"]["status"] != "active":
            break
        position, opts = api.actor(started)
        assert position == 0
        status, body = api.submit(started, 0, opts["seq"], opts["options"][0])
        assert status == 200, body
        last = (opts["seq"], opts["options"][0])
    assert last is not None
    # Seat 0's last submission ended the game, or the computer's answers after it did.
    before = api.observe(started)
    assert before["spectator"]["game"]["status"] == "finished"
    status, again = api.submit(started, 0, *last)
    assert status == 200, again
    assert again.get("already_applied") is True
    assert_unchanged(api, started, before)


# ---------------------------------------------------------------------- concurrency


def _race(api: Api, threads: int) -> None:
    """``threads`` submissions for the same decision at once: exactly one lands."""
    table = api.new_started(3)
    api.play(table, 1)
    position, opts = api.actor(table)
    before_rows = api.move_count()
    before_seq = opts["seq"]
    choices = opts["options"]
    barrier = threading.Barrier(threads)
    results: list[tuple[int, str, dict[str, Any] | str]] = [(0, "", "")] * threads

    def fire(index: int) -> None:
        client = api.app.test_client()
        text = choices[index % len(choices)]
        barrier.wait(timeout=30)
        try:
            response = client.post(moves_url(table), headers=table.seat(position),
                                   json={"expected_seq": before_seq, "input": text})
            body = response.get_json() if response.is_json else response.get_data(as_text=True)
            results[index] = (response.status_code, text, body)
        except Exception as exc:  # a crash in the app is a failure, reported below
            results[index] = (-1, text, repr(exc))

    workers = [threading.Thread(target=fire, args=(i,)) for i in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=120)
    assert not any(worker.is_alive() for worker in workers)

    def kind(status: int, body: Any) -> str:
        if status == 200 and isinstance(body, dict) and body.get("already_applied"):
            return "already_applied"
        if status == 200 and isinstance(body, dict) and body.get("applied"):
            return "applied"
        return str(status)

    kinds = Counter(kind(status, body) for status, _, body in results)
    problems = [r for r in results if kind(r[0], r[2]) not in ("applied", "already_applied", "409")]
    assert not problems, problems[:3]
    assert kinds["applied"] == 1, kinds
    assert kinds["applied"] + kinds["already_applied"] + kinds["409"] == threads, kinds
    winner = next(text for status, text, body in results if kind(status, body) == "applied")
    # Only a submission with the winner's text may be told it was already applied.
    for status, text, body in results:
        if kind(status, body) == "already_applied":
            assert text == winner
        if status == 409:
            assert isinstance(body, dict) and body["error"] and body["seq"] == before_seq + 1
    assert api.move_count() == before_rows + 1
    log = api.log(table.uid)
    assert len(log) == before_seq + 1
    assert (log[-1]["seq"], log[-1]["seat"], log[-1]["input"]) == (before_seq + 1, position, winner)
    assert api.service.verify_all() == {}


def test_fifty_parallel_submissions_on_postgresql(postgres_url: str) -> None:
    made = make_api(postgres_url, TITANPOST_SNAPSHOT_EVERY="1")  # a snapshot row per move too
    try:
        _race(made, 50)
    finally:
        dispose(made)


def test_twenty_parallel_submissions_on_sqlite(tmp_path: Path) -> None:
    made = make_api(f"sqlite:///{tmp_path / 'race.db'}", TITANPOST_SNAPSHOT_EVERY="1")
    try:
        _race(made, 20)
    finally:
        dispose(made)



def test_me_names_the_seat_of_the_token(api: Api, started: Table) -> None:
    for position in range(len(started.tokens)):
        answer = api.client.get("/api/me", headers=started.seat(position))
        assert answer.status_code == 200
        body = answer.get_json()
        assert (body["game"], body["position"]) == (started.uid, position)
        assert "@" in body["email"]
    assert api.client.get("/api/me").status_code == 401
    assert api.client.get("/api/me", headers={"Authorization": "Bearer nope"}).status_code == 401


# ---------------------------------------------------------------------- setup and pieces


def test_a_game_is_set_up_by_its_setup_and_pieces_or_by_the_older_fields(api: Api) -> None:
    """``setup`` and a seat's ``pieces`` (the game's own JSON) set a game up as ``circuits`` and
    ``titans``/``team`` do; the game's JSON gives both forms."""
    teams = [{"email": f"t{i}@example.com", "pieces": {"titans": [], "team": 1 + i % 2}}
             for i in range(4)]
    teams[0]["pieces"]["titans"] = ["rassik"]
    new = api.new_started(teams, variant="teams", setup={"circuits": ["anglieh"]})
    old = api.new_started([{"email": f"o{i}@example.com", "team": 1 + i % 2,
                            **({"titans": ["rassik"]} if i == 0 else {})} for i in range(4)],
                          variant="teams", circuits=["anglieh"])
    shown = [api.state(table.uid)["game"] for table in (new, old)]
    for game in shown:
        assert game["circuits"] == ["anglieh"] and game["setup"] == {"circuits": ["anglieh"]}
        assert [seat["team"] for seat in game["seats"]] == [1, 2, 1, 2]
        assert game["seats"][0]["titans"] == ["rassik"]
        assert game["seats"][0]["pieces"] == {"titans": ["rassik"], "team": 1}
        assert all(seat["pieces"] == {"titans": seat["titans"], "team": seat["team"]}
                   for seat in game["seats"])
    assert [s["titans"] for s in shown[0]["seats"]] == [s["titans"] for s in shown[1]["seats"]]

    crews = api.new_started([{"email": "a@example.com", "pieces": {"crew": "english"}},
                             {"email": "b@example.com"}], game="great-race",
                            setup={"start": "le-cap"})
    game = api.state(crews.uid)["game"]
    assert game["circuits"] == ["le-cap"] and game["setup"] == {"start": "le-cap"}
    assert (game["seats"][0]["titans"], game["seats"][0]["team"]) == (["english"], None)
    assert game["seats"][0]["pieces"] == {"crew": "english"}
    assert game["seats"][1]["pieces"] == {"crew": game["seats"][1]["titans"][0]}


@pytest.mark.parametrize(("body", "words"), [
    ({"setup": {"circuits": ["kaldheira"]}, "circuits": ["kaldheira"]}, "not both"),
    ({"setup": {"start": "alger"}}, "circuits"),
    ({"setup": ["kaldheira"]}, "setup must be an object"),
    ({"game": "great-race", "setup": {"start": "kaldheira"}}, "purple cities"),
    ({"seats": [{"email": "a@example.com", "pieces": {"crew": "french"}},
                {"email": "b@example.com"}, {"email": "c@example.com"}]}, "pieces"),
    ({"seats": [{"email": "a@example.com", "pieces": ["rassik"]},
                {"email": "b@example.com"}, {"email": "c@example.com"}]}, "pieces must be"),
    ({"seats": [{"email": "a@example.com", "pieces": {"titans": ["rassik"]},
                 "titans": ["craken"]},
                {"email": "b@example.com"}, {"email": "c@example.com"}]}, "not both"),
])
def test_a_setup_or_pieces_the_game_cannot_use_are_refused(api: Api, body: dict[str, Any],
                                                          words: str) -> None:
    seats = [{"email": f"r{i}@example.com"} for i in range(3)]
    response = api.client.post("/api/games", json={"seats": seats, **body})
    assert words in error_of(response, 400)["error"]
    assert api.rows("SELECT count(*) FROM games") == [(0,)]


def test_the_docs_page_loads_nothing_from_another_host(api: Api) -> None:
    """/api/docs works offline: its stylesheet, scripts and icon come from this server."""
    import re

    page = api.client.get("/api/docs")
    assert page.status_code == 200
    assets = re.findall(r'(?:src|href)\s*=\s*"([^"]*)"', page.text)
    assert len(assets) >= 4, assets  # the stylesheet, the icon, the two scripts
    for asset in assets:
        assert not re.match(r"([a-z]+:)?//", asset), asset
        loaded = api.client.get(asset)
        assert loaded.status_code == 200 and loaded.data, asset
    assert "SwaggerUIBundle" in api.client.get(
        next(a for a in assets if a.endswith("bundle.js"))).text
    assert api.client.get("/api/docs/assets/../../config.py").status_code == 404


def test_the_docs_page_can_render_the_document(api: Api) -> None:
    """The bundled Swagger UI (4.x) renders OpenAPI 3.0 only: a 3.1 document left /api/docs
    blank but for "Unable to render this definition" (test_browser shows it rendered)."""
    document = api.client.get("/api/openapi.json").get_json()
    assert document["openapi"].startswith("3.0."), document["openapi"]
    assert document["paths"]
