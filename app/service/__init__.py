"""The game service: every way into a game (web, API, mail, CLI, scheduler) goes through here.

Commands are shaped load -> decide -> append, in one transaction. The move log's primary key
(game, sequence) settles races: of two submissions for the same decision exactly one insert
succeeds, and the other is answered "the game moved on" with the new state.

The service is one class, :class:`GameService`, put together from a part per kind of work, each
its own module: :mod:`.setup` (a game created and started), :mod:`.seats` (its seats filled:
invitations, accepting, a seat's share of the deal, a running game's seat given to someone new),
:mod:`.moves` (a seat's answers, a resignation, a timeout), :mod:`.reading` (views, options,
the log), :mod:`.admin` (pause, rollback, export, import, verify), :mod:`.botplay` (the worker's
normal and strong computer moves). They share :mod:`.base` (the database,
the listeners, a game read for one command) and :mod:`.writing` (how the log is appended to).
:mod:`.errors` holds the refusals, :mod:`.records` what the parts pass between them,
:mod:`.gamesettings` and :mod:`.exports` the checks of a game's settings and of an export,
:mod:`.refusals` the limit on a seat's refused moves. :mod:`.logreplay` replays a log entry by
entry (verification, the admin's replay, the fairness check); :mod:`.leases` claims due rows of
an outbox table for one worker (webhooks, Web Push). What other modules use is importable from
here.
"""

from __future__ import annotations

from app.core.i18n import LANGUAGES  # the languages a seat may choose
from app.core.logchain import genesis_hash, move_hash, timestamp
from app.core.models import TIMEOUT
from app.features.clock.pausewords import pause_reason_timeout, pause_said
from app.service.logreplay import LogReplay

from .admin import AdminCommands
from .botplay import PENDING_TAKEBACK, BotPlay, BotTask
from .errors import (
    EMAIL,
    GAME_NAME,
    MAX_INPUT,
    PAUSE_REASON,
    PLAYER_NAME,
    BadRequest,
    Forbidden,
    GameMovedOn,
    IllegalMove,
    NotFound,
    NotPlaying,
    ServiceError,
    Unauthorized,
    WrongCreatorToken,
    checked_line,
    is_address,
    refuse_unseen_in_address,
)
from .exports import EXPORT_FORMAT
from .gamesettings import GAME_SETTINGS, check_game_settings, check_quiet
from .moves import MoveCommands
from .reading import ReadingQueries
from .records import (
    AnswerRecorder,
    GameEvent,
    LinkSeat,
    Loaded,
    find_game,
    token_hash,
)
from .seats import SeatCommands
from .setup import COMPUTER_NAME, FORMER_PLAYER, SetupCommands

__all__ = [
    "COMPUTER_NAME",
    "EMAIL",
    "EXPORT_FORMAT",
    "FORMER_PLAYER",
    "GAME_NAME",
    "GAME_SETTINGS",
    "LANGUAGES",
    "MAX_INPUT",
    "PAUSE_REASON",
    "PENDING_TAKEBACK",
    "PLAYER_NAME",
    "TIMEOUT",
    "AnswerRecorder",
    "BadRequest",
    "BotTask",
    "Forbidden",
    "GameEvent",
    "GameMovedOn",
    "GameService",
    "IllegalMove",
    "LinkSeat",
    "Loaded",
    "LogReplay",
    "NotFound",
    "NotPlaying",
    "ServiceError",
    "Unauthorized",
    "WrongCreatorToken",
    "check_game_settings",
    "check_quiet",
    "checked_line",
    "find_game",
    "genesis_hash",
    "is_address",
    "move_hash",
    "pause_reason_timeout",
    "pause_said",
    "refuse_unseen_in_address",
    "timestamp",
    "token_hash",
]


class GameService(SetupCommands, SeatCommands, MoveCommands, ReadingQueries, AdminCommands,
                  BotPlay):
    """Every command and read on games (see the package's docstring for its parts)."""
