"""The rematch on the pages: the game-over box's button, the game-over mail's link (a page that
asks first: a GET changes nothing) and the links between a game and its rematch.

One button serves every player: the first to press it makes the rematch and takes their own
seat of it at once (this browser keeps that seat and the creator token, and lands on the
set-up page, which then adds this browser's share of the deal); anyone pressing it after takes
their own seat of the rematch, kept for them, with their browser's share of the deal (the page
showed them the rematch's commitment first). Who presses is this browser's seat of the old
game (or the mail link's seat): nobody is given, or can take, another player's seat.
"""

from __future__ import annotations

from typing import Any

from flask import current_app, flash, g, redirect, render_template, request, url_for
from flask.typing import ResponseReturnValue

from app.core.models import FINISHED
from app.features.rematch import rematches
from app.service import Forbidden, LinkSeat, NotFound
from app.web.browser_seats import remember_seat, seat_in, service
from app.web.linktokens import LinkError, peek, read_game_token
from app.web.pages.common import keep_created, page_blueprint
from app.web.pages.language import pick_lang, tr

bp = page_blueprint("rematch")


@bp.app_template_global("rematch_box")
def rematch_box(uid: str, position: int | None, status: str) -> dict[str, Any]:
    """What a game page says of rematches: the game it follows, its rematch, whether this
    browser's seat may make one (a player's seat of a finished game without one), and the
    seat of the rematch that waits for this browser's player (``join``: its commitment)."""
    links = rematches.links_of(service(), uid)
    may = False
    join = None
    if status == FINISHED and position is not None:
        if links["rematch"] is None:
            may = rematches.is_player(service(), uid, position)
        else:
            join = rematches.waiting_seat(service(), uid, position)
    return {**links, "may_ask": may, "join": join}


@bp.post("/games/<uid>/rematch")
def make_here(uid: str) -> ResponseReturnValue:
    """Make the rematch as this browser's seat, or take that seat's place in the one made."""
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
    if not result["made"]:
        return _joined(uid, position, new)
    keep_created(new, {"token": result["creator_token"], "invites": {}})
    remember_seat(new, result["position"])
    flash(tr("The rematch is made and you have your seat in it: the other players are "
             "invited by mail. Start it when they are in."), "ok")
    _show_api_token(result["api_token"])
    return redirect(url_for("newgame.setup", uid=new), 303)


def _joined(uid: str, position: int, new: str) -> ResponseReturnValue:
    """Take this player's seat of the rematch ``new`` of ``uid``, when it waits for them."""
    if rematches.waiting_seat(service(), uid, position) is None:
        flash(tr("The rematch was made already: here it is."), "ok")
        return redirect(url_for("play.game", uid=new), 303)
    taken = rematches.join(service(), uid, position,
                           contribution=request.form.get("contribution") or None)
    remember_seat(new, taken["position"])
    flash(tr("You have taken your seat in the rematch."), "ok")
    _show_api_token(taken["api_token"])
    return redirect(url_for("play.game", uid=new), 303)


def _show_api_token(token: str) -> None:
    flash(tr("Your seat's API token, for programs (shown once): {token}", token=token), "token")


@bp.post("/games/<uid>/contribution")
def give_share(uid: str) -> ResponseReturnValue:
    """This browser's seat, taken before the game's commitment existed (a rematch's maker),
    gives its share of the deal, drawn by the set-up page's script."""
    position = seat_in(uid)
    if position is None:
        service().ensure_exists(uid)
        raise Forbidden(tr("only the seat's own player may give its share of the deal"))
    g.lang = pick_lang(service().link_seat(uid, position).language)
    service().contribute(uid, position, request.form.get("contribution", ""))
    flash(tr("Your browser has added its share of the deal."), "ok")
    return redirect(url_for("newgame.setup", uid=uid), 303)


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
    join = (rematches.waiting_seat(service(), seat.game, seat.position)
            if links["rematch"] else None)
    return render_template("pages/rematch.html", seat=seat, links=links, join=join,
                           finished=seat.status == FINISHED,
                           game_url=url_for("play.game", uid=seat.game),
                           action=url_for("rematch.make_from_mail", token=token))


@bp.post("/g/<token>/rematch")
def make_from_mail(token: str) -> ResponseReturnValue:
    """Make the rematch as the mail link's seat (remembered in this browser), or take that
    seat's place in the one made."""
    seat = _link_seat(token)
    if rematches.is_player(service(), seat.game, seat.position):
        remember_seat(seat.game, seat.position)
    return _made(seat.game, seat.position)
