"""What every player's command shares (cli/player_*.py, cli/fair.py): its consoles, its
``--json`` option and GAME argument, its one failure line, the seat a GAME argument names and the
game's UI, and the words of statuses, seats, players, options and due times.

Every failure of a player's command is one line on standard error with exit code 1
(:func:`fail`). A game's own words come from its :class:`app.games.ui.GameUI` (chosen by the
game's ruleset, which the API names): this module knows no game.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Final, NoReturn

import click
from rich.console import Console, RenderableType
from rich.text import Text

from cli.client import Config, Seat, seat_language
from cli.completion import complete_game
from cli.speech import N_, lang, speak, tr, tr_plural

if TYPE_CHECKING:
    from app.games.ui import GameUI

STATUS_WORDS: Final[dict[str, str]] = {
    "open": N_("waiting for players"),
    "active": N_("racing"),
    "finished": N_("finished"),
    "abandoned": N_("abandoned"),
}

json_option = click.option("--json", "as_json", is_flag=True,
                           help=N_("Print the API's data as JSON (for scripts)."))
game_argument = click.argument("game", shell_complete=complete_game)


# ---------------------------------------------------------------------- small helpers


def out() -> Console:
    return Console(highlight=False, soft_wrap=False)


def err() -> Console:
    return Console(stderr=True, highlight=False)


def command_line(*words: str) -> str:
    """A ``titanpost`` command line to type, as the hints show it."""
    return " ".join(("titanpost", *words))


def status_words(status: Any) -> str:
    """A game's status in words (an unknown one as the API names it)."""
    return tr(STATUS_WORDS[str(status)]) if str(status) in STATUS_WORDS else str(status)


def emit_json(data: Any) -> None:
    click.echo(json.dumps(data, indent=2, ensure_ascii=False, sort_keys=True))


def fail(message: str, *more: RenderableType) -> NoReturn:
    """``Error: message`` on standard error (then ``more``), exit code 1."""
    click.echo(tr("Error: {message}", message=" ".join(message.split())),
               err=True)  # one line, never wrapped
    console = err()
    for item in more:
        console.print(item)
    sys.exit(1)


def seat_of(game: str) -> Seat:
    """The seat of the game ``game`` names; the command speaks its language from now on."""
    seat = Config.load().find(game)
    speak(seat_language(seat))
    return seat


def ui_named(ruleset: Any) -> GameUI:
    """The words and board of the game whose ruleset is named ``ruleset`` (the registry's first
    when the server names none, as servers did before there were more games)."""
    from app.games.ui import DEFAULT_GAME, game_ui

    name = str(ruleset or DEFAULT_GAME)
    try:
        return game_ui(name)
    except KeyError:
        fail(tr("this titanpost does not know the game '{name}': update it to play this game",
                name=name))


def ui_of(state: Mapping[str, Any]) -> GameUI:
    """The UI of the game ``state`` (the API's state body) is about."""
    return ui_named((state.get("game") or {}).get("ruleset"))


def piece_text(ui: GameUI, piece: Any) -> Text:
    """A piece by name, in its colour."""
    return Text(ui.piece_name(str(piece) if piece else None, lang()),
                style=f"bold {ui.piece_fill(str(piece))}")


def seat_rows(state: Mapping[str, Any]) -> dict[int, dict[str, Any]]:
    seats = (state.get("game") or {}).get("seats") or []
    return {int(s["position"]): s for s in seats if isinstance(s, dict) and "position" in s}


def seat_pieces(state: Mapping[str, Any], position: Any) -> list[str]:
    """The names of the pieces of seat ``position``."""
    seat = seat_rows(state).get(position) if isinstance(position, int) else None
    return piece_names(seat or {})


def piece_names(seat: Mapping[str, Any]) -> list[str]:
    """The names of a seat's pieces as the API's state gives them (its older field, which
    every server has given: :data:`app.games.apiwords.OLDER_PIECES`)."""
    from app.games.apiwords import OLDER_PIECES

    return [str(p) for p in seat.get(OLDER_PIECES) or []]


def bare_name(state: Mapping[str, Any], position: Any) -> str:
    """``Ann``, ``the computer``, ``seat 3``."""
    seat = seat_rows(state).get(int(position)) if isinstance(position, int) else None
    if seat is None:
        return seat_words(position)
    if seat.get("name") == FORMER_PLAYER:
        return tr(FORMER_PLAYER)
    return tr("the computer") if seat.get("bot") and seat.get("name") == "Computer" else str(
        seat["name"])


FORMER_PLAYER: Final = N_("a former player")
"""The name of a seat whose player asked to be forgotten (as app.service.FORMER_PLAYER: the
CLI's player commands do not import the server)."""
LEVEL_WORDS: Final = {"easy": N_("easy"), "normal": N_("normal"), "strong": N_("strong")}
"""A computer seat's level in words (as app.games.base.BOT_LEVEL_WORDS: the CLI's player
commands do not import the games)."""


def computer_words(seat: Mapping[str, Any]) -> str:
    """``computer (strong)``: a computer seat and its level."""
    level = LEVEL_WORDS.get(str(seat.get("level") or "easy"), LEVEL_WORDS["easy"])
    return tr("computer ({level})", level=tr(level))


def seat_name(seat: Mapping[str, Any]) -> str:
    """A seat's player's name; a computer seat's default name in the reader's language."""
    name = str(seat.get("name") or "")
    if name == FORMER_PLAYER:
        return tr(FORMER_PLAYER)
    return tr("Computer") if seat.get("bot") and name == "Computer" else name


def seat_words(position: Any) -> str:
    """``seat 3`` (seats counted from 1 for people)."""
    return tr("seat {number}", number=position + 1 if isinstance(position, int) else position)


def player_name(state: Mapping[str, Any], position: Any, *, you: bool = True) -> str:
    """``you``, ``Ann (her piece)``, ``the computer (its piece)``."""
    if you and position is not None and position == state.get("you"):
        return tr("you")
    if not isinstance(position, int) or position not in seat_rows(state):
        return seat_words(position)
    ui = ui_of(state)
    pieces = ", ".join(ui.piece_name(p, lang()) for p in seat_pieces(state, position))
    name = bare_name(state, position)
    return f"{name} ({pieces})" if pieces else name


def describe(ui: GameUI, option: str, pending: Mapping[str, Any] | None) -> str:
    """An option (or several joined by ';') in plain words, as the game words it."""
    return ui.describe_option(option, {"pending": dict(pending or {})}, lang()) or option


def acting_piece(state: Mapping[str, Any], pending: Mapping[str, Any] | None) -> str | None:
    """Which of your pieces the pending decision is for: your only one, or the first of yours
    the decision names."""
    mine = seat_pieces(state, state.get("you"))
    if len(mine) <= 1:
        return mine[0] if mine else None
    named = [v for v in (pending or {}).values() if isinstance(v, str)]
    return next((v for v in named if v in mine), None)


def sealed_words(state: Mapping[str, Any]) -> str | None:
    """Your answer sealed until every player's is in (a simultaneous decision), in words."""
    sealed = state.get("sealed")
    if not isinstance(sealed, str) or not sealed:
        return None
    return describe(ui_of(state), sealed, (state.get("view") or {}).get("pending"))


def when_text(value: Any, *, relative: bool = True) -> str:
    """A due time as the player's local time (with the year when it is not this one) and how
    far off it is."""
    try:
        moment = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        return str(value)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    local = moment.astimezone()
    if lang() == "en":
        shown = f"{local:%a %d %b}" + (f" {local:%Y}" if local.year != datetime.now().year
                                       else "")
    else:  # (no weekday or month names but English ones without a locale: the date in numbers)
        shown = f"{local:%Y-%m-%d}"
    shown += f" {local:%H:%M %Z}".rstrip()
    if not relative:
        return shown
    left = moment - datetime.now(UTC)
    seconds = abs(left.total_seconds())
    if seconds < 3600:
        span = tr("{minutes} min", minutes=max(1, round(seconds / 60)))
    elif seconds < 3 * 86400:
        span = tr("{hours} h", hours=round(seconds / 3600))
    else:
        span = tr_plural("{n} day", "{n} days", round(seconds / 86400))
    if left.total_seconds() >= 0:
        return tr("{when} (in {span})", when=shown, span=span)
    return tr("{when} ({span} ago)", when=shown, span=span)
