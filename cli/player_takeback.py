"""The player's takebacks: ``titanpost takeback GAME`` asks to take back your last move;
``--agree`` or ``--refuse`` answers another player's request; ``--status`` shows it.

The server decides (app/takeback.py): a move can be taken back only while it is your last one
and nothing hidden came out since, and only when every other player agrees.
"""

from __future__ import annotations

from typing import Any

import click
from rich.markup import escape

from cli.player_view import emit_json, game_argument, json_option, out, seat_of


def _said(takeback: dict[str, Any] | None, you: int) -> str:
    """One line about a request (seats as a person reads them: from 1)."""
    if not takeback:
        return "No takeback is waiting for an answer."
    who = ("you" if takeback["seat"] == you
           else f"{takeback.get('player')} (seat {takeback['seat'] + 1})")
    waiting = ", ".join(f"seat {p + 1}" for p in takeback.get("waiting_for") or [])
    line = (f"Takeback {takeback['id']} by {who}: move {takeback['move_seq']} "
            f"({takeback.get('input')}), {takeback['status']}")
    if takeback["status"] == "pending":
        line += f"; waiting for {waiting or 'nobody'} until {takeback.get('due_at')}"
    return line


@click.command("takeback")
@game_argument
@click.option("--agree", "answer", flag_value="agree", help="Agree to the pending request.")
@click.option("--refuse", "answer", flag_value="refuse", help="Refuse the pending request.")
@click.option("--status", "answer", flag_value="status", help="Only show the pending request.")
@json_option
def takeback(game: str, answer: str | None, as_json: bool) -> None:
    """Ask to take back your last move in GAME; --agree or --refuse answers another's request.

    A move can be taken back while it is your last one and no die, tile, card or plan has been
    revealed since; every other player must agree (the computer's seats do not vote)."""
    seat = seat_of(game)
    api = seat.api()
    path = f"/games/{seat.game}/takeback"
    if answer == "status":
        _, body = api.get(path)
    elif answer is None:
        _, body = api.post(path)
    else:
        _, body = api.post(f"{path}/answer", {"agree": answer == "agree"})
    if as_json:
        emit_json(body)
        return
    out().print(escape(_said(body.get("takeback"), seat.position)))
