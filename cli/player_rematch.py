"""``titanpost rematch GAME``: the next game at the same table, once GAME is over.

The server makes one rematch per finished game (app/rematch.py): the first player to ask makes
it and is given its creator token (the game's set-up page takes it, to start the game when the
players are in); everyone after is told which game it is.
"""

from __future__ import annotations

from typing import Any

import click
from rich.markup import escape

from cli.player_view import emit_json, game_argument, json_option, out, seat_of


@click.command("rematch")
@game_argument
@json_option
def rematch(game: str, as_json: bool) -> None:
    """Make the rematch of GAME (over): the same players and settings, everyone invited again.

    Asked again, or after another player made it, it names the rematch made."""
    seat = seat_of(game)
    _, made = seat.api().post_safely(f"/games/{seat.game}/rematch", {})
    if as_json:
        emit_json(made)
        return
    uid = str(made["game"])
    console = out()
    page = f"{seat.server.rstrip('/')}/games/{uid}"
    if not made.get("made"):
        console.print(f"The rematch of {escape(seat.label)} was made already: {page}")
        return
    console.print(f"Rematch of {escape(seat.label)} made: {page}")
    console.print("Every player is invited by mail, you too. Your own seat:")
    console.print(escape(_own_invitation(made, seat.position)))
    console.print(f"You hold its creator token; start it when the players are in, on "
                  f"{page}/setup with the token {escape(str(made['creator_token']))}")


def _own_invitation(made: dict[str, Any], position: int) -> str:
    """How to take one's own seat of the rematch from the terminal."""
    for invitation in made.get("invitations", []):
        if invitation.get("position") == position:
            return f"  titanpost login {invitation['link']}"
    return "  (see your invitation mail)"
