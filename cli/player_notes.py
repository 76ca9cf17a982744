"""The player's private notes: ``titanpost notes GAME`` prints them, ``titanpost notes GAME
TEXT`` writes one (``--pin SEQ`` pins it to a log entry), ``--edit ID`` changes one and
``--delete ID`` deletes one.

The server keeps them for the seat's player alone (app/features/notes/): no other player, no
spectator and no mail ever shows them."""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import Any

import click
from rich.text import Text

from cli.client import Api, Seat
from cli.player_shared import (
    command_line,
    emit_json,
    fail,
    game_argument,
    json_option,
    out,
    seat_of,
    when_text,
)
from cli.speech import N_, tr


def note_lines(note: Mapping[str, Any]) -> list[Text]:
    """A note as printed: its number, where it is pinned and when it was last written, then
    its text, indented."""
    seq = note.get("seq")
    where = (tr("log entry {seq}", seq=seq) if seq is not None else tr("the whole game"))
    head = Text(f"#{note.get('id')} ", style="bold").append(
        f"{where} · {when_text(note.get('updated_at'), relative=False)}", style="dim")
    return [head, *(Text("  " + line) for line in str(note.get("text") or "").split("\n"))]


def _text_of(words: tuple[str, ...]) -> str:
    """The note's text: the words given, or standard input for a lone ``-``."""
    if words == ("-",):
        return sys.stdin.read()
    return " ".join(words)


def _print(api: Api, seat: Seat, as_json: bool) -> None:
    _, body = api.get(f"/games/{seat.game}/notes")
    if as_json:
        emit_json(body)
        return
    notes = list(body.get("notes") or [])
    console = out()
    if not notes:
        console.print(tr("No notes on {game} yet: {command}", game=seat.label,
                         command=command_line("notes", seat.short, '"' + tr("my plan") + '"')),
                      markup=False)
        return
    for note in notes:
        for line in note_lines(note):
            console.print(line)


@click.command("notes", help=N_(
        "Your private notes on GAME: without TEXT, print them; with TEXT, write one.\n"
        "\n"
        "Only you read them: no other player, no spectator and no mail. TEXT '-' reads the "
        "note from standard input (several lines)."))
@game_argument
@click.argument("text", nargs=-1)
@click.option("--pin", "pin", type=click.IntRange(min=1), default=None, metavar="SEQ",
              help=N_("Pin the note to log entry SEQ (the numbers `titanpost log` shows)."))
@click.option("--unpin", is_flag=True,
              help=N_("With --edit: the note is about the whole game again."))
@click.option("--edit", "edit", type=click.IntRange(min=1), default=None, metavar="ID",
              help=N_("Change note ID: its text to TEXT (if given), its entry to --pin."))
@click.option("--delete", "delete", type=click.IntRange(min=1), default=None, metavar="ID",
              help=N_("Delete note ID."))
@json_option
def notes(game: str, text: tuple[str, ...], pin: int | None, unpin: bool, edit: int | None,
          delete: int | None, as_json: bool) -> None:
    seat = seat_of(game)
    api = seat.api()
    if edit is not None and delete is not None:
        fail(tr("--edit and --delete go one at a time"))
    if unpin and (edit is None or pin is not None):
        fail(tr("--unpin goes with --edit, without --pin"))
    path = f"/games/{seat.game}/notes"
    if delete is not None:
        if text or pin is not None:
            fail(tr("--delete takes no TEXT and no --pin"))
        _, body = api.delete(f"{path}/{delete}")
        _done(body, as_json, tr("deleted note #{id}", id=delete))
        return
    if edit is not None:
        change: dict[str, Any] = {"text": _text_of(text)} if text else {}
        if pin is not None or unpin:
            change["seq"] = pin
        if not change:
            fail(tr("say what to change: TEXT, --pin SEQ or --unpin"))
        _, body = api.patch(f"{path}/{edit}", change)
        _done(body, as_json, tr("changed note #{id}", id=edit))
        return
    if not text:
        if pin is not None:
            fail(tr("--pin goes with a TEXT to write"))
        _print(api, seat, as_json)
        return
    _, body = api.post_safely(path, {"text": _text_of(text), "seq": pin})
    _done(body, as_json, tr("saved note #{id} (only you read it)",
                            id=(body.get("note") or {}).get("id")))


def _done(body: Mapping[str, Any], as_json: bool, said: str) -> None:
    if as_json:
        emit_json(body)
        return
    console = out()
    console.print(Text(said, style="bold green"))
    note = body.get("note")
    if isinstance(note, Mapping):
        for line in note_lines(note):
            console.print(line)
