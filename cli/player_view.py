"""The player's commands: play a game (any game of the registry) from a terminal against a
server's JSON API. This module reads and shows games (``games``, ``show``, ``log``, ``watch``,
``chat``); what the player's commands share (the consoles, ``--json`` and GAME, the seat a GAME
argument names, the words of seats and times) is in cli/player_shared.py, the board and
situation drawn in cli/player_state.py; the moves are in cli/player_moves.py (``options``,
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
from typing import TYPE_CHECKING, Any, Final

import click
from rich import box
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from app.core.readertime import reader_time, zone_of
from cli.client import Api, ClientError, Config, Seat, Unreachable
from cli.player_shared import (
    command_line,
    emit_json,
    err,
    fail,
    game_argument,
    json_option,
    out,
    player_name,
    seat_of,
    status_words,
    ui_of,
    when_text,
)
from cli.player_state import (
    fetch_clock,
    fetch_state,
    my_deadline,
    situation,
    state_view,
    winner_text,
)
from cli.speech import N_, lang, tr, tr_context

if TYPE_CHECKING:
    from app.games.ui import GameUI

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
MIN_INTERVAL: Final = 0.2


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
    table.add_column(tr("Game"))
    table.add_column(tr_context("a game's name", "Name"))
    for column in (N_("Status"), N_("Turn"), N_("Deadline")):
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
