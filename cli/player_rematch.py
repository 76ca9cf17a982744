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
from cli.speech import N_, tr


@click.command("rematch", help=N_(
        "Make the rematch of GAME (over): the same players and settings, everyone invited "
        "again.\n\nAsked again, or after another player made it, it names the rematch made."))
@game_argument
@json_option
def rematch(game: str, as_json: bool) -> None:
    seat = seat_of(game)
    _, made = seat.api().post_safely(f"/games/{seat.game}/rematch", {})
    if as_json:
        emit_json(made)
        return
    uid = str(made["game"])
    console = out()
    page = f"{seat.server.rstrip('/')}/games/{uid}"
    if not made.get("made"):
        console.print(tr("The rematch of {game} was made already: {page}",
                         game=escape(seat.label), page=page))
        return
    console.print(tr("Rematch of {game} made: {page}", game=escape(seat.label), page=page))
    console.print(tr("Every player is invited by mail, you too. Your own seat:"))
    console.print(escape(_own_invitation(made, seat.position)))
    console.print(tr("You hold its creator token; start it when the players are in, on "
                     "{page} with the token {token}", page=page + "/setup",
                     token=escape(str(made["creator_token"]))))


def _own_invitation(made: dict[str, Any], position: int) -> str:
    """How to take one's own seat of the rematch from the terminal."""
    for invitation in made.get("invitations", []):
        if invitation.get("position") == position:
            return f"  titanpost login {invitation['link']}"
    return "  " + tr("(see your invitation mail)")
