"""Rate limits on signed links, invitations (login) and refused tokens, per client address.

The app runs in-process on a migrated SQLite database with small limits; each request names its
client address through the WSGI ``REMOTE_ADDR`` (and ``X-Forwarded-For`` behind a trusted
proxy). Over a limit the answer is 429 with ``Retry-After``, JSON on the API and a page on the
links, and nothing changes; another address is unaffected; valid tokens never count. One test
shares the counters of two app instances through the Redis server at 127.0.0.1:6379 (skipped,
with the reason, where none answers).
"""

from __future__ import annotations

import re
import socket
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from flask.testing import FlaskClient
from werkzeug.test import TestResponse

from app.core.config import ConfigError, Settings
from app.web.links import option_link
from tests.apifixtures import Api, Table, base_env, bearer, dispose, make_api

pytest_plugins = ["tests.apifixtures"]

LIMIT = 3
CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')
ANN, BEN = "198.51.100.7", "203.0.113.9"
PROXY = "127.0.0.1"
WRONG = bearer("not-a-token-of-this-server-0123456789")


def at(address: str, **headers: str) -> dict[str, Any]:
    """Keyword arguments of a test-client request coming from ``address``."""
    return {"environ_base": {"REMOTE_ADDR": address}, "headers": headers}


def limited_api(tmp_path: Any, **env: str) -> Api:
    limits = {"TITANPOST_RATE_LIMIT_LINKS": f"{LIMIT}/minute",
              "TITANPOST_RATE_LIMIT_LOGIN": f"{LIMIT}/minute"}
    return make_api(f"sqlite:///{tmp_path / 'limits.db'}", **(limits | env))


@pytest.fixture
def api(tmp_path: Any) -> Iterator[Api]:
    made = limited_api(tmp_path)
    yield made
    dispose(made)


def assert_too_many(response: TestResponse, *, json: bool) -> int:
    """A 429 with a Retry-After of at most a minute, and a message saying what to do."""
    assert response.status_code == 429, response.get_data(as_text=True)[:300]
    seconds = int(response.headers["Retry-After"])
    assert 1 <= seconds <= 61  # the window of a minute, rounded up to whole seconds
    if json:
        body = response.get_json()
        assert "nothing was changed" in body["error"] and body["retry_after"] == seconds
    else:
        assert response.mimetype == "text/html"
        text = response.get_data(as_text=True)
        assert "Too many requests" in text and f"Try again in {seconds} seconds" in text
    return seconds


def option_path(api: Api, table: Table) -> tuple[str, int]:
    """The path of a signed link that plays the first legal option, and the seq it answers."""
    svc = api.service
    position = svc.state(table.uid, None)["game"]["to_act"][0]
    options = svc.options(table.uid, position)
    url = option_link(svc.settings, svc.link_seat(table.uid, position).secret, table.uid,
                      position, options["seq"], options["options"][0])
    return url.removeprefix(svc.settings.base_url), options["seq"]


# ---------------------------------------------------------------------------------- links


def test_link_pages_are_limited_per_address_and_a_refused_post_changes_nothing(
    api: Api,
) -> None:
    table = api.new_started(3)
    path, seq = option_path(api, table)
    client = api.client
    page = client.get(path, **at(BEN))  # Ben's browser: a confirm page and its CSRF token
    assert page.status_code == 200
    token = CSRF.search(page.get_data(as_text=True))
    assert token is not None
    for _ in range(LIMIT):
        assert client.get("/l/forged-or-damaged", **at(ANN)).status_code == 400
    moves = api.move_count()
    limited = client.post(path, data={"csrf_token": token.group(1)}, **at(ANN))
    assert_too_many(limited, json=False)
    assert limited.headers["Cache-Control"] == "no-store"
    assert_too_many(client.get(path, **at(ANN)), json=False)
    assert_too_many(client.get("/g/anything", **at(ANN)), json=False)
    assert api.move_count() == moves and api.log(table.uid) == []
    # Ben is another address: his confirm button still plays the move (his second request).
    played = client.post(path, data={"csrf_token": token.group(1)}, **at(BEN))
    assert played.status_code == 303, played.get_data(as_text=True)[:300]
    assert [m["seq"] for m in api.log(table.uid)] == [seq + 1]


# ---------------------------------------------------------------------------------- login


def test_wrong_invitations_are_limited_and_then_even_a_good_one_waits(api: Api) -> None:
    table = api.create(3)
    good = table.invitations[0]
    for attempt in range(LIMIT):
        wrong = {"invite_token": f"guessed-invitation-{attempt:04d}"}
        assert api.client.post("/api/invitations/accept", json=wrong, **at(ANN)).status_code \
            == 404
    refused = api.client.post("/api/invitations/accept", json={"invite_token": good}, **at(ANN))
    assert_too_many(refused, json=True)
    assert_too_many(api.client.get(f"/join/{good}", **at(ANN)), json=False)
    # one login limit: the API's tokens from that address wait too
    assert_too_many(api.client.get("/api/me", **at(ANN, **WRONG)), json=True)
    assert api.scalar("SELECT count(*) FROM api_tokens") == 0  # the seat was not taken
    taken = api.client.post("/api/invitations/accept", json={"invite_token": good}, **at(BEN))
    assert taken.status_code == 201


def test_accepting_invitations_never_counts(api: Api) -> None:
    """Only refusals count: a creator seating more players than the limit is never slowed."""
    for _ in range(2):
        table = api.create(3)
        for invitation in table.invitations.values():
            response = api.client.post("/api/invitations/accept",
                                       json={"invite_token": invitation}, **at(ANN))
            assert response.status_code == 201


def test_wrong_admin_and_creator_tokens_on_the_pages_count(api: Api) -> None:
    table = api.create(3)
    form = CSRF.search(api.client.get("/admin/login", **at(ANN)).get_data(as_text=True))
    assert form is not None
    csrf = form.group(1)
    wrong_admin = {"csrf_token": csrf, "token": "not the admin token"}
    wrong_creator = {"csrf_token": csrf, "creator_token": "not the creator token"}
    assert api.client.post("/admin/login", data=wrong_admin, **at(ANN)).status_code == 403
    assert api.client.post(f"/games/{table.uid}/setup", data=wrong_creator,
                           **at(ANN)).status_code == 403
    assert api.client.post("/admin/login", data=wrong_admin, **at(ANN)).status_code == 403
    assert_too_many(api.client.post("/admin/login", data=wrong_admin, **at(ANN)), json=False)


# ------------------------------------------------------------------------ tokens on the API


def test_refused_tokens_are_limited_but_valid_ones_never_count(api: Api) -> None:
    table = api.new_started(3)
    seat = table.seat(0)
    position, options = api.actor(table)
    other = next(p for p in table.tokens if p != position)
    move = {"expected_seq": options["seq"], "input": options["options"][0]}
    for _ in range(10 * LIMIT):  # valid tokens, and requests without any: never limited
        assert api.client.get("/api/me", **at(ANN, **seat)).status_code == 200
        assert api.client.get(f"/api/games/{table.uid}", **at(ANN)).status_code == 200
        # a valid token's other refusals (a move out of turn) are no guesses either
        assert api.client.post(f"/api/games/{table.uid}/moves", json=move,
                               **at(ANN, **table.seat(other))).status_code == 403
    assert api.client.post(f"/api/games/{table.uid}/abandon",
                           **at(ANN, **{"X-Creator-Token": "guessed"})).status_code == 403
    for _ in range(LIMIT - 1):
        assert api.client.get("/api/me", **at(ANN, **WRONG)).status_code == 401
    before = api.observe(table)
    assert_too_many(api.client.get("/api/me", **at(ANN, **WRONG)), json=True)
    # Over the limit, a valid token from that address waits too (else a guess would show),
    refused = api.client.post(f"/api/games/{table.uid}/moves", json=move,
                              **at(ANN, **table.seat(position)))
    assert_too_many(refused, json=True)
    assert api.observe(table) == before
    # ... while requests without credentials, and every other address, go on as before.
    assert api.client.get(f"/api/games/{table.uid}", **at(ANN)).status_code == 200
    played = api.client.post(f"/api/games/{table.uid}/moves", json=move,
                             **at(BEN, **table.seat(position)))
    assert played.status_code == 200 and played.get_json()["applied"] is True


# --------------------------------------------------------------------- the client's address


def exhaust_from(client: FlaskClient, forwarded_for: str) -> None:
    for _ in range(LIMIT):
        response = client.get("/api/me", **at(PROXY, **WRONG, **{"X-Forwarded-For": forwarded_for}))
        assert response.status_code == 401


def test_behind_a_trusted_proxy_the_forwarded_address_counts(tmp_path: Any) -> None:
    api = limited_api(tmp_path, TITANPOST_TRUSTED_PROXIES="1")
    try:
        exhaust_from(api.client, ANN)
        again = api.client.get("/api/me", **at(PROXY, **WRONG, **{"X-Forwarded-For": ANN}))
        assert_too_many(again, json=True)
        # the proxy appends the real peer: a client cannot pick its address by sending one
        spoofed = api.client.get("/api/me", **at(PROXY, **WRONG,
                                                 **{"X-Forwarded-For": f"{BEN}, {ANN}"}))
        assert_too_many(spoofed, json=True)
        other = api.client.get("/api/me", **at(PROXY, **WRONG, **{"X-Forwarded-For": BEN}))
        assert other.status_code == 401
    finally:
        dispose(api)


def test_without_trusted_proxies_a_forwarded_header_is_ignored(api: Api) -> None:
    exhaust_from(api.client, ANN)
    for spoofed in (BEN, "192.0.2.1", ANN):
        response = api.client.get("/api/me", **at(PROXY, **WRONG, **{"X-Forwarded-For": spoofed}))
        assert_too_many(response, json=True)
    assert api.client.get("/api/me", **at(BEN, **WRONG)).status_code == 401


# --------------------------------------------------------------------- settings and storage


def test_limit_settings() -> None:
    env = base_env("sqlite://")
    default = Settings.from_env({k: v for k, v in env.items() if "RATE_LIMIT" not in k})
    assert (default.rate_limit_links, default.rate_limit_login) == ("60/minute", "10/minute")
    assert (default.rate_limit_storage, default.trusted_proxies) == ("memory://", 0)
    for off in ("0", "off", "OFF"):
        settings = Settings.from_env(env | {"TITANPOST_RATE_LIMIT_LINKS": off,
                                            "TITANPOST_RATE_LIMIT_LOGIN": off})
        assert (settings.rate_limit_links, settings.rate_limit_login) == (None, None)
    good = Settings.from_env(env | {"TITANPOST_RATE_LIMIT_LOGIN": "5 per minute; 50/hour",
                                    "TITANPOST_RATE_LIMIT_STORAGE": "redis://cache:6379/2",
                                    "TITANPOST_TRUSTED_PROXIES": "1"})
    assert (good.rate_limit_login, good.rate_limit_storage, good.trusted_proxies) == (
        "5 per minute; 50/hour", "redis://cache:6379/2", 1)
    for name, bad in (("TITANPOST_RATE_LIMIT_LINKS", "lots"),
                      ("TITANPOST_RATE_LIMIT_STORAGE", "/tmp/limits"),
                      ("TITANPOST_TRUSTED_PROXIES", "-1")):
        with pytest.raises(ConfigError, match=name):
            Settings.from_env(env | {name: bad})


def test_limits_off_let_everything_through(tmp_path: Any) -> None:
    api = limited_api(tmp_path, TITANPOST_RATE_LIMIT_LINKS="off", TITANPOST_RATE_LIMIT_LOGIN="0")
    try:
        for _ in range(3 * LIMIT):
            assert api.client.get("/api/me", **at(ANN, **WRONG)).status_code == 401
            assert api.client.get("/l/damaged", **at(ANN)).status_code == 400
    finally:
        dispose(api)


def _redis_reason() -> str | None:
    try:
        with socket.create_connection(("127.0.0.1", 6379), timeout=2) as sock:
            sock.sendall(b"PING\r\n")
            if sock.recv(16).startswith(b"+PONG"):
                return None
            return "the server at 127.0.0.1:6379 does not answer PING like Redis"
    except OSError as exc:
        return f"no Redis server at 127.0.0.1:6379: {exc}"


def test_two_instances_share_their_counters_through_redis(tmp_path: Any) -> None:
    reason = _redis_reason()
    if reason is not None:
        pytest.skip(reason)
    env = {"TITANPOST_RATE_LIMIT_STORAGE": "redis://127.0.0.1:6379/0"}
    first = limited_api(tmp_path, **env)
    second = make_api(first.url, **env, TITANPOST_RATE_LIMIT_LOGIN=f"{LIMIT}/minute")
    address = f"2001:db8::{uuid.uuid4().hex[:4]}:{uuid.uuid4().hex[:4]}"  # this run's own key
    try:
        assert first.client.get("/api/me", **at(address, **WRONG)).status_code == 401
        assert second.client.get("/api/me", **at(address, **WRONG)).status_code == 401
        assert first.client.get("/api/me", **at(address, **WRONG)).status_code == 401
        assert_too_many(second.client.get("/api/me", **at(address, **WRONG)), json=True)
        assert_too_many(first.client.get("/api/me", **at(address, **WRONG)), json=True)
    finally:
        dispose(second)
        dispose(first)
