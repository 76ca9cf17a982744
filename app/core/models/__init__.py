"""Database tables (SQLModel), one module per area. The move log is the truth; everything else
serves it.

Importing this package registers every table on ``SQLModel.metadata`` (Alembic's
migrations/env.py and the tests rely on it), and every table and word of the tables is
importable from here:

- :mod:`.base`: the metadata's naming convention, set before any table is defined;
  :func:`table_of` and :func:`utcnow`;
- :mod:`.games`: a game, its seats, its move log (append-only), sealed orders and snapshots, and
  the words of a game's statuses, log entries and actors;
- :mod:`.access`: a seat's API tokens, sign-ins by mail, the answers kept for idempotency keys;
- :mod:`.mail`: the outbox of mails to send, the queue of mails that arrived;
- :mod:`.clock`: deadline rows, away dates, the clock's last tick, computer seats' turns;
- :mod:`.players`: a game's chat, takeback requests;
- :mod:`.notifications`: webhooks and Web Push, and their deliveries; the pages open on a
  game (:class:`PageWatcher`);
- :mod:`.personal`: a seat's private notes, the named groups of friends of the standings.
"""

from __future__ import annotations

from .access import ApiToken, IdempotencyKey, SignIn
from .base import table_of, utcnow
from .clock import Absence, BotTurn, ClockTick, Deadline
from .games import (
    ABANDON,
    ABANDONED,
    ACTIVE,
    ACTORS,
    ADMIN,
    AWAY,
    CLOCK,
    COMPUTER,
    ENTRY_KINDS,
    FINISHED,
    GAME_STATUSES,
    HANDOVER,
    MOVE,
    OPEN,
    OWNER,
    PAUSE,
    PLAYER,
    REACTIONS,
    RESIGN,
    RESUME,
    ROLLBACK,
    STATE_KINDS,
    TIMEOUT,
    Game,
    Move,
    SealedOrder,
    Seat,
    Snapshot,
)
from .mail import InboundMail, MailAddress, OutboxMail
from .notifications import (
    PageWatcher,
    PushDelivery,
    PushKey,
    PushSubscription,
    Webhook,
    WebhookDelivery,
)
from .personal import GameNote, PlayerGroup, PlayerGroupMember
from .players import TAKEBACK_STATUSES, ChatMessage, Takeback

__all__ = [
    "ABANDON",
    "ABANDONED",
    "ACTIVE",
    "ACTORS",
    "ADMIN",
    "AWAY",
    "CLOCK",
    "COMPUTER",
    "ENTRY_KINDS",
    "FINISHED",
    "GAME_STATUSES",
    "HANDOVER",
    "MOVE",
    "OPEN",
    "OWNER",
    "PAUSE",
    "PLAYER",
    "REACTIONS",
    "RESIGN",
    "RESUME",
    "ROLLBACK",
    "STATE_KINDS",
    "TAKEBACK_STATUSES",
    "TIMEOUT",
    "Absence",
    "ApiToken",
    "BotTurn",
    "ChatMessage",
    "ClockTick",
    "Deadline",
    "Game",
    "GameNote",
    "IdempotencyKey",
    "InboundMail",
    "MailAddress",
    "Move",
    "OutboxMail",
    "PageWatcher",
    "PlayerGroup",
    "PlayerGroupMember",
    "PushDelivery",
    "PushKey",
    "PushSubscription",
    "SealedOrder",
    "Seat",
    "SignIn",
    "Snapshot",
    "Takeback",
    "Webhook",
    "WebhookDelivery",
    "table_of",
    "utcnow",
]
