"""Per-game webhooks: a game's owner registers addresses that are told of each turn to play
and of the game's end (its winner, or that it was abandoned), in the shape a chat service
expects (Discord, Slack, a Matrix hookshot generic webhook, ntfy) or our own JSON.

:class:`WebhookNotifier` is a game-service listener: inside the event's transaction it writes
one ``webhook_outbox`` row per event and webhook (its ``event_key`` is unique, so a decision or
an end is posted once): a move's rows in the move's transaction, an abandonment's in the
transaction that abandons the game. A turn is posted when the player to act changes (or a
simultaneous decision asks everyone at once), not at each decision of one player's turn.
:class:`WebhookSender` (the worker's ``webhooks`` job)
claims due rows with a lease, as the mail sender does: one conditional UPDATE moves
``next_attempt_at`` out by the lease, so two workers never both take a row. A 2xx answer
settles the row as sent (never sent again); a 4xx other than 429 gives it up at once; anything
else (5xx, 429, no answer) is retried after 1, 2, 4 ... minutes (at most 6 hours) until
``MAX_ATTEMPTS``.

Each webhook speaks one language (``language``, English unless chosen). The row written for
an event is worded then, in the webhook's language (:func:`in_language`): its payload holds the
language and the line people read (``text``), so that a row waiting in the outbox is posted as
it was written whatever happens to the webhook later; the event's machine fields (``event``,
``game``, ``positions``, ``winner``...) are the same in every language.

No post can ping a whole room or anyone in it: a Discord post allows no mentions
(``allowed_mentions``), a Slack post has its ``&``, ``<`` and ``>`` escaped (so a game or player
named ``<!channel>`` or ``<@U123>`` is shown as written). A ``json`` webhook's posts are signed
as the Standard Webhooks specification says: headers ``webhook-id`` (the row's, the same on
every retry), ``webhook-timestamp`` (Unix seconds) and ``webhook-signature`` (``v1,`` and the
base64 HMAC-SHA256 of ``id.timestamp.body`` under the secret, ``whsec_`` and base64), the
secret drawn when the webhook is added and shown once, in that answer. A ``json`` webhook
added before signing has no secret and posts unsigned (migration 0011).

Only ``http``/``https`` addresses are taken, and none whose host resolves to a loopback,
private, link-local or otherwise non-public address unless ``TITANPOST_WEBHOOK_ALLOW_PRIVATE``
is set (the policy of :mod:`app.core.outbound`): checked when the webhook is added, after the
creator token (a wrong token learns nothing of an address, and costs no DNS lookup), and again
by each post's connection, which follows no redirect (a 3xx gives the row up).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import logging
import secrets
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from urllib.parse import urlsplit

import requests
from sqlalchemy import delete, func
from sqlalchemy.dialects import postgresql, sqlite
from sqlmodel import Session, col, select

from app.core.config import Settings
from app.core.i18n import LANGUAGES, N_, translate, translate_plural
from app.core.models import ACTIVE, FINISHED, Webhook, WebhookDelivery, table_of, utcnow
from app.core.outbound import NotPublic, check_host, outbound_session
from app.core.textrules import line_problem
from app.games.ui import game_ui
from app.service import AnswerRecorder, BadRequest, GameEvent, GameService, NotFound, timestamp
from app.service.leases import (
    LEASE,
    MAX_ATTEMPTS,
    after_failure,
    claim_due,
    settle,
)

log = logging.getLogger("titanpost.webhooks")

FORMATS = ("discord", "slack", "matrix", "ntfy", "json")
TURN = "turn"
GAME_OVER = "game_over"
GAME_ABANDONED = "game_abandoned"
MAX_WEBHOOKS = 5
"""Webhooks one game may have."""
TIMEOUT_SECONDS = 10.0
BATCH = 50

_OUTBOX = table_of(WebhookDelivery)
_INSERTS: dict[str, Any] = {
    "postgresql": postgresql.insert(_OUTBOX).on_conflict_do_nothing(index_elements=["event_key"]),
    "sqlite": sqlite.insert(_OUTBOX).on_conflict_do_nothing(index_elements=["event_key"]),
}


class WebhookRefused(BadRequest):
    """An address, format or language that cannot be used: the English ``message`` for the
    API, and its catalogue words for the owner's page."""

    def __init__(self, text: str, /, **fields: Any) -> None:
        super().__init__(text.format(**fields), words=(text, fields))


# ------------------------------------------------------------------ addresses


def check_url(url: str, *, allow_private: bool) -> str:
    """``url`` if a webhook may post to it, else WebhookRefused saying why: its form first,
    then its host's addresses (:func:`app.core.outbound.check_host`)."""
    url = well_formed(url)
    host, port = host_and_port(url) or ("", 0)
    try:
        check_host(host, port, allow_private=allow_private)
    except NotPublic:
        # (one answer for a name that does not resolve and one that resolves inside our
        # network: the server's resolver tells nobody which internal names exist)
        raise WebhookRefused(N_("the webhook host {host} has no public address: webhooks "
                                "post only to public addresses"), host=host) from None
    return url


DEFAULT_PORTS = {"http": 80, "https": 443}


def host_and_port(url: str) -> tuple[str, int] | None:
    """The host and port an http(s) URL names (its scheme's port where it names none), or
    None for another URL, one without a host, or one whose port is no port."""
    parts = urlsplit(url)
    try:
        port = parts.port
    except ValueError:  # (out of range, or not a number)
        return None
    if parts.scheme not in DEFAULT_PORTS or not parts.hostname:
        return None
    return parts.hostname, port or DEFAULT_PORTS[parts.scheme]


def well_formed(url: str) -> str:
    """``url`` stripped, if it is an http(s) URL with a host (and a port that can be), not
    too long: no lookup; else WebhookRefused saying why."""
    url = url.strip()
    if line_problem(url) is not None or any(character.isspace() for character in url):
        raise WebhookRefused(N_("a webhook address may hold no space, control character or "
                                "text-direction mark"))
    if host_and_port(url) is None:
        raise WebhookRefused(N_("a webhook address must be an http:// or https:// URL with a "
                                "host"))
    if len(url) > 2000:
        raise WebhookRefused(N_("a webhook address may be at most {limit} characters long"),
                             limit=2000)
    return url


# ------------------------------------------------------------------ the owner's list


def _described(hook: Webhook) -> dict[str, Any]:
    """A webhook as the API shows it (its time in one form, whether just made or read back
    from either database); never its secret, shown once when it is added."""
    return {"id": hook.id, "url": hook.url, "format": hook.format, "language": hook.language,
            "signed": hook.secret is not None, "created_at": timestamp(hook.created_at)}


SECRET_PREFIX = "whsec_"


def new_secret() -> str:
    """A signing secret as Standard Webhooks writes one: ``whsec_`` and 32 random bytes in
    base64."""
    return SECRET_PREFIX + base64.b64encode(secrets.token_bytes(32)).decode("ascii")


def signature(secret: str, message_id: str, sent_at: int, body: bytes) -> str:
    """The ``webhook-signature`` header of a post: ``v1,`` and the base64 HMAC-SHA256 of
    ``id.timestamp.body`` keyed with the secret's bytes (the base64 after ``whsec_``)."""
    key = base64.b64decode(secret.removeprefix(SECRET_PREFIX))
    signed = f"{message_id}.{sent_at}.".encode() + body
    return "v1," + base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()


def add_webhook(service: GameService, uid: str, creator_token: str, url: str, fmt: str, *,
                language: str = "en",
                idempotency: AnswerRecorder | None = None) -> dict[str, Any]:
    """Register ``url`` (in ``fmt``, worded in ``language``) for the game: creator only.

    The creator token is checked before anything else, so that a wrong one gets the same
    refusal whatever it sends, and no DNS lookup: the address is looked at only for the
    creator (whose token is checked again, with the count of webhooks, in the transaction that
    adds the row).

    The answer is recorded (``idempotency``, an Idempotency-Key's claim) in the transaction
    that adds the row, so that a process dying in between cannot leave a webhook whose
    request a retry would run again, adding it twice."""
    with service.session() as s:  # (the token first: a wrong one learns nothing else)
        service._creator_game(s, uid, creator_token)
    if fmt not in FORMATS:
        raise WebhookRefused(N_("unknown webhook format '{format}' (known: {known})"),
                             format=fmt, known=", ".join(FORMATS))
    if language not in LANGUAGES:
        raise WebhookRefused(N_("unknown webhook language '{language}' (known: {known})"),
                             language=language, known=", ".join(LANGUAGES))
    # (resolved between the two transactions: a slow lookup holds no write lock)
    checked = check_url(url, allow_private=service.settings.webhook_allow_private)
    with service.session(write=True) as s:
        game = service._creator_game(s, uid, creator_token)
        if len(_hooks(s, game.id)) >= MAX_WEBHOOKS:
            raise WebhookRefused(N_("a game may have at most {limit} webhooks: remove one "
                                    "first"), limit=MAX_WEBHOOKS)
        assert game.id is not None
        hook = Webhook(game_id=game.id, url=checked, format=fmt, language=language,
                       secret=new_secret() if fmt == "json" else None)
        s.add(hook)
        s.flush()  # (its id, for the answer)
        added = _described(hook) | {"secret": hook.secret}  # (shown this once)
        if idempotency is not None:
            idempotency.record(s, added)
        s.commit()
        return added


def list_webhooks(service: GameService, uid: str, creator_token: str) -> list[dict[str, Any]]:
    with service.session() as s:
        game = service._creator_game(s, uid, creator_token)
        return [_described(hook) for hook in _hooks(s, game.id)]


def remove_webhook(service: GameService, uid: str, creator_token: str,
                   webhook_id: int) -> dict[str, Any]:
    """Remove a webhook and whatever it has in the outbox (sent or not)."""
    with service.session(write=True) as s:
        game = service._creator_game(s, uid, creator_token)
        hook = s.get(Webhook, webhook_id)
        if hook is None or hook.game_id != game.id:
            raise NotFound(f"game {uid} has no webhook {webhook_id}")
        s.execute(delete(_OUTBOX).where(_OUTBOX.c.webhook_id == webhook_id))
        s.delete(hook)
        s.commit()
        return {"removed": webhook_id}


def _hooks(s: Session, game_id: int | None) -> list[Webhook]:
    return list(s.exec(select(Webhook).where(Webhook.game_id == game_id)
                       .order_by(col(Webhook.id))).all())


# ------------------------------------------------------------------ the listener


class WebhookNotifier:
    """Writes the webhook rows an event causes, in its transaction."""

    EVENTS = ("started", "moved", "resigned", "timed_out", "replaced", "joined", "resumed",
              "rolled_back", "abandoned")

    def __init__(self, settings: Settings) -> None:
        self.settings = settings

    def __call__(self, s: Session, event: GameEvent) -> None:
        if event.kind not in self.EVENTS:
            return
        if event.loaded is not None and event.loaded.webhooks == 0:
            return  # (counted with the game row: no statement for a game without webhooks)
        message = self.message(event)
        if message is None:
            return
        hooks = _hooks(s, event.game.id)
        if not hooks:
            return
        seq = message.pop("seq")
        new_round = message.pop("new_round", False)
        payloads = {hook.id: in_language(message, hook.language, event.game.ruleset)
                    for hook in hooks}
        if message["event"] == TURN and not new_round:
            hooks = _told_otherwise(s, hooks, payloads)
            if not hooks:
                return
        rows = [{"webhook_id": hook.id, "event": message["event"],
                 "payload": payloads[hook.id],
                 "event_key": f"{hook.id}.{seq}.{message['event']}", "created_at": utcnow(),
                 "attempts": 0, "next_attempt_at": None} for hook in hooks]
        s.execute(_INSERTS[s.get_bind().dialect.name], rows)

    def message(self, event: GameEvent) -> dict[str, Any] | None:
        """What the event tells the webhooks (with the ``seq`` it is about), if anything: the
        same for every webhook, with ``None`` for a player who has no name (worded per
        webhook by :func:`in_language`)."""
        game = event.game
        common = {"game": game.uid, "name": game.name,
                  "link": f"{self.settings.base_url}/games/{game.uid}"}
        if event.kind == "abandoned":  # (once per game: its key needs no place in the log)
            return {"event": GAME_ABANDONED, "seq": 0, **common}
        if game.status == FINISHED:
            return {"event": GAME_OVER, "seq": event.seq_after, "winner": game.winner, **common}
        loaded = event.loaded
        if game.status != ACTIVE or loaded is None or loaded.state is None:
            return None
        to_act = loaded.to_act()
        if not to_act:
            return None
        players = [loaded.seat(p).player_name or None for p in to_act]
        # (a simultaneous decision is news to everyone it asks, even the seats asked last)
        return {"event": TURN, "seq": loaded.decision_seq, "positions": to_act,
                "players": players, "new_round": loaded.rules.simultaneous(loaded.state),
                **common}


def _told_otherwise(s: Session, hooks: list[Webhook],
                    payloads: dict[int | None, dict[str, Any]]) -> list[Webhook]:
    """The webhooks whose last turn post named other seats or players than their payload now
    does (or that have none): a turn is posted when the player to act changes, not at each of
    the decisions one player makes in a row (a turn may be several). One statement, for the
    game's webhooks together."""
    c = _OUTBOX.c
    last = (select(func.max(c.id)).where(c.webhook_id.in_([hook.id for hook in hooks]),
                                         c.event == TURN)
            .group_by(c.webhook_id).scalar_subquery())
    named = {webhook_id: _named(payload) for webhook_id, payload in s.execute(
        select(c.webhook_id, c.payload).where(c.id.in_(last))).all()}
    return [hook for hook in hooks if named.get(hook.id) != _named(payloads[hook.id])]


def _named(payload: dict[str, Any]) -> tuple[Any, Any]:
    """Who a turn post tells to play: the seats, and the players as it names them."""
    return payload.get("positions"), payload.get("players")


def in_language(message: dict[str, Any], lang: str, ruleset: str) -> dict[str, Any]:
    """The payload of one webhook's row, worded in its language ``lang``: ``message`` with the
    language, the players without a name called by their seat, and the line people read
    (``text``, the winner by its piece's name in the game ``ruleset``)."""
    payload = {**message, "language": lang}
    if "players" in payload:
        payload["players"] = [name or translate(lang, "seat {seat}", seat=position + 1)
                              for position, name in zip(payload["positions"],
                                                        payload["players"], strict=True)]
    winners = [game_ui(ruleset).piece_name(piece, lang)
               for piece in str(payload.get("winner") or "").split(",") if piece]
    payload["text"] = summary(payload, winners=winners)
    return payload


def install(service: GameService) -> WebhookNotifier:
    """Add the webhook listener to ``service`` (once) and return it."""
    return service.listener(WebhookNotifier, lambda: WebhookNotifier(service.settings))


# ------------------------------------------------------------------ bodies


def payload_language(payload: dict[str, Any]) -> str:
    """The language a row is worded in: its webhook's when the row was written (a row
    written before webhooks had languages has none: English, as it was then)."""
    lang = payload.get("language")
    return lang if isinstance(lang, str) and lang in LANGUAGES else "en"


def summary(payload: dict[str, Any], *, winners: list[str] | None = None) -> str:
    """One line for people, in the row's language: whose turn, who won (``winners``: their
    names; else as the payload stores them), or that the game was given up, and where."""
    lang = payload_language(payload)
    name = payload.get("name") or payload["game"]
    link = payload["link"]
    if payload["event"] == GAME_ABANDONED:
        return translate(lang, "Titan Post: {game} was abandoned: it takes no more moves. "
                         "{link}", game=name, link=link)
    if payload["event"] == GAME_OVER:
        if winners is None:
            winners = [w for w in str(payload.get("winner") or "").split(",") if w]
        if winners:
            return translate_plural(lang, "Titan Post: {game} is over, {winner} wins. {link}",
                                    "Titan Post: {game} is over, {winner} win. {link}",
                                    len(winners), game=name, winner=", ".join(winners),
                                    link=link)
        return translate(lang, "Titan Post: {game} is over, no winner. {link}",
                         game=name, link=link)
    players = ", ".join(payload.get("players", []))
    return translate(lang, "Titan Post: {game}, {players} to play. {link}",
                     game=name, players=players, link=link)


NTFY_TITLES = {TURN: N_("Your turn"), GAME_OVER: N_("Game over"),
               GAME_ABANDONED: N_("Game abandoned")}
"""The ntfy notification's title per event (English message ids, worded in the row's
language)."""


def header_value(text: str) -> str:
    """``text`` as an HTTP header value: as it is when ASCII, else one RFC 2047 encoded-word
    (UTF-8, base64), which ntfy decodes (header values travel as Latin-1 at best, so "Twój
    ruch" sent as it is would fail or arrive garbled)."""
    if text.isascii():
        return text
    return f"=?utf-8?b?{base64.b64encode(text.encode()).decode('ascii')}?="


@dataclass(frozen=True)
class Post:
    """One HTTP request: a JSON body, or text with headers (ntfy)."""

    json: dict[str, Any] | None = None
    text: str | None = None
    headers: dict[str, str] = field(default_factory=dict)


def slack_text(line: str) -> str:
    """``line`` as Slack shows it as written: its ``&``, ``<`` and ``>`` escaped, so that no
    name makes ``<!channel>``, ``<!here>``, ``<@U123>`` or a link of its own."""
    return line.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def render(fmt: str, payload: dict[str, Any]) -> Post:
    """The request a webhook of format ``fmt`` gets for ``payload`` (its words as the row was
    written; a row written before rows held them is worded now, in English as it was then)."""
    line = str(payload.get("text") or summary(payload))
    if fmt == "discord":  # (no mention pings: not @everyone, @here, a user or a role)
        return Post(json={"content": line, "username": "Titan Post",
                          "allowed_mentions": {"parse": []}})
    if fmt == "slack":
        return Post(json={"text": slack_text(line)})
    if fmt == "matrix":  # a hookshot generic webhook posts "text" as the message
        return Post(json={"text": line, "username": "Titan Post"})
    if fmt == "ntfy":
        title = translate(payload_language(payload),
                          NTFY_TITLES.get(str(payload["event"]), NTFY_TITLES[TURN]))
        return Post(text=line, headers={"Title": header_value(title),
                                        "Click": str(payload["link"]),
                                        "Content-Type": "text/plain; charset=utf-8"})
    return Post(json={**payload, "text": line})


# ------------------------------------------------------------------ the sender


def request_of(post: Post) -> tuple[bytes, dict[str, str]]:
    """The body a post sends, as bytes (what a signature covers), and its headers."""
    if post.json is not None:
        return (json.dumps(post.json).encode(),
                {"Content-Type": "application/json", **post.headers})
    return (post.text or "").encode(), dict(post.headers)


def message_id(event_key: str) -> str:
    """A row's ``webhook-id``: the same on every retry of the row, so that a receiver can
    drop a post it has had already."""
    return "msg_" + event_key.replace(".", "_")


def signed_headers(secret: str, msg_id: str, body: bytes,
                   sent_at: int | None = None) -> dict[str, str]:
    """The Standard Webhooks headers of a post signed with ``secret``."""
    sent_at = int(utcnow().timestamp()) if sent_at is None else sent_at
    return {"webhook-id": msg_id, "webhook-timestamp": str(sent_at),
            "webhook-signature": signature(secret, msg_id, sent_at, body)}


@dataclass
class WebhookReport:
    claimed: int = 0
    sent: int = 0
    failed: int = 0
    gave_up: int = 0


@dataclass(frozen=True)
class Claimed:
    id: int
    attempts: int
    lease_until: datetime
    payload: dict[str, Any]
    url: str
    format: str
    event_key: str = ""
    secret: str | None = None


class WebhookSender:
    """Claims due webhook rows and posts them (see the module documentation), each through a
    connection to a checked public address, following no redirect
    (:func:`app.core.outbound.outbound_session` says why)."""

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
            rows = s.exec(select(WebhookDelivery, Webhook)
                          .join(Webhook, col(Webhook.id) == col(WebhookDelivery.webhook_id))
                          .where(col(WebhookDelivery.id).in_(ids))
                          .order_by(col(WebhookDelivery.id))).all()
            return [Claimed(row.id or 0, row.attempts, until, dict(row.payload), hook.url,
                            hook.format, row.event_key, hook.secret) for row, hook in rows]

    def run_once(self, now: datetime | None = None) -> WebhookReport:
        """Claim one batch of due rows and post each; report what happened."""
        now = now or utcnow()
        report = WebhookReport()
        rows = self.claim(now)
        report.claimed = len(rows)
        for row in rows:
            error, permanent = self._post(row)
            if error is None:
                self._settle(row, sent_at=utcnow(), attempts=row.attempts + 1,
                             next_attempt_at=None, last_error=None)
                report.sent += 1
            else:
                self._failed(row, now, error, permanent=permanent, report=report)
        return report

    def _post(self, row: Claimed) -> tuple[str | None, bool]:
        """Post one row: (None, _) when taken, else (why, whether to give up): at once for
        an address that is no longer allowed, a redirect (never followed) or a 4xx but 429."""
        try:
            url = well_formed(row.url)
        except WebhookRefused as exc:
            return str(exc), True
        body, headers = request_of(render(row.format, row.payload))
        if row.secret is not None:
            headers |= signed_headers(row.secret, message_id(row.event_key), body)
        try:
            answer = self.http.post(url, data=body, headers=headers, timeout=self.timeout,
                                    allow_redirects=False)
        except NotPublic as exc:
            return str(exc), True
        except requests.RequestException as exc:
            # (not the exception's text: it names the whole address, whose path is often the
            # webhook's secret, as Discord's and Slack's are)
            return f"{type(exc).__name__} posting to {urlsplit(url).hostname}", False
        status = answer.status_code
        if 200 <= status < 300:
            return None, False
        if 300 <= status < 400:  # (its Location left out: it may hold a secret too)
            return f"HTTP {status}: a redirect, not followed", True
        return f"HTTP {status}: {answer.text[:200]}", 400 <= status < 500 and status != 429

    def _settle(self, row: Claimed, **values: Any) -> None:
        settle(self.service, _OUTBOX, row.id, row.lease_until, **values)

    def _failed(self, row: Claimed, now: datetime, error: str, *, permanent: bool,
                report: WebhookReport) -> None:
        give_up, values = after_failure(row.attempts + 1, now, error, permanent=permanent)
        if give_up:
            report.gave_up += 1
            log.warning("webhook row %d: giving up: %s", row.id, error)
        else:
            report.failed += 1
            log.info("webhook row %d: attempt %d failed: %s", row.id, values["attempts"], error)
        self._settle(row, **values)
