"""The player's commands: play a game (Titan Race, The Great Race) from a terminal against a
server's JSON API.

``titanpost login`` keeps the seat tokens (cli/client.py); ``games``, ``show``, ``options``,
``play``, ``log``, ``watch``, ``vacation`` and ``resign`` use them. Every read command takes
``--json`` (the API's data, for scripts); every failure is one line on standard error with exit
code 1. :func:`register` adds the commands to the ``titanpost`` group (called from cli/main.py).

A game's own words and board come from its :class:`app.gameui.GameUI` (chosen by the game's
ruleset, which the API names): this module knows no game.
"""

from __future__ import annotations

import json
import secrets
import sys
import time
from collections.abc import Mapping, Sequence
from contextlib import suppress
from datetime import UTC, date, datetime, timedelta
from typing import TYPE_CHECKING, Any, Final, NoReturn

import click
from rich import box
from rich.console import Console, Group, RenderableType
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from app.i18n import LANGUAGES
from cli.client import (
    SERVER_ENV,
    TOKEN_ENV,
    Api,
    ClientError,
    Config,
    Seat,
    Unreachable,
    find_seat,
    normalise_server,
    split_invitation,
)
from cli.completion import complete_game, complete_inputs, completion_command

if TYPE_CHECKING:
    from app.gameui import GameUI

LANG: Final = "en"
"""The command line speaks English."""
STATUS_WORDS: Final[dict[str, str]] = {
    "open": "waiting for players",
    "active": "racing",
    "finished": "finished",
    "abandoned": "abandoned",
}
ACTOR_WORDS: Final[dict[str, str]] = {
    "timeout": "time ran out",
    "away": "away: the computer played",
    "owner": "the owner",
    "admin": "an admin",
    "clock": "the clock",
}
TIMEOUT_KINDS: Final = ("timeout", "timeout-quick")
MIN_INTERVAL: Final = 0.2

json_option = click.option("--json", "as_json", is_flag=True,
                           help="Print the API's data as JSON (for scripts).")
game_argument = click.argument("game", shell_complete=complete_game)


# ---------------------------------------------------------------------- small helpers


def out() -> Console:
    return Console(highlight=False, soft_wrap=False)


def err() -> Console:
    return Console(stderr=True, highlight=False)


def emit_json(data: Any) -> None:
    click.echo(json.dumps(data, indent=2, ensure_ascii=False, sort_keys=True))


def fail(message: str, *more: RenderableType) -> NoReturn:
    """``Error: message`` on standard error (then ``more``), exit code 1."""
    click.echo("Error: " + " ".join(message.split()), err=True)  # one line, never wrapped
    console = err()
    for item in more:
        console.print(item)
    sys.exit(1)


def seat_of(game: str) -> Seat:
    return Config.load().find(game)


def ui_named(ruleset: Any) -> GameUI:
    """The words and board of the game whose ruleset is named ``ruleset`` (Titan Race when the
    server names none, as servers before The Great Race did)."""
    from app.gameui import DEFAULT_GAME, game_ui

    name = str(ruleset or DEFAULT_GAME)
    try:
        return game_ui(name)
    except KeyError:
        fail(f"this titanpost does not know the game '{name}': update it to play this game")


def ui_of(state: Mapping[str, Any]) -> GameUI:
    """The UI of the game ``state`` (the API's state body) is about."""
    return ui_named((state.get("game") or {}).get("ruleset"))


def piece_text(ui: GameUI, piece: Any) -> Text:
    """A piece (a Titan, a crew) by name, in its colour."""
    return Text(ui.piece_name(str(piece) if piece else None, LANG),
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
        return f"seat {position}"
    return "the computer" if seat.get("bot") and seat.get("name") == "Computer" else str(
        seat["name"])


def player_name(state: Mapping[str, Any], position: Any, *, you: bool = True) -> str:
    """``you``, ``Ann (Craken)``, ``the computer (Grinder)``."""
    if you and position is not None and position == state.get("you"):
        return "you"
    if not isinstance(position, int) or position not in seat_rows(state):
        return f"seat {position}"
    ui = ui_of(state)
    pieces = ", ".join(ui.piece_name(p, LANG) for p in seat_pieces(state, position))
    name = bare_name(state, position)
    return f"{name} ({pieces})" if pieces else name


def describe(ui: GameUI, option: str, pending: Mapping[str, Any] | None) -> str:
    """An option (or several joined by ';') in plain words, as the game words it."""
    return ui.describe_option(option, {"pending": dict(pending or {})}, LANG) or option


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
    shown = f"{local:%a %d %b}" + (f" {local:%Y}" if local.year != datetime.now().year else "")
    shown += f" {local:%H:%M %Z}".rstrip()
    if not relative:
        return shown
    left = moment - datetime.now(UTC)
    seconds = abs(left.total_seconds())
    if seconds < 3600:
        span = f"{max(1, round(seconds / 60))} min"
    elif seconds < 3 * 86400:
        span = f"{round(seconds / 3600)} h"
    else:
        span = f"{round(seconds / 86400)} days"
    span_text = f"in {span}" if left.total_seconds() >= 0 else f"{span} ago"
    return f"{shown} ({span_text})"


# ---------------------------------------------------------------------- the game's situation


def situation(state: Mapping[str, Any]) -> Text:
    """One line: who must do what now, or how the game ended."""
    game = state.get("game") or {}
    view = state.get("view") or {}
    status = game.get("status")
    if status == "open":
        return Text("Waiting for players to join; the game's creator starts it.", style="dim")
    if status == "abandoned":
        return Text("The game was abandoned.", style="bold")
    winner = view.get("winner") or game.get("winner")
    if status == "finished" or winner:
        return winner_text(state)
    pending = view.get("pending") if isinstance(view.get("pending"), Mapping) else None
    to_act = [p for p in game.get("to_act") or [] if isinstance(p, int)]
    line = Text()
    if game.get("paused"):
        line.append("Paused", style="bold yellow")
        line.append(f" ({game.get('pause_reason') or 'by its owner'}). ")
    sealed = sealed_words(state)
    if sealed is not None:
        line.append("Sealed", style="bold green").append(f": your answer ({sealed}) is in. ")
    if state.get("you") in to_act and pending is not None:
        line.append_text(your_decision(state, pending)).append(".")
    elif to_act:
        line.append(waiting_line(state, pending, to_act))
    else:
        line.append("Nothing is pending.", style="dim")
    return line


def your_decision(state: Mapping[str, Any], pending: Mapping[str, Any]) -> Text:
    """``Your decision (Grinder): Pick a die``."""
    line = Text("Your decision", style="bold green")
    piece = acting_piece(state, pending)
    if piece:
        line.append(" (").append_text(piece_text(ui_of(state), piece)).append(")")
    return line.append(": ", style="bold green").append(
        ui_of(state).decision_heading(pending, LANG))


def waiting_line(state: Mapping[str, Any], pending: Mapping[str, Any] | None,
                 to_act: Sequence[int]) -> str:
    """``Waiting for Ann (Grinder) to pick a die.``, as the game words it."""
    names = [bare_name(state, p) for p in to_act]
    words = ui_of(state).waiting_for(pending, names, LANG)
    return words or f"Waiting for {', '.join(names)}."


def winner_text(state: Mapping[str, Any]) -> Text:
    game = state.get("game") or {}
    view = state.get("view") or {}
    ui = ui_of(state)
    winner = view.get("winner") or game.get("winner")
    line = Text("Game over: ", style="bold gold1")
    if not winner:
        return line.append("no winner.")
    line.append_text(piece_text(ui, winner))
    side = [w for w in view.get("winners") or [] if w and w != winner]
    if side:
        line.append(" with " + ", ".join(ui.piece_name(str(w), LANG) for w in side))
    line.append(" wins")
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
    whose = "Your deadline" if due.get("seat") == you else (
        f"Deadline of {player_name(state, due.get('seat'))}")
    return Text(f"{whose}: {when_text(due.get('due_at'))}",
                style="bold" if due.get("seat") == you else "")


def boards_of(state: Mapping[str, Any]) -> Any | None:
    """The game's built-in boards, resolved by its UI; None for a custom board (whose layout
    the API does not give). Only built-in names are resolved: a board name never reaches the
    file system."""
    ui = ui_of(state)
    names = (state.get("view") or {}).get("circuits") or (state.get("game") or {}).get("circuits")
    choices = {str(c).lower() for c in ui.board_choices}
    if not names or not all(isinstance(n, str) and n.lower() in choices for n in names):
        return None
    try:
        return ui.boards([str(name).lower() for name in names])
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
        head = Text("Your hand (").append_text(piece_text(ui, piece)).append("): ")
        if not hand:
            lines.append(head.append("no cards", style="dim"))
            continue
        lines.append(head)
        for card in hand:
            info_of = ui.card_info(str(card), LANG)
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
    table.add_column("Seat", justify="right")
    table.add_column("Player")
    table.add_column("Plays")
    table.add_column("")
    sealed = set((state.get("game") or {}).get("sealed") or [])
    for position, seat in sorted(seat_rows(state).items()):
        notes = []
        if position == state.get("you"):
            notes.append("you")
        if seat.get("resigned"):
            notes.append("resigned")
        if seat.get("bot"):
            notes.append("computer")
        if not seat.get("accepted"):
            notes.append("not joined yet")
        if position in sealed:
            notes.append("answer sealed")
        if seat.get("missed_deadlines"):
            notes.append(f"{seat['missed_deadlines']} missed deadlines")
        if isinstance(seat.get("bank_seconds"), int):
            notes.append(f"bank {seat['bank_seconds'] // 3600} h")
        pieces = Text(", ").join(piece_text(ui, t) for t in seat.get("titans") or [])
        table.add_row(str(position), escape(str(seat.get("name") or "")), pieces,
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
    title += STATUS_WORDS.get(str(game.get("status")), str(game.get("status")))
    if isinstance(view, Mapping) and view.get("round"):
        title += f" · round {view['round']}"
    title += f" · move {game.get('seq', state.get('seq', '?'))}"
    parts.append(Text(title, style="bold"))
    parts.append(Text())
    if isinstance(view, Mapping):
        boards = boards_of(state)
        if boards is not None:
            parts += [ui.board_text(view, boards), Text()]
        else:
            parts.append(Text("(A custom board: it is drawn on the game's web page.)",
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
        parts.append(Text(f"Your options: titanpost options {seat.short}", style="dim"))
    return Group(*parts)


def fetch_state(seat: Seat) -> dict[str, Any]:
    return seat.api().get(f"/games/{seat.game}")[1]


def fetch_clock(seat: Seat, state: Mapping[str, Any]) -> dict[str, Any] | None:
    """The game's deadlines while it runs (None otherwise, or when they cannot be read)."""
    if (state.get("game") or {}).get("status") != "active":
        return None
    status, clock = seat.api().get(f"/games/{seat.game}/deadlines", allow=(403, 404))
    return clock if status == 200 else None


# ---------------------------------------------------------------------- login / logout


@click.command("login")
@click.argument("url", required=False, envvar=SERVER_ENV)
@click.option("--token", default=None, envvar=TOKEN_ENV,
              help="An API token from joining on the web (asked for, hidden, when missing). "
                   f"Default: ${TOKEN_ENV}.")
@click.option("--name", default=None, help="Your name in the game (with an invitation link).")
def login(url: str | None, token: str | None, name: str | None) -> None:
    """Log in to a game: URL is an invitation link (https://host/join/...), or the server's
    address with --token. The server and the seat token are kept in a private (0600) file in
    your config folder (TITANPOST_CONFIG sets another). An accept whose answer is lost on the
    way is sent again with the same Idempotency-Key, which gets the same seat token."""
    if not url:
        raise click.UsageError(f"give an invitation link or the server's address (or set "
                               f"{SERVER_ENV})")
    config = Config.load()
    invitation = split_invitation(url)
    if invitation is not None:
        server, invite_token = invitation
        # the seat's own randomness for the deal (see docs/fairness.md)
        body: dict[str, Any] = {"invite_token": invite_token,
                                "contribution": secrets.token_hex(32)}
        if name:
            body["name"] = name
        try:
            _, accepted = Api(server).post_safely("/invitations/accept", body)
        except ClientError as exc:
            if exc.status == 404:
                raise ClientError(f"{exc.message}: if you joined already, log in with "
                                  f"`titanpost login {server} --token <API token>`") from None
            raise
        seat = Seat(server=server, game=str(accepted["game"]), token=str(accepted["api_token"]),
                    position=int(accepted["position"]), contribution=body["contribution"],
                    commitment=str(accepted.get("commitment") or ""))
        config.add(seat)  # the server shows this token once: keep it before anything else
        try:
            config.save()
        except ClientError as exc:
            raise ClientError(f"{exc.message}; your seat's API token (shown once) is "
                              f"{seat.token}: log in with it later (--token)") from None
    else:
        server = normalise_server(url)
        if not token:
            token = click.prompt("API token", hide_input=True).strip()
        try:
            seat = find_seat(server, token or "", where="")
        except ClientError as exc:
            if exc.status == 401:
                raise ClientError(f"{server} refused this API token (unknown or revoked): check "
                                  "it, or log in with the game's invitation link") from None
            raise
    state = fetch_state(seat)  # checks the token, and gives the game's name
    seat.name = str((state.get("game") or {}).get("name") or "")
    config.add(seat)
    config.save()
    console = out()
    line = Text(f"Logged in to {seat.label} on {seat.server} as seat {seat.position}")
    pieces = seat_pieces(state, seat.position)
    if pieces:
        ui = ui_of(state)
        line.append(" (").append_text(Text(", ").join(piece_text(ui, p) for p in pieces))
        line.append(")")
    console.print(line.append("."))
    console.print(situation(state))
    console.print(Text(f"Token kept in {config.path}", style="dim"))


@click.command("logout")
@click.argument("game", required=False, shell_complete=complete_game)
@click.option("--all", "everything", is_flag=True, help="Forget every game.")
def logout(game: str | None, everything: bool) -> None:
    """Forget the token of GAME (or of every game) on this computer. The server still accepts
    the token: to stop it, the game's creator gives the seat to someone else."""
    config = Config.load()
    if everything:
        gone = list(config.seats.values())
        config.seats.clear()
    elif game:
        seat = config.find(game)
        if seat.from_env:
            raise ClientError(f"{seat.label} comes from {TOKEN_ENV}: unset it instead")
        gone = [config.seats.pop(seat.game)]
    else:
        raise click.UsageError("name the game to forget, or give --all")
    config.save()
    for seat in gone:
        click.echo(f"Forgot {seat.label} on {seat.server}.")



# ---------------------------------------------------------------------- games


@click.command("games")
@json_option
def games(as_json: bool) -> None:
    """Your games: whose turn it is, your deadlines."""
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
    rows += list(extra.values())
    if failures and len(failures) == len(seats) and len(set(failures)) == 1 and not as_json:
        fail(failures[0])  # the server is down, say: that line says it all
    if as_json:
        emit_json({"games": rows})
    else:
        _games_table(rows)
    if failures:
        for failure in dict.fromkeys(failures):
            err().print(Text("Error: " + failure))
        sys.exit(1)


def _turn_words(state: Mapping[str, Any]) -> str:
    game = state.get("game") or {}
    status = game.get("status")
    if status == "finished":
        return winner_text(state).plain.removeprefix("Game over: ").rstrip(".")
    if status != "active":
        return STATUS_WORDS.get(str(status), str(status))
    if game.get("paused"):
        return "paused"
    to_act = game.get("to_act") or []
    return ", ".join(player_name(state, p) for p in to_act) or "-"


def _games_table(rows: Sequence[Mapping[str, Any]]) -> None:
    console = out()
    if not rows:
        console.print("You are not logged in to any game: titanpost login <invitation link>")
        return
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False)
    for column in ("Game", "Name", "Status", "Turn", "Deadline", "Move"):
        table.add_column(column, justify="right" if column == "Move" else "left")
    for row in rows:
        game = str(row.get("game", ""))[:8]
        if row.get("error"):
            table.add_row(game, escape(str(row.get("name") or "")),
                          Text("error", style="bold red"), Text(str(row["error"])), "", "")
            continue
        if row.get("not_logged_in"):
            table.add_row(game, escape(str(row.get("name") or "")),
                          STATUS_WORDS.get(str(row.get("status")), str(row.get("status"))),
                          Text("not logged in here: use its invitation link", style="dim"),
                          "", str(row.get("seq", "")))
            continue
        turn = Text(str(row.get("turn") or ""))
        if row.get("your_turn"):
            turn = Text("you", style="bold green")
        deadline = str(row.get("deadline") or "")
        deadline = deadline.split(": ", 1)[-1] if deadline else ""
        table.add_row(game, escape(str(row.get("name") or "")),
                      STATUS_WORDS.get(str(row.get("status")), str(row.get("status"))),
                      turn, deadline, str(row.get("seq", "")))
    console.print(table)


# ---------------------------------------------------------------------- show / options


@click.command("show")
@game_argument
@json_option
def show(game: str, as_json: bool) -> None:
    """The board of GAME in colour, the players (life, laps, traps), your hand, the dice on the
    table, the pending decision and its deadline."""
    seat = seat_of(game)
    state = fetch_state(seat)
    clock = fetch_clock(seat, state)
    if as_json:
        emit_json({"state": state, "deadlines": clock})
        return
    out().print(state_view(seat, state, clock))


def options_table(ui: GameUI, options: Sequence[str], pending: Mapping[str, Any] | None) -> Table:
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False)
    table.add_column("Input", style="bold cyan", no_wrap=True)
    table.add_column("What it does")
    for option in options:
        table.add_row(escape(option), escape(describe(ui, option, pending)))
    return table


@click.command("options")
@game_argument
@click.option("--all", "show_all", is_flag=True,
              help="List every option even where there are very many (a plan has 56).")
@json_option
def options(game: str, show_all: bool, as_json: bool) -> None:
    """Your legal inputs in GAME now, each with what it does."""
    seat = seat_of(game)
    _, body = seat.api().get(f"/games/{seat.game}/options")
    if as_json:
        emit_json(body)
        return
    console = out()
    state = fetch_state(seat)
    if not body.get("yours"):
        console.print(situation(state))
        return
    pending = body.get("pending") or {}
    head = your_decision(state, pending)
    console.print(head.append(f" (after move {body.get('seq')})"))
    choices = [str(o) for o in body.get("options") or []]
    ui = ui_of(state)
    shown = choices if show_all else ui.mail_choices(choices, state.get("view") or {},
                                                     lambda: None) or choices
    console.print(options_table(ui, shown, pending))
    if len(shown) < len(choices):
        console.print(Text(f"... and {len(choices) - len(shown)} more: any of them may be "
                           f"typed (titanpost options {seat.short} --all lists them)",
                           style="dim"))
    if choices:
        console.print(Text(f'Play: titanpost play {seat.short} "{shown[0]}"  (join several '
                           "with ';')", style="dim"))


# ---------------------------------------------------------------------- play


@click.command("play")
@game_argument
@click.argument("inputs", nargs=-1, required=True, shell_complete=complete_inputs)
@click.option("--seq", type=click.IntRange(min=0), default=None,
              help="The move number you answer (default: the game's now).")
@click.option("--board", is_flag=True, help="Draw the board afterwards.")
@json_option
def play(game: str, inputs: tuple[str, ...], seq: int | None, board: bool,
         as_json: bool) -> None:
    """Play INPUTS in GAME: several joined with ';' are played all together or not at all.

    E.g. titanpost play GAME "pick red; move S; trap B6; end". A refusal says why and lists the
    legal options; nothing is played then."""
    seat = seat_of(game)
    text = " ".join(inputs).replace("\n", ";").strip()
    api = seat.api()
    if seq is None:
        _, now = api.get(f"/games/{seat.game}/options")
        seq = int(now["seq"])
    status, body = api.post(f"/games/{seat.game}/moves", {"expected_seq": seq, "input": text},
                            allow=(403, 409, 422))
    if as_json:
        emit_json({"status": status, **body})
        sys.exit(0 if status == 200 else 1)
    if status == 422:
        _refused(seat, text, body)
    if status in (403, 409):
        fail(str(body.get("error")), situation(body), *_options_hint(seat, body))
    console = out()
    if isinstance(body.get("sealed"), str):  # a secret answer, kept until every one is in
        console.print(sealed_line(body))
    elif body.get("already_applied"):
        console.print(f"Already played: '{text}' was move {body.get('applied_seq')}.")
    else:
        _, log_body = api.get(f"/games/{seat.game}/log")
        moves = [m for m in log_body.get("moves") or [] if int(m.get("seq", 0)) > seq]
        console.print(log_table(body, moves, title="Played"))
    if board:
        console.print(state_view(seat, body, fetch_clock(seat, body)))
    else:
        console.print(situation(body))
        for hint in _options_hint(seat, body):
            console.print(hint)


def sealed_line(state: Mapping[str, Any]) -> Text:
    """``sealed: waiting for Bob (Belgian crew)``: your answer to a simultaneous decision is
    kept secret until the others' are in (they are never shown before the reveal)."""
    waiting = [player_name(state, p) for p in (state.get("game") or {}).get("to_act") or []]
    line = Text("sealed", style="bold green")
    line.append(f": waiting for {', '.join(waiting) or 'the others'}")
    return line.append(f" (your answer, {sealed_words(state)}, stays secret until then).")


def _options_hint(seat: Seat, state: Mapping[str, Any]) -> list[Text]:
    game = state.get("game") or {}
    if state.get("you") in (game.get("to_act") or []) and game.get("status") == "active":
        return [Text(f"Your options: titanpost options {seat.short}", style="dim")]
    return []


def _refused(seat: Seat, text: str, body: Mapping[str, Any]) -> NoReturn:
    parts = [p.strip() for p in text.split(";") if p.strip()]
    index = body.get("index")
    message = f"refused: {body.get('error')}"
    legal = [str(o) for o in body.get("legal") or []]  # (at the first input, whichever failed)
    where = "Legal options now"
    if isinstance(index, int) and len(parts) > 1 and 0 <= index < len(parts):
        message += f" (input {index + 1} of {len(parts)}, '{parts[index]}')"
    message += "; nothing was played."
    if not legal:
        fail(message, Text("You have no legal options now: it is not your decision."))
    state: Mapping[str, Any] = body
    with suppress(ClientError):  # the legal options are worded without the state then
        state = fetch_state(seat)
    pending = (state.get("view") or {}).get("pending")
    fail(message, Text(f"{where}:", style="bold"),
         options_table(ui_of(state), legal, pending if isinstance(pending, Mapping) else None))


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
            words, dice = ui.outcome_words(str(outcome), LANG)
            text.append(words)
            if dice:
                text.append(" ")
            for die in dice:
                text.append(f"[{die}]", style=f"bold {ui.die_fill(die)}")
    return text


def log_table(state: Mapping[str, Any], moves: Sequence[Mapping[str, Any]],
              title: str | None = None) -> Table:
    ui = ui_of(state)
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False, title=title,
                  title_justify="left", title_style="bold")
    table.add_column("#", justify="right")
    table.add_column("Who")
    table.add_column("Input", style="cyan")
    table.add_column("Then")
    for move in moves:
        who = Text(player_name(state, move.get("seat")) if move.get("seat") is not None
                   else "the game")
        actor = str(move.get("actor") or "")
        if actor in ACTOR_WORDS:
            who.append(f" ({ACTOR_WORDS[actor]})", style="dim")
        entry = str(move.get("input") or "")
        kind = str(move.get("kind") or "move")
        shown = Text(entry) if kind == "move" else Text(entry or kind, style="italic yellow")
        table.add_row(str(move.get("seq")), who, shown, outcome_text(ui, move.get("outcomes")))
    return table


@click.command("log")
@game_argument
@click.option("--last", "-n", type=click.IntRange(min=1), default=None,
              help="Only the last N entries.")
@json_option
def log(game: str, last: int | None, as_json: bool) -> None:
    """The move log of GAME: who played what, the dice rolled."""
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
        console.print("No moves yet.")
    else:
        console.print(log_table(state, moves))
    console.print(situation(state))


# ---------------------------------------------------------------------- watch


def _change_key(state: Mapping[str, Any]) -> tuple[Any, ...]:
    game = state.get("game") or {}
    return (state.get("seq"), game.get("status"), game.get("paused"),
            tuple(game.get("to_act") or []))


@click.command("watch")
@game_argument
@click.option("--interval", type=click.FloatRange(min=MIN_INTERVAL), default=5.0,
              show_default=True, help="Seconds between two looks at the game.")
@click.option("--once", is_flag=True, help="Exit after the first change.")
@click.option("--timeout", type=click.FloatRange(min=0, min_open=True), default=None,
              help="Stop watching after this many seconds.")
@click.option("--bell", is_flag=True, help="Ring the terminal bell when it becomes your turn.")
@click.option("--json", "as_json", is_flag=True,
              help="Print the state as one JSON line at the start and after each change.")
def watch(game: str, interval: float, once: bool, timeout: float | None, bell: bool,
          as_json: bool) -> None:
    """Show GAME and redraw it whenever something happens, until the game is over (Ctrl-C
    stops)."""
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
        console.print(Text(f"Watching every {interval:g} s; Ctrl-C stops.", style="dim"))

    try:
        state = fetch_state(seat)
        draw(state)
        warned = False
        stop = time.monotonic() + timeout if timeout is not None else None
        while (state.get("game") or {}).get("status") in ("open", "active"):
            if stop is not None and time.monotonic() + interval > stop:
                time.sleep(max(0.0, stop - time.monotonic()))
                err().print(Text(f"Stopped watching after {timeout:g} s.", style="dim"))
                return
            time.sleep(interval)
            try:
                new = fetch_state(seat)
            except Unreachable as exc:  # a restart of the server: keep looking
                if not warned:
                    err().print(Text(f"Warning: {exc.message} (still watching)"))
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


# ---------------------------------------------------------------------- vacation


def _accounts(game: str | None) -> list[tuple[Seat, dict[str, Any]]]:
    """One seat per (server, address) with that address's away dates; just GAME's with it."""
    config = Config.load()
    seats = [config.find(game)] if game else config.all_seats()
    if not seats:
        config.find("")  # the "not logged in" error
    found: dict[tuple[str, str], tuple[Seat, dict[str, Any]]] = {}
    for seat in seats:
        _, body = seat.api().get("/away")
        key = (seat.server, str(body.get("email")))
        if key not in found:
            found[key] = (seat, body)
    return list(found.values())


def parse_when(text: str, *, end: bool = False) -> datetime:
    """``2026-07-01`` (the day's start, or the next day's start for ``end``),
    ``2026-07-01T08:00`` (your local time) or with an offset."""
    value = text.strip()
    try:
        if len(value) == 10:
            day = date.fromisoformat(value)
            moment = datetime(day.year, day.month, day.day)
            if end:
                moment += timedelta(days=1)
        else:
            moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise click.BadParameter(f"'{text}' is not a date (2026-07-01) or a time "
                                 "(2026-07-01T08:00, or with an offset)") from None
    if moment.tzinfo is None:
        moment = moment.astimezone()
    return moment


@click.group("vacation", invoke_without_command=True)
@click.pass_context
def vacation(ctx: click.Context) -> None:
    """Your away dates: deadlines stretch over them, or the computer plays for you meanwhile.
    Without a subcommand: the list."""
    if ctx.invoked_subcommand is None:
        ctx.invoke(vacation_list)


@vacation.command("list")
@click.option("--game", default=None, shell_complete=complete_game,
              help="Only the address of this game's seat.")
@json_option
def vacation_list(game: str | None = None, as_json: bool = False) -> None:
    """Your away dates (for every game of your address)."""
    accounts = _accounts(game)
    if as_json:
        emit_json({"accounts": [{"server": seat.server, **body} for seat, body in accounts]})
        return
    console = out()
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False)
    for column in ("Id", "From", "Until", "Mode", "Address"):
        table.add_column(column)
    count = 0
    for seat, body in accounts:
        for absence in body.get("absences") or []:
            count += 1
            table.add_row(str(absence.get("id")), when_text(absence.get("from"), relative=False),
                          when_text(absence.get("until"), relative=False),
                          str(absence.get("mode")),
                          escape(f"{body.get('email')} on {seat.server}"))
    if count:
        console.print(table)
    else:
        console.print("No away dates. Add some: titanpost vacation add --from 2026-07-01 "
                      "--until 2026-07-14")


@vacation.command("add")
@click.option("--from", "starts", required=True, help="First day (2026-07-01) or a time.")
@click.option("--until", required=True, help="Last day (2026-07-14, included) or a time.")
@click.option("--mode", type=click.Choice(["stretch", "computer"]), default="stretch",
              show_default=True,
              help="stretch: your deadlines stretch over the absence; computer: the computer "
                   "plays for you meanwhile.")
@click.option("--game", default=None, shell_complete=complete_game,
              help="Only the address of this game's seat (default: every address you use).")
def vacation_add(starts: str, until: str, mode: str, game: str | None) -> None:
    """Add away dates; the other players are told."""
    begin, end = parse_when(starts), parse_when(until, end=True)
    if end <= begin:
        raise click.UsageError("--until must be after --from")
    for seat, body in _accounts(game):
        _, added = seat.api().post("/away", {"from": begin.isoformat(), "until": end.isoformat(),
                                             "mode": mode})
        what = ("your deadlines stretch over it" if mode == "stretch"
                else "the computer plays for you meanwhile")
        click.echo(f"Away {when_text(added.get('from'), relative=False)} to "
                   f"{when_text(added.get('until'), relative=False)} "
                   f"(id {added.get('id')}, {body.get('email')}): {what}.")


@vacation.command("cancel")
@click.argument("absence_id", metavar="ID", type=int)
@click.option("--game", default=None, shell_complete=complete_game,
              help="The address of this game's seat (when several have an ID).")
def vacation_cancel(absence_id: int, game: str | None) -> None:
    """Cancel the away dates ID (see `titanpost vacation list`)."""
    owners = [(seat, body) for seat, body in _accounts(game)
              if any(a.get("id") == absence_id for a in body.get("absences") or [])]
    if not owners:
        raise ClientError(f"you have no away dates {absence_id}: `titanpost vacation list` "
                          "shows yours")
    if len(owners) > 1:
        raise ClientError(f"several of your addresses have away dates {absence_id}: say which "
                          "with --game")
    seat, body = owners[0]
    seat.api().delete(f"/away/{absence_id}")
    click.echo(f"Cancelled away dates {absence_id} ({body.get('email')}).")


# ---------------------------------------------------------------------- chat


def chat_lines(messages: Sequence[Mapping[str, Any]], you: Any) -> list[Text]:
    """One line per message: when, who (you in bold), and the text."""
    lines = []
    for message in messages:
        line = Text(when_text(message.get("created_at"), relative=False), style="dim")
        mine = message.get("seat") is not None and message.get("seat") == you
        line.append(f" {'you' if mine else message.get('name') or '?'}: ",
                    style="bold magenta" if mine else "bold")
        line.append(str(message.get("text") or ""))
        lines.append(line)
    return lines


@click.command("chat")
@game_argument
@click.argument("text", nargs=-1)
@click.option("--last", "-n", type=click.IntRange(min=1, max=200), default=20,
              help="How many recent messages to print (default 20).")
@json_option
def chat(game: str, text: tuple[str, ...], last: int, as_json: bool) -> None:
    """Write TEXT in GAME's chat; without TEXT, print the recent messages.

    Everyone in the game reads the chat (spectators too): no secrets here."""
    seat = seat_of(game)
    api = seat.api()
    message = " ".join(text).strip()
    if text and not message:
        fail("a chat message needs some text: nothing was posted")
    if message:
        _, posted = api.post_safely(f"/games/{seat.game}/chat", {"text": message})
        if as_json:
            emit_json(posted)
            return
        out().print(Text("posted: ", style="bold green").append(message))
        return
    _, body = api.get(f"/games/{seat.game}/chat?limit={last}")
    if as_json:
        emit_json(body)
        return
    messages = list(body.get("messages") or [])
    console = out()
    if not messages:
        console.print(f"No messages in {escape(seat.label)} yet: titanpost chat {seat.short} "
                      '"Hello"')
        return
    for line in chat_lines(messages, seat.position):
        console.print(line)


# ---------------------------------------------------------------------- settings


def _only_seat(game: str | None) -> Seat:
    """GAME's seat; without GAME, the one game you are logged in to."""
    config = Config.load()
    if game:
        return config.find(game)
    seats = config.all_seats()
    if len(seats) == 1:
        return seats[0]
    if not seats:
        config.find("")  # the "not logged in" error
    raise click.UsageError("you play several games: name one (titanpost settings GAME ...)")


@click.command("settings")
@click.argument("game", required=False, shell_complete=complete_game)
@click.option("--mail", type=click.Choice(["every", "digest", "none"]), default=None,
              help="every: every mail; digest: one mail a day instead of each decision's; "
                   "none: only the game's result and a handover notice.")
@click.option("--language", type=click.Choice(LANGUAGES), default=None,
              help="The language of your mail and pages.")
@click.option("--quiet", default=None, metavar="HOURS",
              help="Quiet hours such as 22-7 or 22:00-07:30 (no deadline ends and no reminder "
                   "comes in them); '' clears them.")
@click.option("--zone", default=None, metavar="ZONE",
              help="Your time zone (Europe/Warsaw) for the quiet hours; '' means UTC.")
@click.option("--everywhere", is_flag=True,
              help="Set them in every unfinished game of your address on that server.")
@json_option
def settings(game: str | None, mail: str | None, language: str | None, quiet: str | None,
             zone: str | None, everywhere: bool, as_json: bool) -> None:
    """Your own settings of GAME (mail, language, quiet hours): changes those given, then
    prints the settings now in force. GAME may be left out when you play one game."""
    seat = _only_seat(game)
    change = {key: value for key, value in (("mail", mail), ("language", language),
                                            ("quiet", quiet), ("timezone", zone))
              if value is not None}
    path = f"/games/{seat.game}/me/settings"
    if change:
        _, now = seat.api().post(path, change | {"everywhere": everywhere})
    elif everywhere:
        raise click.UsageError("--everywhere sets what you give: add --mail, --language, "
                               "--quiet or --zone")
    else:
        _, now = seat.api().get(path)
    if as_json:
        emit_json(now)
        return
    _print_settings(seat, now, everywhere=everywhere and bool(change))


MAIL_WORDS: Final = {
    "every": "every mail",
    "digest": "a daily digest instead of a mail per decision",
    "none": "none (only the game's result and a handover notice)",
}


def _print_settings(seat: Seat, now: Mapping[str, Any], *, everywhere: bool) -> None:
    console = out()
    where = "all your unfinished games" if everywhere else escape(seat.label)
    console.print(f"Your settings in {where}:")
    quiet = now.get("quiet")
    zone = now.get("timezone") or "UTC"
    console.print(f"  mail:        {MAIL_WORDS.get(str(now.get('mail')), now.get('mail'))}")
    console.print(f"  language:    {now.get('language')}")
    console.print(f"  quiet hours: {f'{quiet} ({zone})' if quiet else f'none (time zone {zone})'}")


# ---------------------------------------------------------------------- resign


@click.command("resign")
@game_argument
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
def resign(game: str, yes: bool) -> None:
    """Leave GAME: the computer plays your seat from then on. This cannot be undone."""
    seat = seat_of(game)
    if not yes:
        click.confirm(f"Resign from {seat.label}? The computer plays your seat from then on",
                      abort=True)
    seat.api().post(f"/games/{seat.game}/resign")
    state = fetch_state(seat)
    console = out()
    console.print(f"You resigned from {escape(seat.label)}: the computer plays your seat now.")
    console.print(situation(state))


# ---------------------------------------------------------------------- registration

COMMANDS: Final[tuple[click.Command, ...]] = (
    login, logout, games, show, options, play, log, watch, chat, vacation, settings,
    resign,
    completion_command,
)


def register(group: click.Group) -> None:
    """Add the player's commands to the ``titanpost`` group."""
    for command in COMMANDS:
        group.add_command(command)
