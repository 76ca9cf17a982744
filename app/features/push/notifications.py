"""Web Push: a "your turn" notification on the player's phone or computer.

A player turns it on per device (the button on their settings page, ``/games/<uid>/me``): the
browser subscribes with the push service it uses (Google's, Mozilla's, Apple's) under this
server's VAPID public key and the page posts the subscription (its endpoint and its keys
``p256dh`` and ``auth``), stored for the seat in ``push_subscriptions``.

The VAPID key pair is made on first need and kept in the database (``push_keys``, one row;
never in the repository): every web and worker process signs with the same key, and a backup
of the database keeps the subscriptions working after a restore.

:class:`PushNotifier` is a game-service listener. When a decision opens for a seat (the moment
the "your turn" mail is written, see :class:`app.mail.notify.Notifier`) it writes one
``push_outbox`` row per subscription of the seat in the move's transaction; its ``event_key``
(subscription and decision) is unique, so a decision is pushed once per device. It honours the
seat's mail setting: a seat whose mail is ``digest`` or ``none`` (also after the unsubscribe
link) gets no push, as it gets no decision mail; there is no separate push setting (the button
turns the device off). A row is held until the seat's quiet hours end, and a step that continues
the mover's own turn waits as long as its mail does (``continuation_delay``), so that a player
going on in the browser is not pinged for each step.

:class:`PushSender` (the worker's ``push`` job) claims due rows with a lease, as the mail and
webhook senders do. Before sending it checks again: a decision answered meanwhile, a game no
longer running or a mail setting changed settle the row as skipped; quiet hours begun since
hold it again; so does the player's having the game open on a page
(:mod:`app.features.live.presence`). The push service's 2xx settles the row as sent; 404 or
410 (the subscription expired or was withdrawn) drops the subscription and its rows; another
4xx but 429, or a redirect, gives the row up; anything else is retried after 1, 2, 4 ...
minutes (at most 6 hours).

The push service's address is held to :mod:`app.core.outbound`'s policy: a public address, when
the browser's subscription is stored and again by each post's connection, which follows no
redirect (a push service answers itself, RFC 8030: a 3xx gives the row up).

The payload is encrypted for the browser alone (RFC 8291, ``aes128gcm``) and holds only what
the player sees on the game page anyway: "your turn in <game>" and the game page's address.
"""

from __future__ import annotations

import base64
import binascii
import json
import logging
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import requests
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from sqlalchemy import delete
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from app.core.config import Settings
from app.core.db import session as open_session
from app.core.i18n import N_, language, translate
from app.core.models import (
    ACTIVE,
    Game,
    PushDelivery,
    PushKey,
    PushSubscription,
    Seat,
    table_of,
    utcnow,
)
from app.core.outbound import NotPublic, outbound_session
from app.features.clock.arithmetic import out_of_quiet
from app.features.clock.keeperbase import seat_quiet
from app.features.clock.rows import SEATS_WITH_DEVICES
from app.features.live.presence import HELD_FOR, is_watched
from app.features.webhooks.hooks import WebhookRefused, check_url, well_formed
from app.games.ui import game_ui
from app.mail.notify import continuation_delay, is_human, wants_mail
from app.service import BadRequest, GameEvent, GameService, Loaded
from app.service.leases import (
    LEASE,
    MAX_ATTEMPTS,
    after_failure,
    claim_due,
    settle,
)

log = logging.getLogger("titanpost.push")

MAX_SUBSCRIPTIONS = 10
"""Devices one seat may have subscribed (the oldest is dropped for a new one)."""
TIMEOUT_SECONDS = 10.0
TTL_SECONDS = 24 * 3600
"""How long a push service keeps a notification for a device that is offline."""
BATCH = 50
GONE = (404, 410)
"""The push service's answers for a subscription that is no more."""

_OUTBOX = table_of(PushDelivery)
_KEYS = table_of(PushKey)
_INSERTS: dict[str, Any] = {
    "postgresql": postgresql.insert(_OUTBOX).on_conflict_do_nothing(index_elements=["event_key"]),
    "sqlite": sqlite.insert(_OUTBOX).on_conflict_do_nothing(index_elements=["event_key"]),
}
_KEY_INSERTS: dict[str, Any] = {
    "postgresql": postgresql.insert(_KEYS).on_conflict_do_nothing(index_elements=["id"]),
    "sqlite": sqlite.insert(_KEYS).on_conflict_do_nothing(index_elements=["id"]),
}


class PushRefused(BadRequest):
    """A subscription that cannot be stored: the English ``message`` and its catalogue
    words."""

    def __init__(self, text: str, /, **fields: Any) -> None:
        super().__init__(text.format(**fields), words=(text, fields))


# ------------------------------------------------------------------ the server's key


@dataclass(frozen=True)
class VapidKeys:
    private_pem: str
    public_key: str
    """The uncompressed P-256 point, base64url without padding (``applicationServerKey``)."""


_KEY_CACHE: dict[str, VapidKeys] = {}


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode("ascii").rstrip("=")


def unb64url(text: str) -> bytes:
    """Bytes of base64url text with or without its padding (ValueError when it is none)."""
    try:
        return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (binascii.Error, ValueError):
        raise ValueError("not base64url") from None


def new_keys() -> VapidKeys:
    key = ec.generate_private_key(ec.SECP256R1())
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                            serialization.NoEncryption()).decode("ascii")
    point = key.public_key().public_bytes(serialization.Encoding.X962,
                                          serialization.PublicFormat.UncompressedPoint)
    return VapidKeys(pem, b64url(point))


def vapid_keys(engine: Engine) -> VapidKeys:
    """The server's VAPID keys: read from ``push_keys``, made and stored the first time (two
    processes racing both insert row 1; one wins and both read it back)."""
    cache_key = engine.url.render_as_string(hide_password=False)
    found = _KEY_CACHE.get(cache_key)
    if found is not None:
        return found
    with open_session(engine, write=True) as s:
        row = s.get(PushKey, 1)
        if row is None:
            made = new_keys()
            s.execute(_KEY_INSERTS[engine.dialect.name],
                      [{"id": 1, "private_key": made.private_pem, "public_key": made.public_key,
                        "created_at": utcnow()}])
            s.commit()
            row = s.get(PushKey, 1)
        assert row is not None
        found = VapidKeys(row.private_key, row.public_key)
    _KEY_CACHE[cache_key] = found
    return found


# ------------------------------------------------------------------ subscriptions


def checked_subscription(data: Any, *, allow_private: bool) -> tuple[str, str, str]:
    """(endpoint, p256dh, auth) of a browser's ``PushSubscription.toJSON()``, or PushRefused.

    The endpoint must be a public http(s) address, like a webhook's (the server posts to it);
    ``p256dh`` must be an uncompressed P-256 point and ``auth`` 16 bytes, both base64url."""
    keys = data.get("keys") if isinstance(data, dict) else None
    endpoint = data.get("endpoint") if isinstance(data, dict) else None
    if not isinstance(endpoint, str) or not isinstance(keys, dict):
        raise PushRefused(N_("a push subscription needs an endpoint and keys"))
    p256dh, auth = keys.get("p256dh"), keys.get("auth")
    try:
        point = unb64url(p256dh) if isinstance(p256dh, str) else b""
        secret = unb64url(auth) if isinstance(auth, str) else b""
        ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), point)
    except ValueError:
        point = b""
        secret = b""
    if len(point) != 65 or len(secret) != 16:
        raise PushRefused(N_("the push subscription's keys are not valid"))
    try:
        url = check_url(endpoint, allow_private=allow_private)
    except WebhookRefused:
        raise PushRefused(N_("the push service's address is not allowed")) from None
    if len(url) > 1000:
        raise PushRefused(N_("the push service's address is too long"))
    return url, b64url(point), b64url(secret)


def subscribe(service: GameService, seat_id: int, data: Any) -> int:
    """Store (or renew the keys of) a browser's subscription for the seat; its row id."""
    endpoint, p256dh, auth = checked_subscription(
        data, allow_private=service.settings.webhook_allow_private)
    with service.session(write=True) as s:
        rows = _subscriptions(s, [seat_id])
        same = next((row for row in rows if row.endpoint == endpoint), None)
        if same is not None:
            same.p256dh, same.auth = p256dh, auth
            s.add(same)
        else:
            for old in rows[:max(0, len(rows) - MAX_SUBSCRIPTIONS + 1)]:
                _drop(s, old.id)
            same = PushSubscription(seat_id=seat_id, endpoint=endpoint, p256dh=p256dh,
                                    auth=auth)
            s.add(same)
        s.flush()
        assert same.id is not None
        row_id = same.id
        s.commit()
    return row_id


def unsubscribe(service: GameService, seat_id: int, endpoint: str) -> bool:
    """Forget the seat's subscription at ``endpoint``: whether there was one."""
    with service.session(write=True) as s:
        row = next((r for r in _subscriptions(s, [seat_id]) if r.endpoint == endpoint), None)
        if row is None:
            return False
        _drop(s, row.id)
        s.commit()
    return True


def _subscriptions(s: Session, seat_ids: list[int]) -> list[PushSubscription]:
    return list(s.exec(select(PushSubscription)
                       .where(col(PushSubscription.seat_id).in_(seat_ids))
                       .order_by(col(PushSubscription.id))).all())


def _drop(s: Session, subscription_id: int | None) -> None:
    """Delete a subscription and its outbox rows (sent or not)."""
    s.execute(delete(_OUTBOX).where(_OUTBOX.c.subscription_id == subscription_id))
    s.execute(delete(table_of(PushSubscription))
              .where(table_of(PushSubscription).c.id == subscription_id))


# ------------------------------------------------------------------ the listener


def game_link(settings: Settings, uid: str) -> str:
    """The game page, where this browser's seat answers its decision."""
    return f"{settings.base_url}/games/{uid}"


def message(settings: Settings, game: Game, lang: str) -> dict[str, str]:
    """The notification, in the seat's language: a title, "your turn in <game>", the game
    page's address and a tag (a newer turn's notification replaces an older one)."""
    name = game.name or translate(lang, "game {uid}", uid=game.uid[:8])
    return {"title": translate(lang, "Your turn"),
            "body": translate(lang, "Your turn in {game}.", game=name),
            "url": game_link(settings, game.uid), "tag": f"titanpost-{game.uid}"}


class PushNotifier:
    """Writes the push rows of the decision an event opens, in its transaction."""

    EVENTS = ("started", "moved", "resigned", "timed_out", "replaced", "joined", "resumed",
              "rolled_back")

    def __init__(self, settings: Settings) -> None:
        self.settings = settings

    def __call__(self, s: Session, event: GameEvent) -> None:
        if event.kind == "replaced":
            self._forget_replaced(s, event)
        if event.kind not in self.EVENTS:
            return
        loaded = event.loaded
        if loaded is None or loaded.state is None or event.game.status != ACTIVE:
            return
        seats = self._deciders(loaded)
        known = s.info.get(SEATS_WITH_DEVICES)
        if known is not None and known[0] == event.game.id:  # read with the move's seats
            seats = [seat for seat in seats if seat.id in known[1]]
        if not seats:
            return
        subscriptions = _subscriptions(s, [seat.id for seat in seats if seat.id is not None])
        if not subscriptions:
            return
        now = utcnow()
        rows = []
        for seat in seats:
            due = (now + continuation_delay(self.settings) if self._continues(event, seat)
                   else now)
            due = out_of_quiet(due, seat_quiet(seat))
            payload = message(self.settings, event.game, language(seat.language))
            rows += [{"subscription_id": sub.id, "event_key": f"{sub.id}.{loaded.decision_seq}",
                      "seq": loaded.decision_seq, "payload": payload, "created_at": now,
                      "attempts": 0, "next_attempt_at": due if due > now else None}
                     for sub in subscriptions if sub.seat_id == seat.id]
        if rows:
            s.execute(_INSERTS[s.get_bind().dialect.name], rows)

    @staticmethod
    def _deciders(loaded: Loaded) -> list[Seat]:
        """The people who owe the pending decision and take its mail (so its push)."""
        pending = loaded.rules.pending(loaded.state)
        kind = game_ui(loaded.game.ruleset).mail_kind(pending) if pending is not None else None
        if kind is None:
            return []
        seats = (loaded.seat(position) for position in loaded.to_act())
        return [seat for seat in seats if is_human(seat) and wants_mail(seat, kind)]

    @staticmethod
    def _continues(event: GameEvent, seat: Seat) -> bool:
        """Whether the decision continues the turn of the seat that just moved."""
        appended = event.loaded.appended if event.loaded is not None else []
        return (event.kind in ("moved", "resigned") and bool(appended)
                and appended[-1].seat == seat.position)

    @staticmethod
    def _forget_replaced(s: Session, event: GameEvent) -> None:
        """A seat given to someone else: the old player's devices are told nothing more."""
        seat = next((seat for seat in event.seats if seat.position == event.position), None)
        if seat is None or seat.id is None:
            return
        for row in _subscriptions(s, [seat.id]):
            _drop(s, row.id)


def push_again(s: Session, settings: Settings, game: Game, seat: Seat, seq: int,
               tag: str) -> int:
    """One more "your turn" push of decision ``seq`` to each of the seat's devices, told apart
    from the first by ``tag`` (the clock's, when the seat's mail bounces and its deadline came:
    app/features/clock/unreachable.py); the sender checks it as any other. Returns how many
    rows were written."""
    subscriptions = _subscriptions(s, [seat.id]) if seat.id is not None else []
    if not subscriptions:
        return 0
    now = utcnow()
    payload = message(settings, game, language(seat.language))
    s.execute(_INSERTS[s.get_bind().dialect.name], [
        {"subscription_id": sub.id, "event_key": f"{sub.id}.{seq}.{tag}", "seq": seq,
         "payload": payload, "created_at": now, "attempts": 0, "next_attempt_at": None}
        for sub in subscriptions])
    return len(subscriptions)


def install(service: GameService) -> PushNotifier:
    """Add the push listener to ``service`` (once) and return it."""
    return service.listener(PushNotifier, lambda: PushNotifier(service.settings))


# ------------------------------------------------------------------ the sender


@dataclass
class PushReport:
    claimed: int = 0
    sent: int = 0
    skipped: int = 0
    held: int = 0
    dropped: int = 0
    failed: int = 0
    gave_up: int = 0


@dataclass(frozen=True)
class Claimed:
    id: int
    attempts: int
    lease_until: datetime
    seq: int
    payload: dict[str, Any]
    subscription: PushSubscription
    seat: Seat
    game: Game


class PushSender:
    """Claims due push rows and sends them (see the module documentation)."""

    def __init__(self, service: GameService, *, batch: int = BATCH,
                 timeout: float = TIMEOUT_SECONDS) -> None:
        self.service = service
        self.batch = batch
        self.timeout = timeout
        self.http = outbound_session(allow_private=service.settings.webhook_allow_private)

    def claim(self, now: datetime) -> list[Claimed]:
        until = now + LEASE
        ids = claim_due(self.service, _OUTBOX, now=now, until=until, batch=self.batch,
                        max_attempts=MAX_ATTEMPTS)
        if not ids:
            return []
        with self.service.session() as s:
            rows = s.exec(
                select(PushDelivery, PushSubscription, Seat, Game)
                .join(PushSubscription,
                      col(PushSubscription.id) == col(PushDelivery.subscription_id))
                .join(Seat, col(Seat.id) == col(PushSubscription.seat_id))
                .join(Game, col(Game.id) == col(Seat.game_id))
                .where(col(PushDelivery.id).in_(ids)).order_by(col(PushDelivery.id))).all()
            return [Claimed(row.id or 0, row.attempts, until, row.seq, dict(row.payload), sub,
                            seat, game) for row, sub, seat, game in rows]

    def run_once(self, now: datetime | None = None) -> PushReport:
        """Claim one batch of due rows and send each; report what happened."""
        now = now or utcnow()
        report = PushReport()
        rows = self.claim(now)
        report.claimed = len(rows)
        for row in rows:
            self._one(row, now, report)
        return report

    def _one(self, row: Claimed, now: datetime, report: PushReport) -> None:
        skip = self._stale(row)
        if skip is not None:
            self._settle(row, sent_at=utcnow(), next_attempt_at=None,
                         last_error=f"skipped: {skip}")
            report.skipped += 1
            return
        quiet_end = out_of_quiet(now, seat_quiet(row.seat))
        if quiet_end > now:  # (quiet hours begun since the row was written: held, no attempt)
            self._settle(row, next_attempt_at=quiet_end)
            report.held += 1
            return
        if self._watched(row):  # (the player looks at the game: answered there, or later)
            self._settle(row, next_attempt_at=utcnow() + HELD_FOR)
            report.held += 1
            return
        status, error, permanent = self._post(row)
        if status is not None and 200 <= status < 300:
            self._settle(row, sent_at=utcnow(), attempts=row.attempts + 1,
                         next_attempt_at=None, last_error=None)
            report.sent += 1
        elif status in GONE:
            with self.service.session(write=True) as s:
                _drop(s, row.subscription.id)
                s.commit()
            log.info("push subscription %s dropped: the push service answered %s",
                     row.subscription.id, status)
            report.dropped += 1
        else:
            self._failed(row, now, error, permanent=permanent, report=report)

    def _stale(self, row: Claimed) -> str | None:
        """Why the row is no longer worth sending, if it is not."""
        if row.game.status != ACTIVE:
            return "the game is no longer running"
        with self.service.session() as s:
            loaded = self.service.load(s, row.game.uid)
            if loaded.decision_seq != row.seq or row.seat.position not in loaded.to_act():
                return "the decision was answered before the notification went out"
            if not self._deciders_include(loaded, row.seat):
                return "the player's mail setting no longer sends turn notices"
        return None

    def _watched(self, row: Claimed) -> bool:
        assert row.game.id is not None and row.seat.id is not None
        with self.service.session() as s:
            return is_watched(s, row.game.id, row.seat.id)

    @staticmethod
    def _deciders_include(loaded: Loaded, seat: Seat) -> bool:
        return any(found.id == seat.id for found in PushNotifier._deciders(loaded))

    def _post(self, row: Claimed) -> tuple[int | None, str, bool]:
        """Encrypt and post one notification: the push service's status (None: no answer),
        what to record of a failure, and whether to give the row up (an address no longer
        allowed, a redirect, which is never followed, or a 4xx but 429)."""
        from py_vapid import Vapid
        from pywebpush import WebPusher

        sub = row.subscription
        try:
            endpoint = well_formed(sub.endpoint)
        except WebhookRefused as exc:
            return None, str(exc), True
        keys = vapid_keys(self.service.engine)
        origin = "/".join(endpoint.split("/", 3)[:3])
        claims = {"sub": self._contact(), "aud": origin,
                  "exp": int(utcnow().timestamp()) + 12 * 3600}
        headers = Vapid.from_pem(keys.private_pem.encode()).sign(claims)
        info = {"endpoint": endpoint, "keys": {"p256dh": sub.p256dh, "auth": sub.auth}}
        body = json.dumps(row.payload).encode()
        try:
            answer = WebPusher(info, requests_session=self.http).send(
                body, headers, ttl=TTL_SECONDS, timeout=self.timeout)
        except NotPublic as exc:
            return None, str(exc), True
        except requests.RequestException as exc:
            return None, f"{type(exc).__name__} posting to the push service", False
        status = answer.status_code
        if 300 <= status < 400:  # (its Location left out: the endpoint's path is a secret)
            return status, f"HTTP {status}: a redirect, not followed", True
        permanent = 400 <= status < 500 and status != 429
        return status, f"HTTP {status}: {answer.text[:200]}", permanent

    def _contact(self) -> str:
        """The VAPID ``sub`` claim: how a push service reaches the server's operator."""
        address = self.service.settings.mail_from
        address = address.rsplit("<", 1)[-1].rstrip(">").strip()
        return f"mailto:{address}"

    def _settle(self, row: Claimed, **values: Any) -> None:
        settle(self.service, _OUTBOX, row.id, row.lease_until, **values)

    def _failed(self, row: Claimed, now: datetime, error: str, *, permanent: bool,
                report: PushReport) -> None:
        give_up, values = after_failure(row.attempts + 1, now, error, permanent=permanent)
        if give_up:
            report.gave_up += 1
            log.warning("push row %d: giving up: %s", row.id, error)
        else:
            report.failed += 1
            log.info("push row %d: attempt %d failed: %s", row.id, values["attempts"], error)
        self._settle(row, **values)
