"""Safe retries: the Idempotency-Key header on the API's POSTs, and the join page's accept
repeated by the same browser (issue 15), on SQLite and PostgreSQL.

A repeat is checked by its answer (the same status and body, ``Idempotent-Replayed: true``)
and by the rows it must not add (counted in the database itself).
"""

from __future__ import annotations

import re
import threading
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from functools import partial
from typing import Any

import pytest
from flask.testing import FlaskClient
from werkzeug.test import TestResponse

from app.features.clock.scheduler import Jobs
from app.features.webhooks.hooks import add_webhook
from app.service import token_hash
from app.web.idempotency import KEEP, LEASE, IdempotencyStore, KeyInUse, Replay, fingerprint
from tests.apifixtures import ADMIN_TOKEN, Api, Table, bearer, dispose, make_api

pytest_plugins = ["tests.apifixtures"]

KEY = "Idempotency-Key"
REPLAYED = "Idempotent-Replayed"
CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')
SEATS = [{"email": "ann@example.com"}, {"email": "bob@example.com"}, {"bot": True}]
GAME = {"seats": SEATS, "name": "Retried"}


def new_key() -> str:
    return str(uuid.uuid4())


def keyed(key: str, **headers: str) -> dict[str, str]:
    return {KEY: key, **headers}


def count(api: Api, table: str) -> int:
    return int(api.scalar(f"SELECT count(*) FROM {table}"))


def counts(api: Api) -> dict[str, int]:
    """The rows an unsafe request may add: a repeat must add none."""
    tables = ("games", "seats", "moves", "api_tokens", "outbox", "absences", "deadlines")
    return {table: count(api, table) for table in tables}


def assert_replayed(first: TestResponse, again: TestResponse) -> None:
    assert again.status_code == first.status_code, again.get_json()
    assert again.get_json() == first.get_json()
    assert again.headers.get(REPLAYED) == "true"
    assert first.headers.get(REPLAYED) is None


def send_twice(api: Api, url: str, body: dict[str, Any] | None = None,
               **headers: str) -> tuple[TestResponse, TestResponse]:
    """The same request twice with one new key; the second must be a replay that adds no
    rows."""
    key = new_key()
    first = api.client.post(url, json=body, headers=keyed(key, **headers))
    assert first.status_code in (200, 201), first.get_json()
    before = counts(api)
    again = api.client.post(url, json=body, headers=keyed(key, **headers))
    assert_replayed(first, again)
    assert counts(api) == before
    return first, again


# ---------------------------------------------------------------------- creating a game


def test_a_repeated_create_replays_the_first_answer_and_creates_nothing(api: Api) -> None:
    first, _ = send_twice(api, "/api/games", GAME)
    assert count(api, "games") == 1 and count(api, "seats") == 3
    created = first.get_json()
    assert created["creator_token"] and len(created["invitations"]) == 2
    assert all(inv["link"].endswith("/join/" + inv["invite_token"])
               for inv in created["invitations"])
    # the replayed tokens are the game's own: the creator token starts it
    waiting = api.client.post(f"/api/games/{created['game']}/start", json={},
                              headers={"X-Creator-Token": created["creator_token"]})
    assert waiting.status_code == 409 and "not every player" in waiting.get_json()["error"]
    # without a key, a second request is a second game, as before
    assert api.client.post("/api/games", json=GAME).status_code == 201
    assert count(api, "games") == 2


def test_the_same_json_spelled_differently_is_the_same_request(api: Api) -> None:
    key = new_key()
    first = api.client.post("/api/games", json=GAME, headers=keyed(key))
    reordered = '{"name": "Retried", "seats": [{"email": "ann@example.com"},' \
                ' {"email": "bob@example.com"}, {"bot": true}]}'
    again = api.client.post("/api/games", data=reordered, headers=keyed(key),
                            content_type="application/json")
    assert_replayed(first, again)
    assert count(api, "games") == 1


def test_the_key_with_another_request_is_refused_and_changes_nothing(api: Api) -> None:
    key = new_key()
    assert api.client.post("/api/games", json=GAME, headers=keyed(key)).status_code == 201
    before = counts(api)
    other = api.client.post("/api/games", json=GAME | {"name": "Another"}, headers=keyed(key))
    assert other.status_code == 422
    assert "different request" in other.get_json()["error"]
    assert counts(api) == before
    # on another path too
    accept = api.client.post("/api/invitations/accept", json={"invite_token": "x" * 20},
                             headers=keyed(key))
    assert accept.status_code == 404  # scoped by path: the key is unknown there


def test_a_bad_key_is_refused(api: Api) -> None:
    for key in ("", "x" * 256, "naïve"):
        refused = api.client.post("/api/games", json=GAME,
                                  headers={KEY: key.encode().decode("latin-1")})
        assert refused.status_code == 400, key
        assert KEY in refused.get_json()["error"]
    assert count(api, "games") == 0


def test_keys_of_different_clients_do_not_collide(api: Api) -> None:
    one, two = api.create(3, prefix="a"), api.create(3, prefix="b")
    for table in (one, two):
        api.accept_all(table)
    key = new_key()
    for table in (one, two):  # each creator's key is its own
        started = api.client.post(f"/api/games/{table.uid}/start", json={},
                                  headers=keyed(key, **table.creator))
        assert started.status_code == 200 and started.headers.get(REPLAYED) is None
        assert started.get_json()["game"] == table.uid
    # two seats of one game, the same key for their away dates: each gets its own
    now = datetime.now(UTC)
    away = {"from": now.isoformat(), "until": (now + timedelta(days=2)).isoformat()}
    answers = [api.client.post("/api/away", json=away, headers=keyed(key, **one.seat(p)))
               for p in (0, 1)]
    assert [a.status_code for a in answers] == [201, 201]
    assert {a.get_json()["email"] for a in answers} == {"a0@example.com", "a1@example.com"}
    assert count(api, "absences") == 2


def test_a_key_lasts_24_hours(api: Api) -> None:
    key = new_key()
    first = api.client.post("/api/games", json=GAME, headers=keyed(key))
    assert_replayed(first, api.client.post("/api/games", json=GAME, headers=keyed(key)))
    _age_keys(api, KEEP + timedelta(hours=1))
    again = api.client.post("/api/games", json=GAME, headers=keyed(key))
    assert again.status_code == 201 and again.headers.get(REPLAYED) is None
    assert again.get_json()["game"] != first.get_json()["game"]
    assert count(api, "games") == 2 and count(api, "idempotency_keys") == 1


def test_the_tick_forgets_keys_older_than_24_hours(api: Api) -> None:
    for _ in range(2):
        api.client.post("/api/games", json=GAME, headers=keyed(new_key()))
    jobs = Jobs(api.service)
    assert jobs.forget_old_keys() == 0
    _age_keys(api, KEEP - timedelta(minutes=1))
    jobs.tick()
    assert count(api, "idempotency_keys") == 2
    _age_keys(api, timedelta(minutes=2))
    jobs.tick()
    assert count(api, "idempotency_keys") == 0
    assert count(api, "games") == 2


def _age_keys(api: Api, by: timedelta) -> None:
    """Move every key's creation (and claim) back by ``by``."""
    with api.engine.begin() as conn:
        rows = conn.exec_driver_sql("SELECT id, created_at, locked_at FROM idempotency_keys")
        for row_id, created, locked in list(rows):
            conn.exec_driver_sql(
                "UPDATE idempotency_keys SET created_at = %s, locked_at = %s WHERE id = %s"
                if api.engine.dialect.name == "postgresql" else
                "UPDATE idempotency_keys SET created_at = ?, locked_at = ? WHERE id = ?",
                (_moment(created) - by, _moment(locked) - by, row_id))


def _moment(value: Any) -> datetime:
    moment = value if isinstance(value, datetime) else datetime.fromisoformat(str(value))
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


# ---------------------------------------------------------------------- in flight, refused


def _store(api: Api) -> IdempotencyStore:
    return IdempotencyStore(api.engine, api.service.settings.secret_key)


def test_a_repeat_while_the_first_is_processed_gets_409(api: Api) -> None:
    key = new_key()
    # the first request has claimed the key and is still running (in another process)
    claim = _store(api).claim("route:/api/games", key, fingerprint("POST", "/api/games", GAME))
    assert not isinstance(claim, Replay)
    busy = api.client.post("/api/games", json=GAME, headers=keyed(key))
    assert busy.status_code == 409 and "still being processed" in busy.get_json()["error"]
    assert count(api, "games") == 0
    # a claim whose process died is taken over after the lease
    _age_keys(api, LEASE + timedelta(seconds=1))
    taken = api.client.post("/api/games", json=GAME, headers=keyed(key))
    assert taken.status_code == 201 and count(api, "games") == 1
    assert_replayed(taken, api.client.post("/api/games", json=GAME, headers=keyed(key)))


def test_the_answer_and_the_game_are_one_transaction(api: Api) -> None:
    """A request whose answer cannot be stored creates nothing: here its claim was taken over
    (its process seemed dead) before it could record the answer."""
    store = _store(api)
    request = fingerprint("POST", "/api/games", GAME)
    slow = store.claim("route:/api/games", "slow-key", request, status=201)
    assert not isinstance(slow, Replay)
    _age_keys(api, LEASE + timedelta(seconds=1))
    assert not isinstance(store.claim("route:/api/games", "slow-key", request), Replay)
    with pytest.raises(KeyInUse):
        api.service.create_game(seats=SEATS, seed=5, idempotency=slow)
    assert count(api, "games") == 0 and count(api, "seats") == 0 and count(api, "outbox") == 0


def test_a_refused_request_keeps_no_answer_and_runs_again(api: Api) -> None:
    table = api.create(3)
    key = new_key()
    url = f"/api/games/{table.uid}/start"
    early = api.client.post(url, json={}, headers=keyed(key, **table.creator))
    assert early.status_code == 409 and "not every player" in early.get_json()["error"]
    assert count(api, "idempotency_keys") == 0
    api.accept_all(table)
    first, _ = send_twice(api, url, {}, **table.creator)
    assert first.get_json()["status"] == "active"


def test_two_concurrent_requests_with_one_key_create_one_game(api: Api) -> None:
    for _round in range(3):
        key = new_key()
        clients = [api.app.test_client() for _ in range(4)]
        answers = _at_once([partial(c.post, "/api/games", json=GAME, headers=keyed(key))
                            for c in clients])
        codes = sorted(a.status_code for a in answers)
        assert set(codes) <= {201, 409} and 201 in codes, codes
        created = {a.get_json()["game"] for a in answers if a.status_code == 201}
        assert len(created) == 1
    assert count(api, "games") == 3


def _at_once(calls: list[Callable[[], TestResponse]]) -> list[TestResponse]:
    """Run ``calls`` in threads released together; their answers."""
    barrier = threading.Barrier(len(calls))
    answers: list[TestResponse | None] = [None] * len(calls)

    def run(index: int) -> None:
        barrier.wait()
        answers[index] = calls[index]()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(calls))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert all(a is not None for a in answers)
    return [a for a in answers if a is not None]


# ---------------------------------------------------------------------- every unsafe POST


def test_a_repeated_accept_gives_the_same_token_and_a_stranger_is_refused(api: Api) -> None:
    table = api.create(3)
    body = {"invite_token": table.invitations[0], "name": "Ann"}
    first, _ = send_twice(api, "/api/invitations/accept", body)
    token = first.get_json()["api_token"]
    assert count(api, "api_tokens") == 1
    assert api.client.get("/api/me", headers=bearer(token)).get_json()["position"] == 0
    for headers in ({}, keyed(new_key())):  # another client: no key, or its own
        stranger = api.client.post("/api/invitations/accept", json=body, headers=headers)
        assert stranger.status_code == 404
        assert "unknown or was already used" in stranger.get_json()["error"]
    assert count(api, "api_tokens") == 1


def test_every_creating_post_replays(api: Api) -> None:
    table = api.create(3)
    fresh = send_twice(api, f"/api/games/{table.uid}/invitations",
                       {"position": 1, "email": "cat@example.com"}, **table.creator)[0]
    assert fresh.status_code == 201 and fresh.get_json()["link"].endswith(
        fresh.get_json()["invite_token"])
    table.invitations[1] = fresh.get_json()["invite_token"]
    api.accept_all(table)
    send_twice(api, f"/api/games/{table.uid}/start", {}, **table.creator)
    replaced = send_twice(api, f"/api/games/{table.uid}/seats/1/replace",
                          {"email": "dan@example.com"}, **table.creator)[0].get_json()
    assert replaced["link"].endswith("/join/" + replaced["invite_token"])
    taken = send_twice(api, "/api/invitations/accept",
                       {"invite_token": replaced["invite_token"]})[0].get_json()
    assert taken["position"] == 1
    now = datetime.now(UTC)
    send_twice(api, "/api/away", {"from": now.isoformat(),
                                  "until": (now + timedelta(days=1)).isoformat()},
               **table.seat(0))
    export = api.client.get(f"/api/admin/games/{table.uid}/export",
                            headers=bearer(ADMIN_TOKEN)).get_json()
    imported = send_twice(api, "/api/admin/games/import", export, **bearer(ADMIN_TOKEN))[0]
    assert imported.status_code == 201


def test_moves_and_other_repeatable_posts_replay_too(api: Api, started: Table) -> None:
    position, opts = api.actor(started)
    move = {"expected_seq": opts["seq"], "input": opts["options"][0]}
    first, _ = send_twice(api, f"/api/games/{started.uid}/moves", move,
                          **started.seat(position))
    assert first.get_json()["applied"] is True
    send_twice(api, f"/api/games/{started.uid}/pause", {"reason": "dinner"},
               **started.creator)
    send_twice(api, f"/api/games/{started.uid}/resume", None, **started.creator)


def test_stored_answers_hold_no_secret_in_the_clear(api: Api) -> None:
    key = new_key()
    created = api.client.post("/api/games", json=GAME, headers=keyed(key)).get_json()
    table = Table(created["game"], created["creator_token"],
                  {i["position"]: i["invite_token"] for i in created["invitations"]}, {})
    token_key = new_key()
    accepted = api.client.post("/api/invitations/accept",
                               json={"invite_token": table.invitations[0]},
                               headers=keyed(token_key)).get_json()
    secrets = [created["creator_token"], accepted["api_token"], key, token_key,
               *table.invitations.values()]
    stored = " ".join(str(value) for row in api.rows("SELECT * FROM idempotency_keys")
                      for value in row)
    assert all(secret not in stored for secret in secrets)
    # the answer cannot be read without the key
    other = _store(api).find("route:/api/games", new_key(), fingerprint("POST", "/api/games",
                                                                          GAME))
    assert other is None


def test_the_api_documents_the_header(api: Api) -> None:
    doc = api.client.get("/api/openapi.json").get_json()
    assert KEY in doc["info"]["description"]
    for path in ("/api/games", "/api/invitations/accept", "/api/games/{uid}/start",
                 "/api/games/{uid}/invitations", "/api/away", "/api/admin/games/import",
                 "/api/games/{uid}/seats/{position}/replace", "/api/games/{uid}/moves"):
        operation = doc["paths"][path]["post"]
        assert any(p["name"] == KEY and p["in"] == "header"
                   for p in operation.get("parameters", [])), path
        assert {"409", "422"} <= set(operation["responses"]), path


# ---------------------------------------------------------------------- the join page


def _browser(api: Api) -> FlaskClient:
    client: FlaskClient = api.app.test_client()
    return client


def _take_seat(client: FlaskClient, token: str, name: str = "Ann") -> TestResponse:
    page = client.get(f"/join/{token}")
    assert page.status_code == 200, page.text
    found = CSRF.search(page.text)
    assert found
    return client.post(f"/join/{token}", data={"csrf_token": found.group(1), "name": name})


def _api_token_shown(client: FlaskClient, uid: str) -> str:
    """The seat this browser plays in game ``uid``, as its settings page says (the seat's API
    token is not shown at joining: issue 38; one api_tokens row per seat tells that the seat
    was taken once)."""
    page = client.get(f"/games/{uid}/me")
    assert page.status_code == 200, page.text
    found = re.search(r"You play seat (\d+)", page.text)
    assert found, page.text
    return found.group(1)


def test_the_same_browser_can_accept_again_and_a_stranger_cannot(api: Api) -> None:
    table = api.create(3)
    token = table.invitations[0]
    ann = _browser(api)
    taken = _take_seat(ann, token)
    assert taken.status_code == 303 and taken.location.endswith(f"/games/{table.uid}")
    shown = _api_token_shown(ann, table.uid)
    before = counts(api)
    # pressed again (say the back button and the form once more): the same seat and token
    assert ann.get(f"/join/{token}").location.endswith(f"/games/{table.uid}")
    again = ann.post(f"/join/{token}", data={"csrf_token": _csrf(ann), "name": "Ann"})
    assert again.status_code == 303 and again.location.endswith(f"/games/{table.uid}")
    assert _api_token_shown(ann, table.uid) == shown
    assert counts(api) == before
    # another browser gets the refusal it always got
    stranger = _browser(api)
    refused = stranger.get(f"/join/{token}")
    assert refused.status_code == 404 and "already used" in refused.text
    posted = stranger.post(f"/join/{token}", data={"csrf_token": _csrf(stranger),
                                                   "name": "Eve"})
    assert posted.status_code == 404 and "already used" in posted.text
    assert counts(api) == before
    assert count(api, "idempotency_keys") == 1  # the stranger's refused try left no key


def _csrf(client: FlaskClient) -> str:
    """A CSRF token of the browser's session (from the new game form)."""
    found = CSRF.search(client.get("/new").text)
    assert found
    return found.group(1)


def test_a_browser_whose_answer_was_lost_takes_its_seat_again(api: Api) -> None:
    table = api.create(3)
    token = table.invitations[1]
    ben = _browser(api)
    page = ben.get(f"/join/{token}")
    csrf = CSRF.search(page.text)
    assert csrf
    cookie = ben.get_cookie("session")
    assert cookie is not None
    taken = ben.post(f"/join/{token}", data={"csrf_token": csrf.group(1), "name": "Ben"})
    assert taken.status_code == 303
    shown = _api_token_shown(ben, table.uid)
    # the answer never arrived: the browser still has the cookie it had before posting
    lost = _browser(api)
    lost.set_cookie("session", cookie.value)
    page = lost.get(f"/join/{token}")
    assert page.status_code == 200 and "Take my seat" in page.text  # still offered to it
    csrf = CSRF.search(page.text)
    assert csrf
    retried = lost.post(f"/join/{token}", data={"csrf_token": csrf.group(1), "name": "Ben"})
    assert retried.status_code == 303 and retried.location.endswith(f"/games/{table.uid}")
    assert _api_token_shown(lost, table.uid) == shown
    assert count(api, "api_tokens") == 1
    # once the seat is back, the invitation page takes it to the game
    assert lost.get(f"/join/{token}").status_code == 303


def test_a_replaced_seat_is_not_taken_back_by_its_old_browser(api: Api) -> None:
    table = api.create(3)
    token = table.invitations[1]
    ben = _browser(api)
    assert _take_seat(ben, token).status_code == 303
    api.accept_all(Table(table.uid, table.creator_token,
                         {p: table.invitations[p] for p in (0, 2)}, {}))
    api.client.post(f"/api/games/{table.uid}/start", json={}, headers=table.creator)
    replaced = api.client.post(f"/api/games/{table.uid}/seats/1/replace",
                               json={"computer": True}, headers=table.creator)
    assert replaced.status_code == 200, replaced.get_json()
    assert ben.get(f"/join/{token}").status_code == 404
    again = ben.post(f"/join/{token}", data={"csrf_token": _csrf(ben), "name": "Ben"})
    assert again.status_code == 404 and "already used" in again.text


# ---------------------------------------------------------------------- adding a webhook

HOOK = {"url": "http://127.0.0.1:9/hook", "format": "json"}
"""A webhook on loopback (taken with TITANPOST_WEBHOOK_ALLOW_PRIVATE; never posted to here)."""


@pytest.fixture
def hooked(migrated_database_url: str) -> Iterator[Api]:
    """The app on each kind of database, taking webhooks on loopback."""
    made = make_api(migrated_database_url, TITANPOST_WEBHOOK_ALLOW_PRIVATE="1")
    yield made
    dispose(made)


def test_a_repeated_webhook_add_replays_and_adds_one_webhook(hooked: Api) -> None:
    table = hooked.create(3)
    url = f"/api/games/{table.uid}/webhooks"
    first, _ = send_twice(hooked, url, HOOK, **table.creator)
    assert first.status_code == 201 and first.get_json()["url"] == HOOK["url"]
    assert count(hooked, "webhooks") == 1
    listed = hooked.client.get(url, headers=table.creator).get_json()["webhooks"]
    added = first.get_json()
    assert added.pop("secret").startswith("whsec_")  # (in the answer only, never listed)
    assert listed == [added]
    # the same webhook again with a new key is a second request: a second webhook
    second = hooked.client.post(url, json=HOOK, headers=keyed(new_key(), **table.creator))
    assert second.status_code == 201 and second.get_json()["id"] != first.get_json()["id"]
    assert count(hooked, "webhooks") == 2


def test_the_webhook_and_its_answer_are_one_transaction(hooked: Api) -> None:
    """The first request's answer cannot be stored (its claim was taken over: its process
    seemed dead): no webhook is added. A retry then adds it once and a repeat replays that."""
    table = hooked.create(3)
    url = f"/api/games/{table.uid}/webhooks"
    scope = "credential:" + token_hash("\0".join(["", table.creator_token]))
    request = fingerprint("POST", url, HOOK)
    store = _store(hooked)
    slow = store.claim(scope, "hook-key", request, status=201)
    assert not isinstance(slow, Replay)
    _age_keys(hooked, LEASE + timedelta(seconds=1))
    assert not isinstance(store.claim(scope, "hook-key", request, status=201), Replay)
    with pytest.raises(KeyInUse):
        add_webhook(hooked.service, table.uid, table.creator_token, HOOK["url"], HOOK["format"],
                    idempotency=slow)
    assert count(hooked, "webhooks") == 0
    busy = hooked.client.post(url, json=HOOK, headers=keyed("hook-key", **table.creator))
    assert busy.status_code == 409 and "still being processed" in busy.get_json()["error"]
    # the request that took the key over died too: after the lease a retry adds the webhook
    _age_keys(hooked, LEASE + timedelta(seconds=1))
    retried = hooked.client.post(url, json=HOOK, headers=keyed("hook-key", **table.creator))
    assert retried.status_code == 201, retried.get_json()
    assert retried.headers.get(REPLAYED) is None
    assert count(hooked, "webhooks") == 1
    again = hooked.client.post(url, json=HOOK, headers=keyed("hook-key", **table.creator))
    assert_replayed(retried, again)
    assert count(hooked, "webhooks") == 1
