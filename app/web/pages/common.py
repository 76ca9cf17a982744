"""What the page blueprints share: error pages, reading a game's rows, times in words, the
creator tokens this browser keeps, and the helpers every page's template has (the page's
language itself is :mod:`.language`)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from datetime import UTC, datetime
from functools import cache
from typing import Any
from urllib.parse import urlsplit
from zoneinfo import ZoneInfo, available_timezones

from flask import (
    Blueprint,
    current_app,
    g,
    render_template,
    request,
    session,
)
from flask.typing import ResponseReturnValue
from sqlalchemy.exc import SQLAlchemyError
from sqlmodel import col, select
from werkzeug.exceptions import HTTPException

from app.core.i18n import N_
from app.core.models import Game, Seat
from app.core.readertime import reader_time
from app.games import GAMES, ruleset
from app.games.base import BOT_LEVEL_WORDS
from app.games.ui import game_ui
from app.service import (
    COMPUTER_NAME,
    FORMER_PLAYER,
    Forbidden,
    NotFound,
    ServiceError,
    pause_reason_timeout,
)
from app.web.browser_seats import is_admin, seat_in, service, signed_in
from app.web.errors import NOT_ANSWERED, SERVER_FAILED, too_large
from app.web.pages.gamewords import colour_name, piece_name, ui
from app.web.pages.language import keep_lang, lang, pick_lang, tr, tr_plural

# ---------------------------------------------------------------------------- errors


ERROR_TITLES = {
    400: N_("This request cannot be used"),
    403: N_("Not allowed"),
    404: N_("Not found"),
    409: N_("The game moved on"),
    422: N_("Not a legal choice"),
}
"""The error page's heading per status (English message ids; shown translated)."""
OTHER_ERROR_TITLE = N_("Something went wrong")


def error_page(status: int, message: str, title: str | None = None) -> ResponseReturnValue:
    """The error page; ``message`` and ``title`` are already in the page's language."""
    return (
        render_template(
            "pages/error.html",
            status=status,
            title=title or tr(ERROR_TITLES.get(status, OTHER_ERROR_TITLE)),
            message=message,
            back=safe_next(request.referrer),
        ),
        status,
    )


def _service_error(exc: ServiceError) -> ResponseReturnValue:
    return error_page(exc.status, exc.say(lang()))


def _http_error(exc: HTTPException) -> ResponseReturnValue:
    code = exc.code or 500
    if code == 400 and "CSRF" in (exc.description or ""):
        return error_page(
            400,
            tr("This form is missing its security token or the token has expired (the page "
               "was open for a long time). Nothing was changed: reload the page and try "
               "again."),
            title=tr("The form has expired"),
        )
    if code < 400:
        return exc.get_response()
    if code == 413:
        return error_page(413, too_large(current_app.config.get("MAX_CONTENT_LENGTH"), lang()),
                           title=tr("Too much data"))
    if not exc.description or exc.description == type(exc).description:
        # Werkzeug's own English words for the status: ours instead
        return error_page(code, tr(SERVER_FAILED if code >= 500 else NOT_ANSWERED))
    return error_page(code, exc.description)


def safe_next(target: str | None) -> str | None:
    """A local path to go back to (never another site)."""
    if not target:
        return None
    parts = urlsplit(target)
    if parts.netloc and parts.netloc != request.host:
        return None
    path = parts.path or "/"
    if not path.startswith("/") or path.startswith("//"):
        return None
    return path + (f"?{parts.query}" if parts.query else "")


# ---------------------------------------------------------------------------- reading rows


def game_rows(uid: str) -> tuple[Game, list[Seat]]:
    """The game's row and its seats (404 for an unknown game)."""
    if not re.fullmatch(r"[0-9a-f]{32}", uid or ""):
        raise NotFound(tr("there is no game '{uid}'", uid=uid))
    with service().session() as s:
        game = s.exec(select(Game).where(Game.uid == uid)).first()
        if game is None:
            raise NotFound(tr("there is no game '{uid}'", uid=uid))
        seats = list(
            s.exec(select(Seat).where(Seat.game_id == game.id).order_by(col(Seat.position)))
        )
        g.game_name = game.ruleset  # the game's words on this page come from its UI
        return game, seats


_BOARDS: dict[tuple[str, str], Any] = {}


def boards_of(game: Game) -> Any:
    """The game's boards, resolved by its UI: kept per game and setup, which is all they
    depend on (not per game id: one process may serve games of several databases, a restore
    or the tests, whose ids may meet)."""
    key = (game.ruleset, json.dumps(game.setup, sort_keys=True))
    found = _BOARDS.get(key)
    if found is None:
        found = ui(game.ruleset).boards(game.setup)
        if len(_BOARDS) > 500:
            _BOARDS.clear()
        _BOARDS[key] = found
    return found


def seat_rows(game: Game, seats: list[Seat],
              summary: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """The rows of a game's players for its pages (``pieces``: the names of each seat's
    pieces, ``team``: its team)."""
    rules = ruleset(game.ruleset)
    by_position = {s["position"]: s for s in (summary or {}).get("seats", [])}
    rows = []
    for seat in seats:
        summed = by_position.get(seat.position, {})
        rows.append(
            {
                "position": seat.position,
                "name": _seat_name(summed.get("name", seat.player_name), seat.is_bot),
                "pieces": rules.piece_names(seat.pieces),
                "team": rules.fields_of(seat.pieces)["team"],
                "bot": summed.get("bot", seat.is_bot),
                "level": seat.bot_level,
                "computer": computer_words(seat.bot_level),
                "accepted": seat.accepted_at is not None,
                "resigned": seat.resigned_at is not None,
                "language": seat.language,
                "email": seat.email,
            }
        )
    return rows


def utc_time(stamp: Any) -> str:
    if not isinstance(stamp, str):
        return ""
    try:
        moment = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return stamp
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")


def local_time(stamp: Any, zone_name: str | None) -> str | None:
    """An ISO time as the wall clock of ``zone_name`` shows it (None without a valid zone)."""
    if not isinstance(stamp, str) or not zone_name:
        return None
    try:
        moment = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
        local = moment.astimezone(ZoneInfo(zone_name))
    except (ValueError, KeyError):
        return None
    return f"{local:%Y-%m-%d %H:%M} {zone_name}"


def duration(seconds: int) -> str:
    """A span of time in hours and minutes, e.g. "5 h 30 min"."""
    minutes = max(0, int(seconds)) // 60
    hours, minutes = divmod(minutes, 60)
    if hours and minutes:
        return tr("{hours} h {minutes} min", hours=hours, minutes=minutes)
    if hours:
        return tr("{hours} h", hours=hours)
    return tr("{minutes} min", minutes=minutes)


@cache
def time_zones() -> tuple[str, ...]:
    """IANA time zone names for the forms' suggestions."""
    return tuple(sorted(z for z in available_timezones()
                        if ("/" in z and not z.startswith(("posix/", "right/", "Etc/")))
                        or z == "UTC"))


def pause_words(reason: str | None, seats: list[dict[str, Any]]) -> str:
    """Why a game is paused, in the page's language where the reason is the clock's own."""
    if not reason or reason == "by its owner":
        return tr("by its owner")
    for seat in seats:
        if reason == pause_reason_timeout(seat["position"]):
            return tr("waiting for {name}, whose time ran out", name=seat["name"])
    return reason


def created_games() -> dict[str, dict[str, Any]]:
    data = session.get(SESSION_CREATED, {})
    return dict(data) if isinstance(data, dict) else {}


def keep_created(uid: str, entry: dict[str, Any]) -> None:
    created = created_games()
    created.pop(uid, None)
    created[uid] = entry
    while len(created) > MAX_CREATED:
        created.pop(next(iter(created)))
    session[SESSION_CREATED] = created
    session.permanent = True


def creator_token(uid: str) -> str | None:
    entry = created_games().get(uid)
    token = entry.get("token") if isinstance(entry, dict) else None
    return token if isinstance(token, str) else None


class FormProblem(ValueError):
    pass


def require_creator(uid: str) -> str:
    token = creator_token(uid)
    if token is None:
        raise Forbidden(tr("only the game's creator may do this: this browser does not hold "
                           "its creator token (enter it on the game's set-up page)"))
    return token


def seat_lang(uid: str) -> None:
    """The page language of this browser's seat in game ``uid`` (or ?lang=, or English)."""
    position = seat_in(uid)
    _, seat_list = game_rows(uid)
    g.lang = pick_lang(next((s.language for s in seat_list if s.position == position), None))


QUIET_EXAMPLE = "22:00-08:00"
"""Quiet hours as the forms' example shows them (notation, the same in every language)."""
SESSION_CREATED = "created"
"""Session key: {game uid: {"token": creator token, "invites": {position: invite token}}}."""
MAX_CREATED = 8
"""Games whose creator token this browser keeps (the oldest are forgotten first)."""


STATUS_NAMES = {"open": N_("waiting for players"), "active": N_("racing"),
                "finished": N_("finished"), "abandoned": N_("abandoned")}
"""A game's status in words (English message ids; shown translated)."""


def _tr_global(text: str, **values: Any) -> str:
    return tr(text, **values)


def _page_helpers() -> dict[str, Any]:
    return {
        "lang": lang(),
        "keep_lang": keep_lang(),
        "quiet_example": QUIET_EXAMPLE,
        "piece_name": piece_name,
        "game_ui": ui(),
        "colour_name": colour_name,
        "colour_fill": _Fills(lambda die: ui().die_fill(die)),
        "piece_fill": _Fills(lambda piece: ui().piece_fill(piece)),
        "card_names": _Fills(lambda card: ui().card_name(card, lang())),
        "status_name": lambda status: tr(STATUS_NAMES.get(status) or status),
        "variant_name": lambda variant: ui().variant_name(str(variant), lang()),
        "is_admin": is_admin(),
        "reader_time": reader_time,
    }


def game_titles(style: str = "and") -> str:
    """The registered games' titles in a sentence of the page's language ("A and B"; ``style``
    ``or``: "A or B")."""
    titles = [game_ui(name).title for name in GAMES]
    if len(titles) < 2:
        return "".join(titles)
    joined = N_("{first} or {last}") if style == "or" else N_("{first} and {last}")
    return tr(joined, first=", ".join(titles[:-1]), last=titles[-1])


class _Fills(dict[str, str]):
    """A template's ``fill[name]`` (or ``fill.get(name, default)``): a piece's or die's colour
    asked of the game's UI."""

    def __init__(self, fill: Callable[[str], str]) -> None:
        super().__init__()
        self._fill = fill

    def __missing__(self, key: str) -> str:
        return self._fill(key)

    def get(self, key: str, default: Any = None) -> Any:
        return self._fill(key)


def computer_words(level: str) -> str:
    """``Computer (strong)``: a computer seat and its level, in the page's language."""
    return tr("Computer ({level})", level=tr(BOT_LEVEL_WORDS.get(level, level)))


def _seat_name(name: str, bot: bool) -> str:
    """A seat's name on a page: a computer seat's default name, and that of a seat whose player
    was forgotten, in the page's language."""
    if name == FORMER_PLAYER:
        return tr(FORMER_PLAYER)
    return tr(COMPUTER_NAME) if bot and name == COMPUTER_NAME else name


def page_blueprint(name: str) -> Blueprint:
    """A blueprint of pages: its errors shown as pages, the page helpers in its templates."""
    blueprint = Blueprint(name, __name__)
    blueprint.register_error_handler(ServiceError, _service_error)
    blueprint.register_error_handler(HTTPException, _http_error)
    blueprint.context_processor(_page_helpers)
    blueprint.add_app_template_global(_tr_global, "tr")
    blueprint.add_app_template_global(tr_plural, "tr_plural")
    blueprint.add_app_template_global(game_titles, "game_titles")
    blueprint.add_app_template_global(signed_in_address, "signed_in_address")
    return blueprint


def signed_in_address() -> str | None:
    """The address this browser is signed in as, for the header (None: not signed in, or the
    database cannot tell now: an error page still renders)."""
    try:
        account = signed_in()
    except SQLAlchemyError:
        return None
    return None if account is None else account.email



TIMEOUT_ACTION_WORDS = {
    "bot": N_("the computer moves for the player"),
    "pass": N_("pass what can be passed"),
    "pause": N_("the game pauses until the player answers"),
}
"""What the clock does when a deadline passes (English message ids; shown translated)."""
