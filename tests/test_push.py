"""Web Push (app/features/push/notifications.py, app/features/push/pages.py): a browser's
subscription stored per seat from the settings page, a "your turn" row written in the move's
transaction, and the worker posting it, encrypted, to a push service played by a real HTTP server on
loopback. The test makes the subscription's keys itself, so it decrypts what the server sent
(http_ece)."""

from __future__ import annotations

import base64
import json
import os
import struct
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import http_ece
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from flask.testing import FlaskClient

from app.core.models import utcnow
from app.features.push import notifications as push
from app.features.push.notifications import (
    PushRefused,
    PushSender,
    checked_subscription,
    vapid_keys,
)
from app.web.browser_seats import store_seat
from tests.apifixtures import Api, Table, dispose, make_api
from tests.netutil import serve_in_thread
from tests.test_pages import csrf

pytest_plugins = ["tests.apifixtures"]


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: bytes


@dataclass
class PushService:
    """A push service on loopback: keeps every POST, answers ``answers`` in order, then 201."""

    url: str
    received: list[Received] = field(default_factory=list)
    answers: list[int] = field(default_factory=list)


@pytest.fixture
def push_service() -> Iterator[PushService]:
    state = PushService(url="")

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            headers = {name.lower(): value for name, value in self.headers.items()}
            state.received.append(Received(self.path, headers, self.rfile.read(length)))
            self.send_response(state.answers.pop(0) if state.answers else 201)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    serve_in_thread(server)
    state.url = f"http://127.0.0.1:{server.server_address[1]}"
    yield state
    server.shutdown()
    server.server_close()


@pytest.fixture
def api(migrated_database_url: str) -> Iterator[Api]:
    made = make_api(migrated_database_url, TITANPOST_WEBHOOK_ALLOW_PRIVATE="1")
    yield made
    dispose(made)


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


@dataclass
class Device:
    """A browser's subscription: the keys the push service's messages are encrypted for."""

    endpoint: str
    key: ec.EllipticCurvePrivateKey
    auth: bytes

    def json(self) -> dict[str, Any]:
        point = self.key.public_key().public_bytes(serialization.Encoding.X962,
                                                   serialization.PublicFormat.UncompressedPoint)
        return {"endpoint": self.endpoint, "keys": {"p256dh": b64url(point),
                                                    "auth": b64url(self.auth)}}

    def read(self, body: bytes) -> dict[str, Any]:
        plain = http_ece.decrypt(body, private_key=self.key, auth_secret=self.auth,
                                 version="aes128gcm")
        data: dict[str, Any] = json.loads(plain)
        return data


def device(service: PushService, name: str) -> Device:
    return Device(f"{service.url}/send/{name}", ec.generate_private_key(ec.SECP256R1()),
                  os.urandom(16))


def seat_browser(api: Api, table: Table, position: int) -> FlaskClient:
    """A browser that plays seat ``position`` (as after following a link from its mail)."""
    client: FlaskClient = api.app.test_client()
    secret = api.scalar("SELECT s.secret FROM seats s JOIN games g ON g.id = s.game_id "
                        "WHERE g.uid = :uid AND s.position = :p", uid=table.uid, p=position)
    with client.session_transaction() as session:
        store_seat(session, table.uid, position, secret)
    return client


def subscribe(api: Api, table: Table, position: int, dev: Device,
              expect: int = 200) -> dict[str, Any]:
    client = seat_browser(api, table, position)
    token = csrf(client, f"/games/{table.uid}/me")
    answer = client.post(f"/games/{table.uid}/me/push", json=dev.json(),
                         headers={"X-CSRFToken": token})
    assert answer.status_code == expect, answer.text
    data: dict[str, Any] = answer.get_json()
    return data


def ready(api: Api, push_service: PushService) -> tuple[Table, dict[int, Device]]:
    """A 3-seat game whose seats each subscribed one device, started."""
    table = api.accept_all(api.create(3, name="Push Race"))
    devices = {p: device(push_service, f"seat{p}") for p in range(3)}
    for position, dev in devices.items():
        subscribe(api, table, position, dev)
    api.start(table)
    return table, devices


def outbox(api: Api) -> list[tuple[Any, ...]]:
    return api.rows("SELECT subscription_id, seq, attempts, sent_at IS NOT NULL, last_error "
                    "FROM push_outbox ORDER BY id")


def test_your_turn_is_pushed_encrypted_to_the_seat_to_act(
        api: Api, push_service: PushService) -> None:
    table, devices = ready(api, push_service)
    to_act = api.to_act(table.uid, table.tokens[0])
    assert len(outbox(api)) == len(to_act)  # written with the start, one per device to act
    report = PushSender(api.service).run_once()
    assert report.sent == len(to_act) and report.claimed == len(to_act)
    assert sorted(r.path for r in push_service.received) == sorted(
        f"/send/seat{p}" for p in to_act)
    link = f"{api.service.settings.base_url}/games/{table.uid}"
    public = api.client.get("/push/key").get_json()["public_key"]
    assert public == vapid_keys(api.engine).public_key
    for received in push_service.received:
        dev = devices[int(received.path.removeprefix("/send/seat"))]
        assert dev.read(received.body) == {"title": "Your turn", "body": "Your turn in Push Race.",
                                           "url": link, "tag": f"titanpost-{table.uid}"}
        assert received.headers["content-encoding"] == "aes128gcm"
        assert int(received.headers["ttl"]) == push.TTL_SECONDS
        assert f"k={public}" in received.headers["authorization"]
        assert received.headers["authorization"].startswith("vapid t=")
        # (the body is ciphertext: the game's name cannot be read from it)
        assert b"Push Race" not in received.body
    assert all(row[3] for row in outbox(api))
    # sent rows are never sent again
    assert PushSender(api.service).run_once(utcnow() + timedelta(days=1)).claimed == 0


def test_an_expired_subscription_is_dropped(api: Api, push_service: PushService) -> None:
    table, _ = ready(api, push_service)
    to_act = api.to_act(table.uid, table.tokens[0])
    push_service.answers = [410] * len(to_act)
    before = api.scalar("SELECT count(*) FROM push_subscriptions")
    report = PushSender(api.service).run_once()
    assert report.dropped == len(to_act) and report.sent == 0
    assert api.scalar("SELECT count(*) FROM push_subscriptions") == before - len(to_act)
    assert outbox(api) == []  # (the dropped subscription's rows went with it)


def test_a_failed_push_is_retried_with_backoff(api: Api, push_service: PushService) -> None:
    table, _ = ready(api, push_service)
    count = len(api.to_act(table.uid, table.tokens[0]))
    push_service.answers = [503] * count
    now = utcnow()
    assert PushSender(api.service).run_once(now).failed == count
    assert [row[2:] for row in outbox(api)] == [(1, False, "HTTP 503: ")] * count
    assert PushSender(api.service).run_once(now + timedelta(seconds=30)).claimed == 0
    assert PushSender(api.service).run_once(now + timedelta(minutes=2)).sent == count
    # a refusal that is no 404/410 gives the row up without dropping the subscription
    api.play(table, 1)
    push_service.answers = [400] * 5  # (past a step's continuation delay, 10 minutes)
    report = PushSender(api.service).run_once(utcnow() + timedelta(minutes=11))
    assert report.gave_up == report.claimed >= 1
    assert api.scalar("SELECT count(*) FROM push_subscriptions") == 3


def test_a_decision_answered_before_the_push_is_skipped(
        api: Api, push_service: PushService) -> None:
    table, _ = ready(api, push_service)
    first = len(outbox(api))
    api.play(table, 1)
    rows = outbox(api)
    assert len(rows) > first  # the next decision's row(s)
    report = PushSender(api.service).run_once(utcnow() + timedelta(minutes=2))
    answered = [row for row in outbox(api)[:first]
                if row[4] and row[4].startswith("skipped: the decision was answered")]
    assert report.skipped >= 1 and len(answered) == report.skipped


def test_no_push_when_the_player_turned_turn_mails_off(
        api: Api, push_service: PushService) -> None:
    table = api.accept_all(api.create(3, name="Quiet"))
    for position in range(3):
        subscribe(api, table, position, device(push_service, f"s{position}"))
        answer = api.client.patch(f"/api/games/{table.uid}/me/settings",
                                  json={"mail": "none"}, headers=table.seat(position))
        assert answer.status_code == 200, answer.get_json()
    api.start(table)
    assert outbox(api) == []


def test_a_mail_setting_changed_after_the_row_skips_it(
        api: Api, push_service: PushService) -> None:
    table, _ = ready(api, push_service)
    for position in api.to_act(table.uid, table.tokens[0]):
        answer = api.client.patch(f"/api/games/{table.uid}/me/settings",
                                  json={"mail": "digest"}, headers=table.seat(position))
        assert answer.status_code == 200, answer.get_json()
    report = PushSender(api.service).run_once()
    assert report.skipped == report.claimed >= 1 and push_service.received == []


def test_quiet_hours_hold_the_push_until_they_end(api: Api, push_service: PushService) -> None:
    table = api.accept_all(api.create(3, name="Night"))
    now = datetime.now(UTC)
    start, end = (now - timedelta(hours=1)).strftime("%H:00"), (now + timedelta(hours=2))
    quiet = f"{start}-{end.strftime('%H:00')}"
    for position in range(3):
        subscribe(api, table, position, device(push_service, f"n{position}"))
        answer = api.client.patch(f"/api/games/{table.uid}/me/settings",
                                  json={"quiet": quiet, "timezone": "UTC"},
                                  headers=table.seat(position))
        assert answer.status_code == 200, answer.get_json()
    api.start(table)
    held = api.rows("SELECT next_attempt_at FROM push_outbox")
    quiet_end = end.replace(minute=0, second=0, microsecond=0)
    assert held and all(_utc(row[0]) == quiet_end for row in held)
    assert PushSender(api.service).run_once().claimed == 0
    report = PushSender(api.service).run_once(quiet_end + timedelta(seconds=1))
    assert report.sent == len(held) and len(push_service.received) == len(held)


def _utc(moment: Any) -> datetime:
    value = datetime.fromisoformat(moment) if isinstance(moment, str) else moment
    assert isinstance(value, datetime)
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def test_subscribing_renews_and_removing_forgets(api: Api, push_service: PushService) -> None:
    table = api.accept_all(api.create(3))
    dev = device(push_service, "phone")
    assert subscribe(api, table, 1, dev)["subscribed"] is True
    renewed = Device(dev.endpoint, ec.generate_private_key(ec.SECP256R1()), os.urandom(16))
    subscribe(api, table, 1, renewed)  # the same endpoint with new keys: one row, new keys
    assert api.rows("SELECT endpoint, p256dh FROM push_subscriptions") == [
        (dev.endpoint, renewed.json()["keys"]["p256dh"])]
    client = seat_browser(api, table, 1)
    token = csrf(client, f"/games/{table.uid}/me")
    gone = client.post(f"/games/{table.uid}/me/push/remove", json={"endpoint": dev.endpoint},
                       headers={"X-CSRFToken": token})
    assert gone.status_code == 200 and gone.get_json()["removed"] is True
    assert api.scalar("SELECT count(*) FROM push_subscriptions") == 0


def test_a_subscription_needs_the_seat_the_csrf_token_and_valid_keys(
        api: Api, push_service: PushService) -> None:
    table = api.accept_all(api.create(3))
    dev = device(push_service, "x")
    stranger = api.app.test_client()
    assert stranger.post(f"/games/{table.uid}/me/push", json=dev.json()).status_code == 400
    client = seat_browser(api, table, 0)
    token = csrf(client, f"/games/{table.uid}/me")
    assert client.post(f"/games/{table.uid}/me/push", json=dev.json()).status_code == 400
    bad = dev.json() | {"keys": {"p256dh": "AAAA", "auth": "AAAA"}}
    refused = client.post(f"/games/{table.uid}/me/push", json=bad,
                          headers={"X-CSRFToken": token})
    assert refused.status_code == 400
    assert refused.get_json()["message"] == "the push subscription's keys are not valid"
    assert api.scalar("SELECT count(*) FROM push_subscriptions") == 0


def test_a_private_push_address_is_refused_unless_allowed(push_service: PushService) -> None:
    dev = device(push_service, "lan").json()
    with pytest.raises(PushRefused, match="address is not allowed"):
        checked_subscription(dev, allow_private=False)
    assert checked_subscription(dev, allow_private=True)[0] == dev["endpoint"]


def test_the_vapid_key_is_made_once_and_kept(api: Api) -> None:
    first = vapid_keys(api.engine)
    push._KEY_CACHE.clear()  # (a new process: read back from the database)
    assert vapid_keys(api.engine) == first
    assert api.scalar("SELECT count(*) FROM push_keys") == 1


def test_a_seat_given_to_someone_else_forgets_its_devices(
        api: Api, push_service: PushService) -> None:
    table, _ = ready(api, push_service)
    answer = api.client.post(f"/api/games/{table.uid}/seats/2/replace",
                             json={"email": "new@example.com"}, headers=table.creator)
    assert answer.status_code == 200, answer.get_json()
    assert api.scalar("SELECT count(*) FROM push_subscriptions") == 2


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def test_the_manifest_names_icons_that_exist(api: Api) -> None:
    answer = api.client.get("/manifest.webmanifest")
    assert answer.status_code == 200 and answer.mimetype == "application/manifest+json"
    manifest = answer.get_json()
    assert manifest["name"] == "Titan Post" and manifest["display"] == "standalone"
    assert manifest["start_url"] == "/" and manifest["theme_color"] == "#2b2f3a"
    sizes = set()
    for icon in manifest["icons"]:
        got = api.client.get(icon["src"])
        assert got.status_code == 200 and got.mimetype == icon["type"]
        if icon["type"] == "image/png":
            width, height = png_size(got.data)
            assert icon["sizes"] == f"{width}x{height}"
            sizes.add(width)
    assert {192, 512} <= sizes
    assert png_size(api.client.get("/icons/icon-180.png").data) == (180, 180)
    assert api.client.get("/icons/icon-64.png").status_code == 404
    polish = api.client.get("/manifest.webmanifest", headers={"Accept-Language": "pl"})
    assert polish.get_json()["lang"] == "pl"
    assert polish.get_json()["description"] != manifest["description"]


def test_every_page_links_the_manifest_and_the_worker(api: Api) -> None:
    page = api.client.get("/").text
    assert 'rel="manifest" href="/manifest.webmanifest"' in page
    assert '<meta name="theme-color" content="#2b2f3a">' in page
    assert 'serviceWorker.register("/sw.js"' in page
    worker = api.client.get("/sw.js")
    assert worker.status_code == 200 and worker.mimetype == "text/javascript"
    assert worker.headers["Service-Worker-Allowed"] == "/"
    assert "showNotification" in worker.text and "notificationclick" in worker.text


def test_the_settings_page_offers_the_button(api: Api) -> None:
    table = api.accept_all(api.create(3))
    page = seat_browser(api, table, 0).get(f"/games/{table.uid}/me").text
    assert 'id="push-on"' in page and f"/games/{table.uid}/me/push" in page


def test_the_worker_job_sends_the_due_pushes(api: Api, push_service: PushService) -> None:
    from app.features.clock.scheduler import Jobs

    table, _ = ready(api, push_service)
    Jobs(api.service).send_push()
    assert len(push_service.received) == len(api.to_act(table.uid, table.tokens[0]))
    assert all(row[3] for row in outbox(api))


def test_a_step_of_the_movers_own_turn_waits_a_minute(
        api: Api, push_service: PushService) -> None:
    table, _ = ready(api, push_service)
    PushSender(api.service).run_once()
    for _ in range(6):  # until a move leaves the decision with the seat that made it
        mover, _ = api.actor(table)
        api.play(table, 1)
        if api.to_act(table.uid, table.tokens[0]) == [mover]:
            break
    else:  # (the deal is seeded: a change of it must pick another, not skip the check)
        raise AssertionError("no move of this deal continued its mover's turn")
    # (the newest row: the decision now open)
    due = api.rows("SELECT next_attempt_at FROM push_outbox ORDER BY id DESC")[0][0]
    assert _utc(due) > datetime.now(UTC) + timedelta(seconds=30)


def test_favicon_ico_is_an_icon_file_holding_the_icon(api: Api) -> None:
    """Browsers and feed readers ask for /favicon.ico whatever the page links: an ICO file whose
    one entry is the 32-pixel PNG of the site's icon (issue 40: it was a 404 on every page)."""
    got = api.client.get("/favicon.ico")
    assert got.status_code == 200 and got.mimetype == "image/vnd.microsoft.icon"
    reserved, kind, count = struct.unpack("<HHH", got.data[:6])
    assert (reserved, kind, count) == (0, 1, 1)
    width, height, _, _, planes, bits, size, offset = struct.unpack("<BBBBHHII", got.data[6:22])
    assert (width, height, planes, bits, offset) == (32, 32, 1, 32, 22)
    png = got.data[offset:]
    assert len(png) == size and png_size(png) == (32, 32)
    assert got.cache_control.public and got.cache_control.max_age
