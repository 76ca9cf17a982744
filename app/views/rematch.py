"""The rematch on the pages: the game-over box's button, the game-over mail's link (a page that
asks first: a GET changes nothing) and the links between a game and its rematch.

The one who makes the rematch keeps its creator token in this browser and lands on its set-up
page (to start it once the players are in); anyone else asking is sent to the game made.
"""

from __future__ import annotations

from typing import Any

from flask import current_app, flash, g, redirect, render_template, url_for
from flask.typing import ResponseReturnValue

from .. import rematch as rematches
from ..linktokens import LinkError, peek, read_game_token
from ..models import FINISHED
from ..service import Forbidden, LinkSeat, NotFound
from ..web import remember_seat, seat_in, service
from .common import keep_created, page_blueprint
from .language import pick_lang, tr

bp = page_blueprint("rematch")


@bp.app_template_global("rematch_box")
def rematch_box(uid: str, position: int | None, status: str) -> dict[str, Any]:
    """What a game page says of rematches: the game it follows, its rematch, and whether
    this browser's seat may make one (a player's seat of a finished game without one)."""
    links = rematches.links_of(service(), uid)
    may = False
    if status == FINISHED and links["rematch"] is None and position is not None:
        may = rematches.is_player(service(), uid, position)
    return {**links, "may_ask": may}


@bp.post("/games/<uid>/rematch")
def make_here(uid: str) -> ResponseReturnValue:
    """Make (or find) the rematch as this browser's seat."""
    position = seat_in(uid)
    if position is None:
        service().ensure_exists(uid)
        raise Forbidden(tr("only the game's players may ask for a rematch: open the game from "
                           "the link in your mail"))
    return _made(uid, position)


def _made(uid: str, position: int) -> ResponseReturnValue:
    g.lang = pick_lang(service().link_seat(uid, position).language)
    result = rematches.rematch(service(), uid, position)
    new = result["game"]
    if result["made"]:
        keep_created(new, {"token": result["creator_token"],
                           "invites": {str(i["position"]): i["invite_token"]
                                       for i in result["invitations"]}})
        flash(tr("The rematch is made: every player is invited by mail. Start it when "
                 "they are in."), "ok")
        return redirect(url_for("newgame.setup", uid=new), 303)
    flash(tr("The rematch was made already: here it is."), "ok")
    return redirect(url_for("play.game", uid=new), 303)


def _link_seat(token: str) -> LinkSeat:
    """The seat a mail's game link names, its signature checked (NotFound when it is
    damaged, forged or expired)."""
    refused = NotFound(tr("This link is damaged, expired or was not made by this server: "
                          "nothing was changed. Open the game from its mail."))
    try:
        payload = peek(token)
        seat = service().link_seat(str(payload["g"]), int(payload["s"]))
        uid, position = read_game_token(token, current_app.extensions["titanpost.settings"]
                                        .secret_key, seat.secret)
    except (LinkError, NotFound, KeyError, TypeError, ValueError):
        raise refused from None
    if uid != seat.game or position != seat.position:
        raise refused
    return seat


@bp.get("/g/<token>/rematch")
def ask(token: str) -> ResponseReturnValue:
    """The game-over mail's rematch link: says what a rematch is and asks (changes nothing)."""
    seat = _link_seat(token)
    g.lang = pick_lang(seat.language)
    links = rematches.links_of(service(), seat.game)
    return render_template("pages/rematch.html", seat=seat, links=links,
                           finished=seat.status == FINISHED,
                           game_url=url_for("play.game", uid=seat.game),
                           action=url_for("rematch.make_from_mail", token=token))


@bp.post("/g/<token>/rematch")
def make_from_mail(token: str) -> ResponseReturnValue:
    """Make (or find) the rematch as the mail link's seat (remembered in this browser)."""
    seat = _link_seat(token)
    if rematches.is_player(service(), seat.game, seat.position):
        remember_seat(seat.game, seat.position)
    return _made(seat.game, seat.position)
