"""Database tables (SQLModel). The move log is the truth; everything else serves it.

``moves`` is append-only: the migrations install triggers that refuse UPDATE and DELETE on it,
and its primary key (game, sequence) is the concurrency control between racing submissions.
``snapshots`` is a cache of engine states that can always be rebuilt from the log.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    Column,
    DateTime,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    String,
    Table,
    UniqueConstraint,
    text,
)
from sqlalchemy import false as sa_false
from sqlmodel import Field, SQLModel

from app.games.rng import SPLITMIX_SCHEME

SQLModel.metadata.naming_convention = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

OPEN = "open"
ACTIVE = "active"
FINISHED = "finished"
ABANDONED = "abandoned"
GAME_STATUSES = (OPEN, ACTIVE, FINISHED, ABANDONED)

MOVE = "move"
RESIGN = "resign"
HANDOVER = "handover"
PAUSE = "pause"
RESUME = "resume"
ROLLBACK = "rollback"
ABANDON = "abandon"
ENTRY_KINDS = (MOVE, RESIGN, HANDOVER, PAUSE, RESUME, ROLLBACK, ABANDON)
"""Kinds of log entries: ``move`` is an input for the rules engine; ``rollback N`` (an admin's)
takes the game back to the state after entry N, the entries in between staying in the log; the
others are notes of what happened to the game (a resignation, a seat handed to someone else, a
pause, the owner abandoning a started game: its last entry) that the engine never sees, kept in
the same append-only log so that it tells the whole story."""
STATE_KINDS = (MOVE, ROLLBACK)
"""Entries that change the game state, so that a new decision opens after them."""

PLAYER = "player"
COMPUTER = "computer"
TIMEOUT = "timeout"
AWAY = "away"
OWNER = "owner"
ADMIN = "admin"
CLOCK = "clock"
ACTORS = (PLAYER, COMPUTER, TIMEOUT, AWAY, OWNER, ADMIN, CLOCK)
REACTIONS = "reactions"
"""The key of a seat's standing choice in its settings (``Seat.notify``)."""
"""Who made a log entry: the seat's player, the computer playing a computer seat, the computer
acting on a passed deadline, the computer playing for a player away in computer mode, the game's
owner, an admin, or the clock (a pause on timeout, a handover after missed deadlines)."""


def table_of(model: type[SQLModel]) -> Table:
    """The Core table of a table model, for statements built without the ORM (SQLModel does
    not type ``__table__``)."""
    table: Table = model.__table__  # type: ignore[attr-defined]
    return table


def utcnow() -> datetime:
    return datetime.now(UTC)


class Game(SQLModel, table=True):
    __tablename__ = "games"

    id: int | None = Field(default=None, primary_key=True)
    uid: str = Field(sa_column=Column(String(32), nullable=False, unique=True, index=True))
    name: str = Field(default="", max_length=200)
    ruleset: str = Field(max_length=40)
    engine_version: int
    variant: str = Field(max_length=40)
    setup: dict[str, Any] = Field(sa_column=Column(JSON, nullable=False))
    """The game's setup in its own terms (Titan Race: ``{"circuits": [...]}``, The Great
    Race: ``{"start": city}``): see :meth:`app.games.base.Ruleset.check_setup`."""
    settings: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    status: str = Field(default=OPEN, max_length=20, index=True)
    seed: int = Field(sa_column=Column(BigInteger, nullable=False))
    """The admin's chosen seed (``seed_chosen``): since commitment version 2 the secret is derived
    from it (app/features/fairness/dealing.py); before, the older generator (``rng_scheme``
    splitmix64) dealt from it, as it dealt every game created before fair dealing."""
    rng_scheme: str = Field(
        default=SPLITMIX_SCHEME,
        sa_column=Column(String(20), nullable=False, server_default=SPLITMIX_SCHEME),
    )
    """How the game's chance is drawn: ``hmac-sha256`` from a secret and the seats'
    contributions, or ``splitmix64`` from ``seed`` (games created before fair dealing, and games
    an admin dealt from a chosen seed)."""
    dealing_secret: str | None = Field(default=None, max_length=64)
    """The server's 256-bit secret (hex): never shown to anyone until the game is over."""
    dealing_commitment: str | None = Field(default=None, max_length=64)
    """Shown to every seat from the start: SHA-256 of the secret and the game's facts
    (``commitment_version`` 2), or of the secret alone (1). Fixed once set: a database
    trigger refuses to change it, or any column it covers (migration 0019)."""
    commitment_version: int | None = Field(default=None)
    """How ``dealing_commitment`` was made (app/features/fairness/dealing.py): 2 for every game
    created since version 2, 1 before it, None for a game without a commitment (created before fair
    dealing)."""
    committed_uid: str | None = Field(default=None, max_length=32)
    """The game id inside a version 2 commitment: the game's own, or for a game imported from
    an export, the id of the game it was exported from (its players were shown that
    commitment)."""
    seed_chosen: bool = Field(
        default=False, sa_column=Column(Boolean, nullable=False, server_default=sa_false())
    )
    """The admin chose the seed: the deal was known before the game began, and seats are told."""
    seat_setups: list[Any] | None = Field(default=None, sa_column=Column(JSON))
    """What each seat asked for at the start (pieces, team, reaction windows): the set-up
    that the dealing is checked against once the game is over. Kept in the fields the
    fairness record has always had (``titans``, ``team``, ``anytime_windows``), so that records
    players downloaded still verify (app/features/fairness/records.py)."""
    initial_state: dict[str, Any] | None = Field(default=None, sa_column=Column(JSON))
    """The engine state the game started from (its genesis); the log replays from it."""
    creator_token_hash: str = Field(max_length=64)
    owner_email: str | None = Field(default=None, max_length=254)
    """Where the owner (creator) is told about the game's clock (a pause, a seat to replace)."""
    paused_at: datetime | None = Field(default=None, sa_column=Column(DateTime(timezone=True)))
    """Set while the game is paused: its deadlines do not run (they shift on resume)."""
    pause_reason: str | None = Field(default=None, max_length=200)
    winner: str | None = Field(default=None, max_length=40)
    created_at: datetime = Field(
        default_factory=utcnow, sa_column=Column(DateTime(timezone=True), nullable=False)
    )
    started_at: datetime | None = Field(default=None, sa_column=Column(DateTime(timezone=True)))
    finished_at: datetime | None = Field(default=None, sa_column=Column(DateTime(timezone=True)))
    rematch_of: int | None = Field(
        default=None,
        sa_column=Column(Integer, ForeignKey("games.id"), nullable=True, unique=True, index=True),
    )
    """The finished game this one is the rematch of: unique, so a game has one rematch at most
    (app/features/rematch/rematches.py)."""


class Seat(SQLModel, table=True):
    __tablename__ = "seats"
    __table_args__ = (UniqueConstraint("game_id", "position"),)

    id: int | None = Field(default=None, primary_key=True)
    game_id: int = Field(
        sa_column=Column(Integer, ForeignKey("games.id"), nullable=False, index=True)
    )
    position: int
    player_name: str = Field(default="", max_length=100)
    email: str = Field(default="", max_length=254, index=True)
    pieces: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    """The seat's pieces in its game's own terms (Titan Race: ``{"titans": [...], "team": n}``,
    The Great Race: ``{"crew": name}``): before the start what the seat asked for (empty:
    drawn at random), from the start what it plays."""
    language: str = Field(default="en", max_length=5)
    notify: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    """The player's own settings of the seat: ``mail``, ``quiet`` and ``timezone``,
    ``anytime_windows`` (public, part of the deal) and ``reactions`` (:data:`REACTIONS`,
    private: the standing choice that answers the seat's windows)."""
    secret: str = Field(max_length=64)
    """Per-seat secret mixed into the seat's signed links."""
    invite_token_hash: str | None = Field(default=None, max_length=64, index=True)
    accepted_at: datetime | None = Field(default=None, sa_column=Column(DateTime(timezone=True)))
    is_bot: bool = False
    bot_level: str = Field(
        default="easy", sa_column=Column(String(10), nullable=False, server_default="easy")
    )
    """The level the computer plays the seat at while it plays it (one of
    :data:`app.games.base.BOT_LEVELS`): easy is played inside the move that hands it the turn,
    normal and strong by the worker (:mod:`app.features.clock.botturns`). The clock sets normal when
    it hands a seat over after too many missed deadlines."""
    bank_seconds: int | None = None
    """What is left of the seat's time bank (None: the game has no bank)."""
    missed_deadlines: int = Field(
        default=0, sa_column=Column(Integer, nullable=False, server_default="0")
    )
    resigned_at: datetime | None = Field(default=None, sa_column=Column(DateTime(timezone=True)))
    contribution: str | None = Field(default=None, max_length=128)
    """The seat's own randomness (hex), given when the seat was taken after the commitment
    was shown, mixed into the game's key so that the server alone cannot choose the deal."""


class Move(SQLModel, table=True):
    """One submission accepted for a game: append-only (enforced by database triggers)."""

    __tablename__ = "moves"

    game_id: int = Field(
        sa_column=Column(Integer, ForeignKey("games.id"), primary_key=True, autoincrement=False)
    )
    seq: int = Field(sa_column=Column(Integer, primary_key=True, autoincrement=False))
    seat: int | None = None
    """The seat whose decision it answered (the computer's moves for a seat carry that seat)."""
    kind: str = Field(
        default=MOVE, sa_column=Column(String(20), nullable=False, server_default=MOVE)
    )
    """One of ENTRY_KINDS: only ``move`` entries are inputs for the engine."""
    actor: str = Field(
        default=PLAYER, sa_column=Column(String(20), nullable=False, server_default=PLAYER)
    )
    """Who made the entry (one of ACTORS)."""
    input: str = Field(max_length=2000)
    outcomes: list[Any] = Field(default_factory=list, sa_column=Column(JSON, nullable=False))
    """The random outcomes each input of the submission produced."""
    created_at: datetime = Field(
        default_factory=utcnow, sa_column=Column(DateTime(timezone=True), nullable=False)
    )
    prev_hash: str = Field(max_length=64)
    hash: str = Field(max_length=64)


class SealedOrder(SQLModel, table=True):
    """One seat's secret answer to a simultaneous decision, kept until every answer is in.

    Titan Race never uses it; in *The Great Race* every crew plans at once, behind a screen. A
    plan is sealed here (never shown to anyone but its seat) and the log gets one entry, the
    reveal, holding every plan, when the last one arrives. The primary key (game, decision,
    seat) lets a seat seal once per decision; rows are append-only like the log.
    """

    __tablename__ = "sealed_orders"

    game_id: int = Field(
        sa_column=Column(Integer, ForeignKey("games.id"), primary_key=True, autoincrement=False)
    )
    decision_seq: int = Field(sa_column=Column(Integer, primary_key=True, autoincrement=False))
    """The log entry after which the decision opened (``Loaded.decision_seq``)."""
    seat: int = Field(sa_column=Column(Integer, primary_key=True, autoincrement=False))
    input: str = Field(max_length=2000)
    actor: str = Field(
        default=PLAYER, sa_column=Column(String(20), nullable=False, server_default=PLAYER)
    )
    created_at: datetime = Field(
        default_factory=utcnow, sa_column=Column(DateTime(timezone=True), nullable=False)
    )


class Snapshot(SQLModel, table=True):
    """A cached engine state after ``seq`` moves: a shortcut, never the truth."""

    __tablename__ = "snapshots"

    game_id: int = Field(
        sa_column=Column(Integer, ForeignKey("games.id"), primary_key=True, autoincrement=False)
    )
    seq: int = Field(sa_column=Column(Integer, primary_key=True, autoincrement=False))
    state: dict[str, Any] = Field(sa_column=Column(JSON, nullable=False))


class ApiToken(SQLModel, table=True):
    """A seat's API token for the command-line client: only its SHA-256 is stored."""

    __tablename__ = "api_tokens"

    id: int | None = Field(default=None, primary_key=True)
    token_hash: str = Field(sa_column=Column(String(64), nullable=False, unique=True))
    seat_id: int = Field(
        sa_column=Column(Integer, ForeignKey("seats.id"), nullable=False, index=True)
    )
    label: str = Field(default="", max_length=100)
    created_at: datetime = Field(
        default_factory=utcnow, sa_column=Column(DateTime(timezone=True), nullable=False)
    )
    revoked_at: datetime | None = Field(default=None, sa_column=Column(DateTime(timezone=True)))


class OutboxMail(SQLModel, table=True):
    """A mail to send, written in the same transaction as the move that caused it."""

    __tablename__ = "outbox"

    id: int | None = Field(default=None, primary_key=True)
    game_id: int | None = Field(
        default=None, sa_column=Column(Integer, ForeignKey("games.id"), index=True)
    )
    seq: int | None = None
    kind: str = Field(max_length=40)
    recipient: str = Field(max_length=254)
    seat_id: int | None = None
    message_id: str = Field(sa_column=Column(String(200), nullable=False, unique=True))
    """Deterministic, so a retried or duplicated send is recognisable."""
    payload: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    created_at: datetime = Field(
        default_factory=utcnow, sa_column=Column(DateTime(timezone=True), nullable=False)
    )
    attempts: int = 0
    next_attempt_at: datetime | None = Field(
        default=None, sa_column=Column(DateTime(timezone=True), index=True)
    )
    sent_at: datetime | None = Field(default=None, sa_column=Column(DateTime(timezone=True)))
    last_error: str | None = Field(default=None, max_length=2000)
    handed_at: datetime | None = Field(default=None, sa_column=Column(DateTime(timezone=True)))
    """When the sender was about to end the message's data: from then on the relay may have
    it, so the row is never sent again (see app/mail/send.py)."""


class Deadline(SQLModel, table=True):
    """A reminder or timeout for one seat's pending decision, claimed atomically by one
    scheduler. A timeout row keeps what its due time is computed from (when the decision opened,
    the time allowed, extra time granted by pauses and outages), so that a vacation or a change
    of quiet hours can recompute it; reminder rows follow their timeout row."""

    __tablename__ = "deadlines"
    __table_args__ = (
        UniqueConstraint("game_id", "seq", "seat", "kind"),
        Index(
            "ix_deadlines_open_due",
            "due_at",
            postgresql_where=text("done_at IS NULL"),
            sqlite_where=text("done_at IS NULL"),
        ),
        Index(
            "ix_deadlines_open_game",
            "game_id",
            "seq",
            postgresql_where=text("done_at IS NULL"),
            sqlite_where=text("done_at IS NULL"),
        ),
    )

    id: int | None = Field(default=None, primary_key=True)
    game_id: int = Field(
        sa_column=Column(Integer, ForeignKey("games.id"), nullable=False, index=True)
    )
    seq: int
    """The decision it belongs to: the log entry after which it opened."""
    seat: int
    kind: str = Field(max_length=20)
    """``timeout`` or ``reminder-N`` (the N-th reminder point)."""
    due_at: datetime = Field(sa_column=Column(DateTime(timezone=True), nullable=False))
    opened_at: datetime | None = Field(default=None, sa_column=Column(DateTime(timezone=True)))
    allowance_seconds: int = Field(
        default=0, sa_column=Column(Integer, nullable=False, server_default="0")
    )
    extra_seconds: int = Field(
        default=0, sa_column=Column(Integer, nullable=False, server_default="0")
    )
    claimed_by: str | None = Field(default=None, max_length=100)
    claimed_at: datetime | None = Field(default=None, sa_column=Column(DateTime(timezone=True)))
    done_at: datetime | None = Field(default=None, sa_column=Column(DateTime(timezone=True)))
    result: str | None = Field(default=None, max_length=40)


class Absence(SQLModel, table=True):
    """A player's away dates (vacation), for every game of their address: their deadlines
    stretch over it (``stretch``), or the computer plays for them meanwhile (``computer``)."""

    __tablename__ = "absences"

    id: int | None = Field(default=None, primary_key=True)
    email: str = Field(max_length=254, index=True)
    starts_at: datetime = Field(sa_column=Column(DateTime(timezone=True), nullable=False))
    ends_at: datetime = Field(sa_column=Column(DateTime(timezone=True), nullable=False))
    mode: str = Field(default="stretch", max_length=20)
    created_at: datetime = Field(
        default_factory=utcnow, sa_column=Column(DateTime(timezone=True), nullable=False)
    )
    cancelled_at: datetime | None = Field(default=None, sa_column=Column(DateTime(timezone=True)))


class ClockTick(SQLModel, table=True):
    """When the scheduler last processed the clock (one row per clock; ``main`` for games), so
    that a long outage is noticed and a health check can report the worker's last tick."""

    __tablename__ = "clock_ticks"

    name: str = Field(sa_column=Column(String(40), primary_key=True))
    last_tick_at: datetime = Field(sa_column=Column(DateTime(timezone=True), nullable=False))
    worker: str = Field(default="", max_length=100)
    processed: int = 0


class InboundMail(SQLModel, table=True):
    """A mail that arrived for a reply address (SMTP listener or IMAP poller), queued for the
    worker that applies it. A worker claims rows atomically (``claimed_by``/``claimed_at``);
    ``expected_seq`` and ``input`` are fixed before the move is submitted, so a row processed
    again after a crash is recognised as already applied; ``processed_at`` and ``result`` say
    what became of it."""

    __tablename__ = "inbound_mail"

    id: int | None = Field(default=None, primary_key=True)
    recipient: str = Field(max_length=254)
    game_uid: str = Field(max_length=32, index=True)
    seat: int
    sender: str = Field(default="", max_length=254)
    """The envelope sender (MAIL FROM), or the From header of a polled mail."""
    message_id: str | None = Field(default=None, max_length=250, index=True)
    source: str = Field(default="smtp", max_length=10)
    raw: bytes = Field(sa_column=Column(LargeBinary, nullable=False))
    received_at: datetime = Field(
        default_factory=utcnow, sa_column=Column(DateTime(timezone=True), nullable=False)
    )
    claimed_by: str | None = Field(default=None, max_length=100)
    claimed_at: datetime | None = Field(default=None, sa_column=Column(DateTime(timezone=True)))
    attempts: int = 0
    """How many times a worker claimed it (a message that keeps failing is given up)."""
    expected_seq: int | None = None
    input: str | None = Field(default=None, max_length=500)
    processed_at: datetime | None = Field(
        default=None, sa_column=Column(DateTime(timezone=True), index=True)
    )
    result: str | None = Field(default=None, max_length=40)
    """applied, duplicate, illegal, moved-on, not-yours, not-playing, unparseable, ignored..."""
    detail: str | None = Field(default=None, max_length=2000)


class IdempotencyKey(SQLModel, table=True):
    """The answer to an unsafe request sent with an ``Idempotency-Key`` header, replayed to a
    repeat of the same request instead of doing it again (see app/web/idempotency.py).

    ``key_hash`` is the SHA-256 of the key with the scope it was sent in (the credential's hash,
    or the route when there is none), so neither the key nor the credential is stored;
    ``fingerprint`` that of the request (method, path, body), so that the key reused for
    another request is refused. While the first request runs, ``status`` is None (a repeat gets
    409); the answer is written in the transaction of what the request changed, encrypted with
    a key derived from the server's secret key and the Idempotency-Key itself. Rows live 24
    hours."""

    __tablename__ = "idempotency_keys"

    id: int | None = Field(default=None, primary_key=True)
    key_hash: str = Field(sa_column=Column(String(64), nullable=False, unique=True))
    fingerprint: str = Field(max_length=64)
    route: str = Field(default="", max_length=200)
    """The path the key was first used on (for an operator reading the table)."""
    status: int | None = None
    """The first answer's HTTP status; None while the first request is still being processed."""
    answer: str | None = None
    """The first answer's JSON body, encrypted (Fernet)."""
    created_at: datetime = Field(
        default_factory=utcnow,
        sa_column=Column(DateTime(timezone=True), nullable=False, index=True),
    )
    locked_at: datetime = Field(
        default_factory=utcnow, sa_column=Column(DateTime(timezone=True), nullable=False)
    )
    """When a request last claimed the key: a claim left unanswered for longer than
    ``app.web.idempotency.LEASE`` (its process died) may be taken over."""


class ChatMessage(SQLModel, table=True):
    """One message of a game's chat: append-only, public to the game's seats and (when the
    game allows spectators) its spectators; never a place for hidden information."""

    __tablename__ = "chat_messages"
    __table_args__ = (Index("ix_chat_messages_game_id_id", "game_id", "id"),)

    id: int | None = Field(default=None, primary_key=True)
    game_id: int = Field(sa_column=Column(Integer, ForeignKey("games.id"), nullable=False))
    seat: int | None = None
    """The position of the seat that wrote it; None for a message of the system."""
    text: str = Field(max_length=2000)
    created_at: datetime = Field(
        default_factory=utcnow, sa_column=Column(DateTime(timezone=True), nullable=False)
    )


class Webhook(SQLModel, table=True):
    """An address a game's owner asked to be told of its turns and its end
    (app.features.webhooks.hooks)."""

    __tablename__ = "webhooks"

    id: int | None = Field(default=None, primary_key=True)
    game_id: int = Field(
        sa_column=Column(Integer, ForeignKey("games.id"), nullable=False, index=True)
    )
    url: str = Field(max_length=2000)
    format: str = Field(max_length=20)
    """How the body is shaped: discord, slack, matrix, ntfy or json."""
    language: str = Field(
        default="en", sa_column=Column(String(5), nullable=False, server_default="en")
    )
    """The language its posts are worded in (one of app.core.i18n.LANGUAGES)."""
    secret: str | None = Field(default=None, max_length=60)
    """What its posts are signed with (``whsec_...``, Standard Webhooks): a ``json`` webhook's,
    drawn when it was added; None for other formats and for webhooks added before signing."""
    created_at: datetime = Field(
        default_factory=utcnow, sa_column=Column(DateTime(timezone=True), nullable=False)
    )


class WebhookDelivery(SQLModel, table=True):
    """One event to post to one webhook, written in the transaction of the move that caused it and
    sent by the worker with the outbox's claim, lease and backoff (app.features.webhooks.hooks)."""

    __tablename__ = "webhook_outbox"

    id: int | None = Field(default=None, primary_key=True)
    webhook_id: int = Field(
        sa_column=Column(Integer, ForeignKey("webhooks.id"), nullable=False, index=True)
    )
    event_key: str = Field(sa_column=Column(String(200), nullable=False, unique=True))
    """``{webhook}.{seq}.{event}``: one decision or end posts once per webhook."""
    event: str = Field(max_length=20)
    payload: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    created_at: datetime = Field(
        default_factory=utcnow, sa_column=Column(DateTime(timezone=True), nullable=False)
    )
    attempts: int = 0
    next_attempt_at: datetime | None = Field(
        default=None, sa_column=Column(DateTime(timezone=True), index=True)
    )
    sent_at: datetime | None = Field(default=None, sa_column=Column(DateTime(timezone=True)))
    last_error: str | None = Field(default=None, max_length=2000)


class PushKey(SQLModel, table=True):
    """The server's VAPID key pair for Web Push (app.features.push.notifications): made on first
    need, one row, kept in the database so that every process signs with the same key (a new key
    would orphan every browser's subscription)."""

    __tablename__ = "push_keys"

    id: int | None = Field(default=None, primary_key=True)
    private_key: str = Field(max_length=400)
    """The P-256 private key, PEM (PKCS#8)."""
    public_key: str = Field(max_length=200)
    """The uncompressed public point, base64url without padding (the browser's
    ``applicationServerKey``)."""
    created_at: datetime = Field(
        default_factory=utcnow, sa_column=Column(DateTime(timezone=True), nullable=False)
    )


class PushSubscription(SQLModel, table=True):
    """One browser's Web Push subscription for one seat (app.features.push.notifications)."""

    __tablename__ = "push_subscriptions"
    __table_args__ = (UniqueConstraint("seat_id", "endpoint"),)

    id: int | None = Field(default=None, primary_key=True)
    seat_id: int = Field(
        sa_column=Column(Integer, ForeignKey("seats.id"), nullable=False, index=True)
    )
    endpoint: str = Field(max_length=1000)
    p256dh: str = Field(max_length=200)
    auth: str = Field(max_length=100)
    created_at: datetime = Field(
        default_factory=utcnow, sa_column=Column(DateTime(timezone=True), nullable=False)
    )


class PushDelivery(SQLModel, table=True):
    """One "your turn" notification to one subscription, written in the move's transaction
    and sent by the worker with a claim, lease and backoff, like the mail outbox."""

    __tablename__ = "push_outbox"

    id: int | None = Field(default=None, primary_key=True)
    subscription_id: int = Field(
        sa_column=Column(Integer, ForeignKey("push_subscriptions.id"), nullable=False,
                         index=True)
    )
    event_key: str = Field(sa_column=Column(String(200), nullable=False, unique=True))
    """``{subscription}.{seq}``: one decision is pushed once per subscription."""
    seq: int
    """The log length when the decision opened (skipped if answered before it is sent)."""
    payload: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    created_at: datetime = Field(
        default_factory=utcnow, sa_column=Column(DateTime(timezone=True), nullable=False)
    )
    attempts: int = 0
    next_attempt_at: datetime | None = Field(
        default=None, sa_column=Column(DateTime(timezone=True), index=True)
    )
    sent_at: datetime | None = Field(default=None, sa_column=Column(DateTime(timezone=True)))
    last_error: str | None = Field(default=None, max_length=2000)


TAKEBACK_STATUSES = ("pending", "agreed", "refused", "expired", "lapsed")
"""A takeback request's course: asked and waiting for the other players, then taken back (all
agreed), refused by one of them, expired at its deadline, or lapsed (the game moved on first)."""


class Takeback(SQLModel, table=True):
    """A player's request to take back their own last move (see app/features/takeback/takebacks.py).
    At most one is pending per game (the partial unique index); ``voters`` are the other human seats
    when it was asked, ``answers`` what each said (by position, as text keys: JSON). The request
    stands for the log as it was (``head_seq`` entries): any entry after that lapses it."""

    __tablename__ = "takebacks"
    __table_args__ = (
        Index(
            "ix_takebacks_one_pending",
            "game_id",
            unique=True,
            postgresql_where=text("status = 'pending'"),
            sqlite_where=text("status = 'pending'"),
        ),
    )

    id: int | None = Field(default=None, primary_key=True)
    game_id: int = Field(
        sa_column=Column(Integer, ForeignKey("games.id"), nullable=False, index=True)
    )
    seat: int
    """The asking seat."""
    move_seq: int
    """The log entry taken back: the game goes back to the state before it."""
    head_seq: int
    """How many entries the log had when it was asked."""
    voters: list[int] = Field(default_factory=list, sa_column=Column(JSON, nullable=False))
    answers: dict[str, str] = Field(default_factory=dict,
                                    sa_column=Column(JSON, nullable=False))
    status: str = Field(default="pending", max_length=20)
    created_at: datetime = Field(
        default_factory=utcnow, sa_column=Column(DateTime(timezone=True), nullable=False)
    )
    due_at: datetime = Field(sa_column=Column(DateTime(timezone=True), nullable=False))
    closed_at: datetime | None = Field(default=None, sa_column=Column(DateTime(timezone=True)))
    rollback_seq: int | None = None
    """The ``rollback`` entry that applied it, once all agreed."""


class SignIn(SQLModel, table=True):
    """One sign-in link asked for by mail (app/features/signin/signins.py), and, once used, the
    account session of the browser or terminal that used it.

    A row is written for every request, whether or not the address has a seat (so that the
    answer, and the per-address and per-client limits, are the same for both); neither the
    address nor the client's IP is stored, only keyed hashes of them. ``used_at`` makes the
    link single use: it is set by one conditional UPDATE (``WHERE used_at IS NULL``), which one
    request alone can win. ``seats_digest`` fingerprints the address's seats and their secrets
    when the link was mailed: a seat given to someone else since makes the link useless.
    ``revoked_at`` is set by signing out."""

    __tablename__ = "signins"

    id: int | None = Field(default=None, primary_key=True)
    token_id: str = Field(sa_column=Column(String(32), nullable=False, unique=True))
    email_digest: str = Field(sa_column=Column(String(64), nullable=False, index=True))
    client_digest: str = Field(sa_column=Column(String(64), nullable=False, index=True))
    seats_digest: str = Field(max_length=64)
    mailed: bool = Field(
        default=False, sa_column=Column(Boolean, nullable=False, server_default=sa_false())
    )
    """The address had a seat, so the link was mailed (the answer said the same either way)."""
    requested_at: datetime = Field(
        default_factory=utcnow,
        sa_column=Column(DateTime(timezone=True), nullable=False, index=True),
    )
    used_at: datetime | None = Field(default=None, sa_column=Column(DateTime(timezone=True)))
    used_by: str | None = Field(default=None, max_length=10)
    """``web`` (a browser's session) or ``cli`` (a terminal's account token)."""
    revoked_at: datetime | None = Field(default=None, sa_column=Column(DateTime(timezone=True)))


class BotTurn(SQLModel, table=True):
    """A decision a normal or strong computer seat owes, written in the transaction of the move that
    handed it the turn and played by a scheduler (:mod:`app.features.clock.botturns`), never in a
    web request. Claimed atomically (``claimed_by``, ``claimed_at``: a lease); ``done_at`` and
    ``result`` (``played``, ``stale``) once settled. One row per decision and seat."""

    __tablename__ = "bot_turns"
    __table_args__ = (
        UniqueConstraint("game_id", "decision_seq", "seat"),
        Index(
            "ix_bot_turns_open",
            "created_at",
            postgresql_where=text("done_at IS NULL"),
            sqlite_where=text("done_at IS NULL"),
        ),
    )

    id: int | None = Field(default=None, primary_key=True)
    game_id: int = Field(
        sa_column=Column(Integer, ForeignKey("games.id"), nullable=False, index=True)
    )
    decision_seq: int
    """The decision it answers: the log entry after which it opened."""
    seat: int
    level: str = Field(max_length=10)
    created_at: datetime = Field(
        default_factory=utcnow, sa_column=Column(DateTime(timezone=True), nullable=False)
    )
    claimed_by: str | None = Field(default=None, max_length=100)
    claimed_at: datetime | None = Field(default=None, sa_column=Column(DateTime(timezone=True)))
    attempts: int = Field(default=0, sa_column=Column(Integer, nullable=False, server_default="0"))
    """How many times a worker claimed it (a decision whose search keeps failing is given up,
    the game then waiting as for a player who does not answer)."""
    done_at: datetime | None = Field(default=None, sa_column=Column(DateTime(timezone=True)))
    result: str | None = Field(default=None, max_length=20)
