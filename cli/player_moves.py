"""The player's moves: ``options`` (the legal inputs now), ``play`` and ``resign``.

The board and the game's situation are drawn by cli/player_state.py, the entries played by
cli/player_view.py's log table; a refused input says why and lists the legal options, and nothing
is played then.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from contextlib import suppress
from typing import TYPE_CHECKING, Any, NoReturn

import click
from rich import box
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from cli.client import ClientError, Seat, said
from cli.completion import complete_inputs
from cli.player_shared import (
    command_line,
    describe,
    emit_json,
    fail,
    game_argument,
    json_option,
    out,
    player_name,
    sealed_words,
    seat_of,
    ui_of,
)
from cli.player_state import fetch_clock, fetch_state, situation, state_view, your_decision
from cli.player_view import log_table
from cli.speech import N_, tr

if TYPE_CHECKING:
    from app.games.ui import GameUI


# ---------------------------------------------------------------------- show / options


def options_table(ui: GameUI, options: Sequence[str], pending: Mapping[str, Any] | None) -> Table:
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False)
    table.add_column(tr("Input"), style="bold cyan", no_wrap=True)
    table.add_column(tr("What it does"))
    for option in options:
        table.add_row(escape(option), escape(describe(ui, option, pending)))
    return table


@click.command("options", help=N_(
        "Your legal inputs in GAME now, each with what it does."))
@game_argument
@click.option("--all", "show_all", is_flag=True,
              help=N_("List every option even where there are very many (a plan has 56)."))
@json_option
def options(game: str, show_all: bool, as_json: bool) -> None:
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
    console.print(head.append(" " + tr("(after move {number})", number=body.get("seq"))))
    choices = [str(o) for o in body.get("options") or []]
    ui = ui_of(state)
    shown = choices if show_all else ui.mail_choices(choices, state.get("view") or {},
                                                     lambda: None) or choices
    console.print(options_table(ui, shown, pending))
    if len(shown) < len(choices):
        console.print(Text(tr("... and {count} more: any of them may be typed ({command} "
                              "lists them)", count=len(choices) - len(shown),
                              command=command_line("options", seat.short, "--all")), style="dim"))
    if choices:
        console.print(Text(tr("Play: {command}  (join several with ';')",
                              command=command_line("play", seat.short, f'"{shown[0]}"')),
                           style="dim"))


# ---------------------------------------------------------------------- play


@click.command("play", help=N_(
        "Play INPUTS in GAME: several joined with ';' are played all together or not at "
        "all.\n"
        "\n"
        "E.g. titanpost play GAME \"pick red; move S; trap B6; end\". A refusal says why "
        "and lists the legal options; nothing is played then."))
@game_argument
@click.argument("inputs", nargs=-1, required=True, shell_complete=complete_inputs)
@click.option("--seq", type=click.IntRange(min=0), default=None,
              help=N_("The move number you answer (default: the game's now)."))
@click.option("--board", is_flag=True, help=N_("Draw the board afterwards."))
@json_option
def play(game: str, inputs: tuple[str, ...], seq: int | None, board: bool,
         as_json: bool) -> None:
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
        fail(said(body), situation(body),
             *_options_hint(seat, body))
    console = out()
    if isinstance(body.get("sealed"), str):  # a secret answer, kept until every one is in
        console.print(sealed_line(body))
    elif body.get("already_applied"):
        console.print(tr("Already played: '{input}' was move {number}.", input=text,
                         number=body.get("applied_seq")))
    else:
        _, log_body = api.get(f"/games/{seat.game}/log")
        moves = [m for m in log_body.get("moves") or [] if int(m.get("seq", 0)) > seq]
        console.print(log_table(body, moves, title=tr("Played")))
        if isinstance(body.get("unplayed"), dict):
            console.print(unplayed_line(body["unplayed"]))
    if board:
        console.print(state_view(seat, body, fetch_clock(seat, body)))
    else:
        console.print(situation(body))
        for hint in _options_hint(seat, body):
            console.print(hint)


def unplayed_line(unplayed: Mapping[str, Any]) -> Text:
    """The inputs of a chain left unplayed, and why (the server's ``unplayed``)."""
    from app.games.base import ChainStop

    text, fields = ChainStop.from_json(dict(unplayed)).words
    return Text(tr(text, **fields), style="yellow")


def sealed_line(state: Mapping[str, Any]) -> Text:
    """``sealed: waiting for Bob (his piece)``: your answer to a simultaneous decision is
    kept secret until the others' are in (they are never shown before the reveal)."""
    waiting = [player_name(state, p) for p in (state.get("game") or {}).get("to_act") or []]
    line = Text(tr("sealed"), style="bold green")
    line.append(": " + tr("waiting for {players}", players=", ".join(waiting) or tr("the others")))
    return line.append(" " + tr("(your answer, {answer}, stays secret until then).",
                                answer=sealed_words(state)))


def _options_hint(seat: Seat, state: Mapping[str, Any]) -> list[Text]:
    game = state.get("game") or {}
    if state.get("you") in (game.get("to_act") or []) and game.get("status") == "active":
        return [Text(tr("Your options: {command}",
                        command=command_line("options", seat.short)), style="dim")]
    return []


def _refused(seat: Seat, text: str, body: Mapping[str, Any]) -> NoReturn:
    parts = [p.strip() for p in text.split(";") if p.strip()]
    index = body.get("index")
    message = tr("refused: {reason}", reason=said(body))
    legal = [str(o) for o in body.get("legal") or []]  # (at the first input, whichever failed)
    where = tr("Legal options now")
    if isinstance(index, int) and len(parts) > 1 and 0 <= index < len(parts):
        message += " " + tr("(input {number} of {count}, '{input}')", number=index + 1,
                            count=len(parts), input=parts[index])
    message += tr("; nothing was played.")
    if not legal:
        fail(message, Text(tr("You have no legal options now: it is not your decision.")))
    state: Mapping[str, Any] = body
    with suppress(ClientError):  # the legal options are worded without the state then
        state = fetch_state(seat)
    pending = (state.get("view") or {}).get("pending")
    fail(message, Text(f"{where}:", style="bold"),
         options_table(ui_of(state), legal, pending if isinstance(pending, Mapping) else None))


# ---------------------------------------------------------------------- resign


@click.command("resign", help=N_(
        "Leave GAME: the computer plays your seat from then on. This cannot be undone."))
@game_argument
@click.option("--yes", is_flag=True, help=N_("Do not ask for confirmation."))
def resign(game: str, yes: bool) -> None:
    seat = seat_of(game)
    if not yes:
        click.confirm(tr("Resign from {game}? The computer plays your seat from then on",
                         game=seat.label), abort=True)
    seat.api().post(f"/games/{seat.game}/resign")
    state = fetch_state(seat)
    console = out()
    console.print(tr("You resigned from {game}: the computer plays your seat now.",
                     game=escape(seat.label)))
    console.print(situation(state))
