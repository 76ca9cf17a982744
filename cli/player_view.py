"""The player's commands: play a game (Titan Race, The Great Race) from a terminal against a
server's JSON API. This module reads and shows games (``games``, ``show``, ``log``, ``watch``,
``chat``) and holds what the player's commands share (the consoles, the seat a GAME argument
names, the board and situation drawn); the moves are in cli/player_moves.py (``options``,
``play``, ``resign``) and the account in cli/player_account.py (``login``, ``logout``,
``settings``, ``vacation``).

``titanpost login`` keeps the seat tokens (cli/client.py); the other commands use them. Every
read command takes ``--json`` (the API's data, for scripts); every failure is one line on
standard error with exit code 1. cli/main.py lists the commands (imported when one is run).

A game's own words and board come from its :class:`app.games.ui.GameUI` (chosen by the game's
ruleset, which the API names): this module knows no game.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Final, NoReturn

import click
from rich import box
from rich.console import Console, Group, RenderableType
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from app.core.readertime import reader_time, zone_of
from cli.client import (
    Api,
    ClientError,
    Config,
    Seat,
    Unreachable,
    remember_shown,
    seat_language,
)
from cli.completion import complete_game
from cli.speech import N_, lang, pause_words, speak, tr, tr_plural

if TYPE_CHECKING:
    from app.games.ui import GameUI

STATUS_WORDS: Final[dict[str, str]] = {
    "open": N_("waiting for players"),
    "active": N_("racing"),
    "finished": N_("finished"),
    "abandoned": N_("abandoned"),
}
ACTOR_WORDS: Final[dict[str, str]] = {
    "timeout": N_("time ran out"),
    "away": N_("away: the computer played"),
    "owner": N_("the owner"),
    "admin": N_("an admin"),
    "clock": N_("the clock"),
}
KIND_WORDS: Final[dict[str, str]] = {
    "resign": N_("resigned"),
    "handover": N_("seat handed over"),
    "pause": N_("paused"),
    "resume": N_("resumed"),
    "rollback": N_("rolled back"),
    "abandon": N_("abandoned"),
}
"""The log's entries that are no move, in words."""
TIMEOUT_KINDS: Final = ("timeout", "timeout-quick")
MIN_INTERVAL: Final = 0.2

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
    """The words and board of the game whose ruleset is named ``ruleset`` (Titan Race when the
    server names none, as servers before The Great Race did)."""
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
    """A piece (a Titan, a crew) by name, in its colour."""
    return Text(ui.piece_name(str(piece) if piece else None, lang()),
                style=f"bold {ui.piece_fill(str(piece))}")


def seat_rows(state: Mapping[str, Any]) -> dict[int, dict[str, Any]]:
    seats = (state.get("game") or {}).get("seats") or []
    return {int(s["position"]): s for s in seats if isinstance(s, dict) and "position" in s}


def seat_pieces(state: Mapping[str, Any], position: Any) -> list[str]:
    """The pieces (Titans, crews) of seat ``position``."""
    seat = seat_rows(state).get(position) if isinstance(position, int) else None
    return [str(p) for p in (seat or {}).get("titans") or []]


def bare_name(state: Mapping[str, Any], position: Any) -> str:
    """``Ann``, ``the computer``, ``seat 3``."""
    seat = seat_rows(state).get(int(position)) if isinstance(position, int) else None
    if seat is None:
        return seat_words(position)
    return tr("the computer") if seat.get("bot") and seat.get("name") == "Computer" else str(
        seat["name"])


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
    return tr("Computer") if seat.get("bot") and name == "Computer" else name


def seat_words(position: Any) -> str:
    """``seat 3`` (seats counted from 1 for people)."""
    return tr("seat {number}", number=position + 1 if isinstance(position, int) else position)


def player_name(state: Mapping[str, Any], position: Any, *, you: bool = True) -> str:
    """``you``, ``Ann (Craken)``, ``the computer (Grinder)``."""
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


# ---------------------------------------------------------------------- the game's situation


def situation(state: Mapping[str, Any]) -> Text:
    """One line: who must do what now, or how the game ended."""
    game = state.get("game") or {}
    view = state.get("view") or {}
    status = game.get("status")
    if status == "open":
        return Text(tr("Waiting for players to join; the game's creator starts it."),
                    style="dim")
    if status == "abandoned":
        return Text(tr("The game was abandoned."), style="bold")
    winner = view.get("winner") or game.get("winner")
    if status == "finished" or winner:
        return winner_text(state)
    pending = view.get("pending") if isinstance(view.get("pending"), Mapping) else None
    to_act = [p for p in game.get("to_act") or [] if isinstance(p, int)]
    line = Text()
    if game.get("paused"):
        line.append(tr("Paused"), style="bold yellow")
        names = {p: bare_name(state, p) for p in seat_rows(state)}
        line.append(" " + tr("({reason}).", reason=pause_words(game.get("pause_reason"),
                                                               names)) + " ")
    sealed = sealed_words(state)
    if sealed is not None:
        line.append(tr("Sealed"), style="bold green").append(
            tr(": your answer ({answer}) is in.", answer=sealed) + " ")
    if state.get("you") in to_act and pending is not None:
        line.append_text(your_decision(state, pending)).append(".")
    elif to_act:
        line.append(waiting_line(state, pending, to_act))
    else:
        line.append(tr("Nothing is pending."), style="dim")
    return line


def your_decision(state: Mapping[str, Any], pending: Mapping[str, Any]) -> Text:
    """``Your decision (Grinder): Pick a die``."""
    line = Text(tr("Your decision"), style="bold green")
    piece = acting_piece(state, pending)
    if piece:
        line.append(" (").append_text(piece_text(ui_of(state), piece)).append(")")
    return line.append(": ", style="bold green").append(
        ui_of(state).decision_heading(pending, lang()))


def waiting_line(state: Mapping[str, Any], pending: Mapping[str, Any] | None,
                 to_act: Sequence[int]) -> str:
    """``Waiting for Ann (Grinder) to pick a die.``, as the game words it."""
    names = [bare_name(state, p) for p in to_act]
    words = ui_of(state).waiting_for(pending, names, lang())
    return words or tr("Waiting for {names}.", names=", ".join(names))


def winner_text(state: Mapping[str, Any]) -> Text:
    game = state.get("game") or {}
    view = state.get("view") or {}
    ui = ui_of(state)
    winner = view.get("winner") or game.get("winner")
    line = Text(tr("Game over:") + " ", style="bold gold1")
    if not winner:
        return line.append(tr("no winner."))
    line.append_text(piece_text(ui, winner))
    side = [w for w in view.get("winners") or [] if w and w != winner]
    if side:
        line.append(" " + tr("with {pieces}", pieces=", ".join(ui.piece_name(str(w), lang())
                                                               for w in side)))
    line.append(" " + tr("wins"))
    owner = next((p for p, s in seat_rows(state).items() if winner in (s.get("titans") or [])),
                 None)
    if owner is not None:
        line.append(f" ({player_name(state, owner)})")
    return line.append(".")


def my_deadline(state: Mapping[str, Any], clock: Mapping[str, Any] | None) -> Text | None:
    """The timeout of the decision pending now: yours, or whose it is."""
    if not clock or not clock.get("deadlines"):
        return None
    you = state.get("you")
    timeouts = [d for d in clock["deadlines"] if d.get("kind") in TIMEOUT_KINDS]
    mine = [d for d in timeouts if d.get("seat") == you]
    chosen = (mine or timeouts)[:1]
    if not chosen:
        return None
    due = chosen[0]
    when = when_text(due.get("due_at"))
    return Text(tr("Your deadline: {when}", when=when) if due.get("seat") == you else
                tr("Deadline of {player}: {when}", player=player_name(state, due.get("seat")),
                   when=when),
                style="bold" if due.get("seat") == you else "")


def boards_of(state: Mapping[str, Any]) -> Any | None:
    """The game's built-in boards, resolved by its UI; None for a custom board (whose layout
    the API does not give). Only built-in names are resolved: a board name never reaches the
    file system."""
    ui = ui_of(state)
    game = state.get("game") or {}
    names = (state.get("view") or {}).get("circuits") or game.get("circuits")
    setup = game.get("setup")
    choices = {str(c).lower() for c in ui.board_choices}
    if not names or not all(isinstance(n, str) and n.lower() in choices for n in names):
        return None
    if not isinstance(setup, Mapping):
        return None
    try:
        return ui.boards(setup)
    except ValueError:
        return None


def piece_entry(view: Mapping[str, Any], piece: str) -> Mapping[str, Any]:
    """What the view says of one piece: the view keeps each piece's state in a mapping by the
    piece's name (``titans`` in Titan Race, ``crews`` in The Great Race)."""
    for value in view.values():
        if isinstance(value, Mapping) and isinstance(value.get(piece), Mapping):
            entry: Mapping[str, Any] = value[piece]
            return entry
    return {}


def hand_lines(state: Mapping[str, Any]) -> list[Text]:
    """The cards in your pieces' hands with what each does."""
    ui = ui_of(state)
    view = state.get("view") or {}
    lines: list[Text] = []
    for piece in sorted(seat_pieces(state, state.get("you"))):
        hand = piece_entry(view, piece).get("hand")
        if not isinstance(hand, list):
            continue
        head = Text(tr("Your hand") + " (").append_text(piece_text(ui, piece)).append("): ")
        if not hand:
            lines.append(head.append(tr("no cards"), style="dim"))
            continue
        lines.append(head)
        for card in hand:
            info_of = ui.card_info(str(card), lang())
            effect, timing = info_of.get("effect"), info_of.get("timing")
            line = Text("  ").append(info_of.get("name") or str(card), style="bold cyan")
            line.append(f" ({card})", style="dim")
            if effect:
                line.append(f": {effect}")
            if timing:
                line.append(f" [{timing}]", style="dim")
            lines.append(line)
    return lines


def players_table(state: Mapping[str, Any]) -> Table:
    ui = ui_of(state)
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False, title_justify="left")
    table.add_column(tr("Seat"), justify="right")
    table.add_column(tr("Player"))
    table.add_column(tr("Plays"))
    table.add_column("")
    sealed = set((state.get("game") or {}).get("sealed") or [])
    for position, seat in sorted(seat_rows(state).items()):
        notes = []
        if position == state.get("you"):
            notes.append(tr("you"))
        if seat.get("resigned"):
            notes.append(tr("resigned"))
        if seat.get("bot"):
            notes.append(computer_words(seat))
        if not seat.get("accepted"):
            notes.append(tr("not joined yet"))
        if position in sealed:
            notes.append(tr("answer sealed"))
        if seat.get("missed_deadlines"):
            notes.append(tr_plural("{n} missed deadline", "{n} missed deadlines",
                                   int(seat["missed_deadlines"])))
        if isinstance(seat.get("bank_seconds"), int):
            notes.append(tr("bank {hours} h", hours=seat["bank_seconds"] // 3600))
        pieces = Text(", ").join(piece_text(ui, t) for t in seat.get("titans") or [])
        table.add_row(str(position + 1), escape(seat_name(seat)), pieces,
                      ", ".join(notes))
    return table


def state_view(seat: Seat, state: Mapping[str, Any],
               clock: Mapping[str, Any] | None) -> RenderableType:
    """Everything ``show`` draws: header, board, players, hand, decision, deadline."""
    ui = ui_of(state)
    game = state.get("game") or {}
    view = state.get("view")
    parts: list[RenderableType] = []
    title = f"{game.get('name') or ui.title} · {seat.short} · "
    title += status_words(game.get("status"))
    if isinstance(view, Mapping) and view.get("round"):
        title += " · " + tr("round {number}", number=view["round"])
    title += " · " + tr("move {number}", number=game.get("seq", state.get("seq", "?")))
    parts.append(Text(title, style="bold"))
    parts.append(Text())
    if isinstance(view, Mapping):
        boards = boards_of(state)
        if boards is not None:
            parts += [ui.board_text(view, boards, lang()), Text()]
        else:
            parts.append(Text(tr("(A custom board: it is drawn on the game's web page.)"),
                              style="dim"))
    parts.append(players_table(state))
    hand = hand_lines(state)
    if hand:
        parts += [Text(), *hand]
    parts += [Text(), situation(state)]
    deadline = my_deadline(state, clock)
    if deadline is not None:
        parts.append(deadline)
    if state.get("you") in (game.get("to_act") or []):
        parts.append(Text(tr("Your options: {command}",
                             command=command_line("options", seat.short)), style="dim"))
    return Group(*parts)


def fetch_state(seat: Seat) -> dict[str, Any]:
    """The game's state as the seat sees it; what it shows of the dealing is kept in the
    seat's file entry for ``verify-fair`` (:func:`cli.client.remember_shown`)."""
    state = seat.api().get(f"/games/{seat.game}")[1]
    if remember_shown(seat, state) and not seat.from_env:
        Config.load().keep_shown(seat)
    return state


def fetch_clock(seat: Seat, state: Mapping[str, Any]) -> dict[str, Any] | None:
    """The game's deadlines while it runs (None otherwise, or when they cannot be read)."""
    if (state.get("game") or {}).get("status") != "active":
        return None
    status, clock = seat.api().get(f"/games/{seat.game}/deadlines", allow=(403, 404))
    return clock if status == 200 else None


# ---------------------------------------------------------------------- games


@click.command("games", help=N_(
        "Your games: whose turn it is, your deadlines."))
@json_option
def games(as_json: bool) -> None:
    config = Config.load()
    seats = config.all_seats()
    rows: list[dict[str, Any]] = []
    failures: list[str] = []
    extra: dict[str, dict[str, Any]] = {}
    for seat in seats:
        row: dict[str, Any] = {"game": seat.game, "server": seat.server, "name": seat.name,
                               "position": seat.position}
        try:
            state = fetch_state(seat)
            clock = fetch_clock(seat, state)
            _, listed = seat.api().get("/games")
        except Unreachable as exc:
            failures.append(exc.message)
            rows.append({**row, "error": exc.message})
            continue
        except ClientError as exc:
            failures.append(f"{seat.label}: {exc.message}")
            rows.append({**row, "error": exc.message})
            continue
        summary = state.get("game") or {}
        to_act = summary.get("to_act") or []
        due = my_deadline(state, clock)
        rows.append({
            **row,
            "name": summary.get("name", seat.name),
            "status": summary.get("status"),
            "seq": summary.get("seq"),
            "to_act": to_act,
            "your_turn": seat.position in to_act,
            "winner": summary.get("winner"),
            "turn": _turn_words(state),
            "deadline": due.plain if due is not None else None,
            "state": summary,
            "deadlines": clock,
        })
        for other in listed.get("games") or []:
            uid = str(other.get("game"))
            if uid not in extra and all(s.game != uid for s in seats):
                extra[uid] = {**other, "server": seat.server, "not_logged_in": True}
    account_rows, account_failures = _account_rows(config, {row["game"] for row in rows})
    failures += account_failures
    rows += account_rows
    listed_games = {row["game"] for row in rows}
    rows += [row for uid, row in extra.items() if uid not in listed_games]
    everything_failed = len(failures) == len(seats) + len(config.accounts)
    if failures and everything_failed and len(set(failures)) == 1 and not as_json:
        fail(failures[0])  # the server is down, say: that line says it all
    if as_json:
        emit_json({"games": rows})
    else:
        _games_table(rows)
    if failures:
        for failure in dict.fromkeys(failures):
            err().print(Text(tr("Error: {message}", message=failure)))
        sys.exit(1)


def _account_rows(config: Config, known: set[str]) -> tuple[list[dict[str, Any]], list[str]]:
    """The games of each address signed in by mail (GET /api/account/games), but those
    already listed from a seat's token; and what went wrong, per server."""
    rows: list[dict[str, Any]] = []
    failures: list[str] = []
    for server, account in sorted(config.accounts.items()):
        try:
            _, body = Api(server, account["token"], who="the account token").get(
                "/account/games")
        except ClientError as exc:
            failures.append(tr("{email} on {server}: {problem}", email=account["email"],
                               server=server, problem=exc.message))
            continue
        for game in body.get("games") or []:
            if game.get("game") in known:
                continue
            known.add(str(game.get("game")))
            names = ", ".join(str(n) for n in game.get("to_act_names") or [])
            rows.append({**game, "server": server, "email": account["email"],
                         "turn": "paused" if game.get("paused") else names or "-",
                         "deadline": when_text(game["deadline"]) if game.get("deadline")
                         else None})
    return rows, failures


def _turn_words(state: Mapping[str, Any]) -> str:
    game = state.get("game") or {}
    status = game.get("status")
    if status == "finished":
        return winner_text(state).plain.removeprefix(tr("Game over:") + " ").rstrip(".")
    if status != "active":
        return status_words(status)
    if game.get("paused"):
        return tr("paused")
    to_act = game.get("to_act") or []
    return ", ".join(player_name(state, p) for p in to_act) or "-"


def _games_table(rows: Sequence[Mapping[str, Any]]) -> None:
    console = out()
    if not rows:
        console.print(tr("You are not logged in to any game: {command}",
                         command=tr("titanpost login <invitation link>")))
        return
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False)
    for column in (N_("Game"), N_("Name"), N_("Status"), N_("Turn"), N_("Deadline")):
        table.add_column(tr(column))
    table.add_column(tr("Move"), justify="right")
    for row in rows:
        game = str(row.get("game", ""))[:8]
        if row.get("error"):
            table.add_row(game, escape(str(row.get("name") or "")),
                          Text(tr("error"), style="bold red"), Text(str(row["error"])), "", "")
            continue
        if row.get("not_logged_in"):
            table.add_row(game, escape(str(row.get("name") or "")),
                          status_words(row.get("status")),
                          Text(tr("not logged in here: use its invitation link"), style="dim"),
                          "", str(row.get("seq", "")))
            continue
        turn = Text(str(row.get("turn") or ""))
        if row.get("your_turn"):
            turn = Text(tr("you"), style="bold green")
        deadline = str(row.get("deadline") or "")
        deadline = deadline.split(": ", 1)[-1] if deadline else ""
        table.add_row(game, escape(str(row.get("name") or "")),
                      status_words(row.get("status")),
                      turn, deadline, str(row.get("seq", "")))
    console.print(table)


# ---------------------------------------------------------------------- show / options


@click.command("show", help=N_(
        "The board of GAME in colour, the players (life, laps, traps), your hand, the "
        "dice on the table, the pending decision and its deadline."))
@game_argument
@json_option
def show(game: str, as_json: bool) -> None:
    seat = seat_of(game)
    state = fetch_state(seat)
    clock = fetch_clock(seat, state)
    if as_json:
        emit_json({"state": state, "deadlines": clock})
        return
    out().print(state_view(seat, state, clock))


# ---------------------------------------------------------------------- log


def outcome_text(ui: GameUI, outcomes: Any) -> Text:
    """The random outcomes of a log entry in the game's words, dice in their colours."""
    text = Text()
    for part in outcomes or []:
        for outcome in part if isinstance(part, list) else [part]:
            if not str(outcome).split():
                continue
            if text:
                text.append("; ")
            words, dice = ui.outcome_words(str(outcome), lang())
            text.append(words)
            if dice:
                text.append(" ")
            for die in dice:
                text.append(f"[{die}]", style=f"bold {ui.die_fill(die)}")
    return text


def kind_words(kind: str, entry: str) -> str:
    """A log entry that is no move (a resignation, a pause...) in words: its kind's word in
    place of the kind's name the entry starts with."""
    if kind not in KIND_WORDS:
        return entry or kind
    rest = entry.removeprefix(kind).strip(" :") if entry else ""
    return f"{tr(KIND_WORDS[kind])}: {rest}" if rest else tr(KIND_WORDS[kind])


def log_table(state: Mapping[str, Any], moves: Sequence[Mapping[str, Any]],
              title: str | None = None) -> Table:
    ui = ui_of(state)
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False, title=title,
                  title_justify="left", title_style="bold")
    table.add_column("#", justify="right")
    table.add_column(tr("Who"))
    table.add_column(tr("Input"), style="cyan")
    table.add_column(tr("Then"))
    for move in moves:
        who = Text(player_name(state, move.get("seat")) if move.get("seat") is not None
                   else tr("the game"))
        actor = str(move.get("actor") or "")
        if actor in ACTOR_WORDS:
            who.append(f" ({tr(ACTOR_WORDS[actor])})", style="dim")
        entry = str(move.get("input") or "")
        kind = str(move.get("kind") or "move")
        shown = Text(entry) if kind == "move" else Text(kind_words(kind, entry),
                                                        style="italic yellow")
        table.add_row(str(move.get("seq")), who, shown, outcome_text(ui, move.get("outcomes")))
    return table


@click.command("log", help=N_(
        "The move log of GAME: who played what, the dice rolled."))
@game_argument
@click.option("--last", "-n", type=click.IntRange(min=1), default=None,
              help=N_("Only the last N entries."))
@json_option
def log(game: str, last: int | None, as_json: bool) -> None:
    seat = seat_of(game)
    _, body = seat.api().get(f"/games/{seat.game}/log")
    moves = list(body.get("moves") or [])
    if last:
        moves = moves[-last:]
    if as_json:
        emit_json({**body, "moves": moves})
        return
    state = fetch_state(seat)
    console = out()
    if not moves:
        console.print(tr("No moves yet."))
    else:
        console.print(log_table(state, moves))
    console.print(situation(state))


# ---------------------------------------------------------------------- watch


def _change_key(state: Mapping[str, Any]) -> tuple[Any, ...]:
    game = state.get("game") or {}
    return (state.get("seq"), game.get("status"), game.get("paused"),
            tuple(game.get("to_act") or []))


@click.command("watch", help=N_(
        "Show GAME and redraw it whenever something happens, until the game is over "
        "(Ctrl-C stops)."))
@game_argument
@click.option("--interval", type=click.FloatRange(min=MIN_INTERVAL), default=5.0,
              show_default=True, help=N_("Seconds between two looks at the game."))
@click.option("--once", is_flag=True, help=N_("Exit after the first change."))
@click.option("--timeout", type=click.FloatRange(min=0, min_open=True), default=None,
              help=N_("Stop watching after this many seconds."))
@click.option("--bell", is_flag=True, help=N_("Ring the terminal bell when it becomes your turn."))
@click.option("--json", "as_json", is_flag=True,
              help=N_("Print the state as one JSON line at the start and after each change."))
def watch(game: str, interval: float, once: bool, timeout: float | None, bell: bool,
          as_json: bool) -> None:
    seat = seat_of(game)
    console = out()

    def draw(state: Mapping[str, Any]) -> None:
        if as_json:
            click.echo(json.dumps(state, ensure_ascii=False, sort_keys=True))
            return
        if console.is_terminal:
            console.clear()
        else:
            console.rule(time.strftime("%H:%M:%S"))
        console.print(state_view(seat, state, fetch_clock(seat, state)))
        if not console.is_terminal:
            return
        console.print(Text(tr("Watching every {seconds} s; Ctrl-C stops.",
                              seconds=format(interval, "g")), style="dim"))

    try:
        state = fetch_state(seat)
        draw(state)
        warned = False
        stop = time.monotonic() + timeout if timeout is not None else None
        while (state.get("game") or {}).get("status") in ("open", "active"):
            if stop is not None and time.monotonic() + interval > stop:
                time.sleep(max(0.0, stop - time.monotonic()))
                err().print(Text(tr("Stopped watching after {seconds} s.",
                                    seconds=format(timeout, "g")), style="dim"))
                return
            time.sleep(interval)
            try:
                new = fetch_state(seat)
            except Unreachable as exc:  # a restart of the server: keep looking
                if not warned:
                    err().print(Text(tr("Warning: {message} (still watching)",
                                        message=exc.message)))
                    warned = True
                continue
            warned = False
            if _change_key(new) == _change_key(state):
                continue
            mine_now = new.get("you") in ((new.get("game") or {}).get("to_act") or [])
            mine_before = state.get("you") in ((state.get("game") or {}).get("to_act") or [])
            state = new
            draw(state)
            if bell and mine_now and not mine_before:
                console.bell()
            if once:
                return
    except KeyboardInterrupt:
        click.echo("")


# ---------------------------------------------------------------------- chat


def chat_lines(messages: Sequence[Mapping[str, Any]], you: Any,
               zone: str | None = None) -> list[Text]:
    """One line per message: when (on the clock of the seat's time zone ``zone``, named; with
    none, this computer's), who (you in bold), and the text."""
    lines = []
    for message in messages:
        stamp = message.get("created_at")
        line = Text(reader_time(stamp, zone) if zone else when_text(stamp, relative=False),
                    style="dim")
        mine = message.get("seat") is not None and message.get("seat") == you
        line.append(f" {tr('you') if mine else message.get('name') or '?'}: ",
                    style="bold magenta" if mine else "bold")
        line.append(str(message.get("text") or ""))
        lines.append(line)
    return lines


def _my_zone(api: Api, seat: Seat) -> str | None:
    """The time zone of the seat's own settings (``titanpost settings --zone``), if set."""
    _, mine = api.get(f"/games/{seat.game}/me/settings")
    return zone_of(mine)


@click.command("chat", help=N_(
        "Write TEXT in GAME's chat; without TEXT, print the recent messages.\n"
        "\n"
        "Everyone in the game reads the chat (spectators too): no secrets here."))
@game_argument
@click.argument("text", nargs=-1)
@click.option("--last", "-n", type=click.IntRange(min=1, max=200), default=20,
              help=N_("How many recent messages to print (default 20)."))
@json_option
def chat(game: str, text: tuple[str, ...], last: int, as_json: bool) -> None:
    seat = seat_of(game)
    api = seat.api()
    message = " ".join(text).strip()
    if text and not message:
        fail(tr("a chat message needs some text: nothing was posted"))
    if message:
        _, posted = api.post_safely(f"/games/{seat.game}/chat", {"text": message})
        if as_json:
            emit_json(posted)
            return
        out().print(Text(tr("posted:") + " ", style="bold green").append(message))
        return
    _, body = api.get(f"/games/{seat.game}/chat?limit={last}")
    if as_json:
        emit_json(body)
        return
    messages = list(body.get("messages") or [])
    console = out()
    if not messages:
        console.print(tr("No messages in {game} yet: {command}", game=escape(seat.label),
                         command=command_line("chat", seat.short, '"' + tr("Hello") + '"')))
        return
    for line in chat_lines(messages, seat.position, _my_zone(api, seat)):
        console.print(line)
