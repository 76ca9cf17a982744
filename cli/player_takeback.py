"""The player's takebacks: ``titanpost takeback GAME`` asks to take back your last move;
``--agree`` or ``--refuse`` answers another player's request; ``--status`` shows it.

The server decides (app/features/takeback/takebacks.py): a move can be taken back only while it is
your last one and nothing hidden came out since, and only when every other player agrees."""

from __future__ import annotations

from typing import Any

import click
from rich.markup import escape

from cli.player_shared import (
    emit_json,
    fail,
    game_argument,
    json_option,
    out,
    seat_of,
    when_text,
)
from cli.speech import N_, tr

STATUS_WORDS = {
    "pending": N_("waiting"),
    "agreed": N_("taken back"),
    "refused": N_("refused"),
    "expired": N_("expired"),
    "lapsed": N_("lapsed (the game moved on)"),
}
"""A request's status in words (app.core.models.TAKEBACK_STATUSES)."""


def _said(takeback: dict[str, Any] | None, you: int) -> str:
    """One line about a request (seats as a person reads them: from 1)."""
    if not takeback:
        return tr("No takeback is waiting for an answer.")
    who = (tr("you") if takeback["seat"] == you
           else tr("{player} (seat {seat})", player=takeback.get("player"),
                   seat=takeback["seat"] + 1))
    status = str(takeback["status"])
    line = tr("Takeback {id} by {who}: move {seq} ({input}), {status}", id=takeback["id"],
              who=who, seq=takeback["move_seq"], input=takeback.get("input"),
              status=tr(STATUS_WORDS[status]) if status in STATUS_WORDS else status)
    if status == "pending":
        waiting = ", ".join(tr("seat {seat}", seat=p + 1)
                            for p in takeback.get("waiting_for") or [])
        line += tr("; waiting for {seats} until {due}", seats=waiting or tr("nobody"),
                   due=when_text(takeback.get("due_at")))
    return line


@click.command("takeback", help=N_(
        "Ask to take back your last move in GAME; --agree or --refuse answers another's "
        "request.\n\nA move can be taken back while it is your last one and no chance or "
        "hidden information has come out since; every other player must agree (the "
        "computer's seats do not vote)."))
@game_argument
@click.option("--agree", "answer", flag_value="agree", help=N_("Agree to the pending request."))
@click.option("--refuse", "answer", flag_value="refuse",
              help=N_("Refuse the pending request."))
@click.option("--status", "answer", flag_value="status",
              help=N_("Only show the pending request."))
@json_option
def takeback(game: str, answer: str | None, as_json: bool) -> None:
    seat = seat_of(game)
    api = seat.api()
    path = f"/games/{seat.game}/takeback"
    if answer == "status":
        _, body = api.get(path)
    elif answer is None:
        _, first = api.get(path)
        refusal = first.get("refusal")
        if first.get("can_ask") is False and isinstance(refusal, dict):
            # (the server's reason, before anyone is asked; a server without can_ask is asked)
            fail(str(refusal.get("message") or refusal.get("error")))
        _, body = api.post(path)
    else:
        _, body = api.post(f"{path}/answer", {"agree": answer == "agree"})
    if as_json:
        emit_json(body)
        return
    out().print(escape(_said(body.get("takeback"), seat.position)))
