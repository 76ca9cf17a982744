"""The rematch on the pages: the game-over box (the old game's page and the rematch's own page),
the mail's link (a page that asks first: a GET changes nothing) and the links between a game
and its rematch.

One button, "Play again", makes the rematch as this browser's seat of the finished game (its
player's yes is implied): the browser lands on the rematch's page, which sends its share of the
deal by itself. Every other player says yes ("Yes, play again", with their browser's share of
the deal, drawn once the page showed the rematch's commitment) or no, on the old game's page, on
the rematch's page or from the mail's page; the rematch starts by itself at the last yes. Who
answers is this browser's seat of the old game (or the mail link's seat, or the address signed
in): nobody can answer for another player. See app/features/rematch/rematches.py.
"""

from __future__ import annotations

from typing import Any

from flask import current_app, flash, g, redirect, render_template, request, url_for
from flask.typing import ResponseReturnValue

from app.core.models import FINISHED, OPEN
from app.features.rematch import rematches
from app.service import Forbidden, LinkSeat, NotFound, NotPlaying
from app.web.browser_seats import remember_seat, seat_in, service
from app.web.linktokens import LinkError, peek, read_game_token
from app.web.pages.common import keep_created, page_blueprint
from app.web.pages.language import pick_lang, tr

bp = page_blueprint("rematch")


@bp.app_template_global("rematch_box")
def rematch_box(uid: str, position: int | None, status: str) -> dict[str, Any]:
    """What a game page says of rematches: the game it follows, its rematch and where that
    stands (who said yes, who is awaited, who declined), whether this browser's seat may make
    one (a player's seat of a finished game without one), its own answer (``mine``: waiting,
    with the commitment, declined or yes) and whether it may settle the rematch after a no;
    on a rematch's own page, the maker's share of the deal still to send (``share``)."""
    links = rematches.links_of(service(), uid)
    old, old_position = uid, position
    if status == OPEN and links["follows"]:  # the rematch's own page: answers are the old seat's
        old, old_position = links["follows"], seat_in(links["follows"])
    box = _answers(old, old_position, may_ask=status == FINISHED and links["rematch"] is None)
    share = None
    if status == OPEN and links["follows"] and position is not None and box["rematch"]:
        mine = next((row for row in box["rematch"]["seats"] if row["position"] == position), None)
        if mine is not None and mine["answer"] == rematches.YES and not mine["shared"]:
            share = position
    return {**links, **box, "share": share}


def _answers(old: str, position: int | None, *, may_ask: bool) -> dict[str, Any]:
    """The rematch of finished game ``old`` as seen by the player of its seat ``position``."""
    found = rematches.status(service(), old) if old else None
    mine: dict[str, Any] | None = None
    if found is not None and position is not None:
        row = next((row for row in found["seats"] if row["position"] == position), None)
        if row is not None and row["answer"] != rematches.COMPUTER:
            mine = {"answer": row["answer"],
                    "join": rematches.waiting_seat(service(), old, position)}
    may = may_ask and position is not None and rematches.is_player(service(), old, position)
    return {"old": old, "rematch": found, "mine": mine, "may_ask": may,
            "may_settle": bool(found and found["settle"] and mine
                               and mine["answer"] == rematches.YES)}


def _player(uid: str) -> int:
    position = seat_in(uid)
    if position is None:
        service().ensure_exists(uid)
        raise Forbidden(tr("only the game's players may ask for a rematch: open the game from "
                           "the link in your mail"))
    g.lang = pick_lang(service().link_seat(uid, position).language)
    return position


@bp.post("/games/<uid>/rematch")
def make_here(uid: str) -> ResponseReturnValue:
    """Yes, as this browser's seat of finished game ``uid``: make the rematch, or say yes to
    the one made."""
    return _yes(uid, _player(uid))


@bp.post("/games/<uid>/rematch/no")
def decline_here(uid: str) -> ResponseReturnValue:
    """No, as this browser's seat of finished game ``uid``."""
    return _no(uid, _player(uid))


@bp.post("/games/<uid>/rematch/settle")
def settle_here(uid: str) -> ResponseReturnValue:
    """After a no: the computer in the declined seats (``play`` 1), or cancel (0)."""
    return _settle(uid, _player(uid))


def _yes(uid: str, position: int) -> ResponseReturnValue:
    result = rematches.rematch(service(), uid, position)
    new = result["game"]
    if not result["made"]:
        return _joined(uid, position, new)
    keep_created(new, {"token": result["creator_token"], "invites": {}})
    remember_seat(new, result["position"])
    flash(tr("The rematch is made: the other players are asked by mail. It starts by itself "
             "once every player has said yes."), "ok")
    return redirect(url_for("play.game", uid=new), 303)


def _joined(uid: str, position: int, new: str) -> ResponseReturnValue:
    """Say yes to the rematch ``new`` of ``uid`` for this player, when it waits for them."""
    if rematches.waiting_seat(service(), uid, position) is None:
        flash(tr("The rematch was made already: here it is."), "ok")
        return redirect(url_for("play.game", uid=new), 303)
    taken = rematches.join(service(), uid, position,
                           contribution=request.form.get("contribution") or None)
    remember_seat(new, taken["position"])
    _said_yes(bool(taken["started"]))
    return redirect(url_for("play.game", uid=new), 303)


def _said_yes(started: bool) -> None:
    if started:
        flash(tr("Everyone has said yes: the rematch has started."), "ok")
    else:
        flash(tr("You have said yes: the rematch starts once every player has."), "ok")


def _no(uid: str, position: int) -> ResponseReturnValue:
    rematches.decline(service(), uid, position)
    flash(tr("You have declined the rematch: the others may play it with the computer in "
             "your seat, or cancel it."), "ok")
    return redirect(url_for("play.game", uid=uid), 303)


def _settle(uid: str, position: int) -> ResponseReturnValue:
    play = request.form.get("play") == "1"
    settled = rematches.settle(service(), uid, position, play=play)
    if play:
        flash(tr("The rematch has started, the computer playing the seats of those who "
                 "declined."), "ok")
        return redirect(url_for("play.game", uid=settled["game"]), 303)
    flash(tr("The rematch is cancelled."), "ok")
    return redirect(url_for("play.game", uid=uid), 303)


@bp.post("/games/<uid>/contribution")
def give_share(uid: str) -> ResponseReturnValue:
    """This browser's seat, taken before the game's commitment existed (a rematch's maker, a
    creator who took a seat while creating the game), gives its share of the deal, drawn by
    the page's script (a browser without one sends none: the server then derives the seat's
    own); a rematch every player said yes to starts then."""
    position = seat_in(uid)
    if position is None:
        service().ensure_exists(uid)
        raise Forbidden(tr("only the seat's own player may give its share of the deal"))
    g.lang = pick_lang(service().link_seat(uid, position).language)
    given = request.form.get("contribution", "")
    if given:
        try:
            service().contribute(uid, position, given)
            flash(tr("Your browser has added its share of the deal."), "ok")
        except NotPlaying:  # (the others' yes came first: the server gave the seat its own)
            pass
    if service().start_when_ready(uid):
        flash(tr("Everyone has said yes: the rematch has started."), "ok")
    elif request.form.get("back") == "setup":  # a creator seated while creating: back to it
        return redirect(url_for("newgame.setup", uid=uid), 303)
    return redirect(url_for("play.game", uid=uid), 303)


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
    g.lang = pick_lang(seat.language)
    return seat


@bp.get("/g/<token>/rematch")
def ask(token: str) -> ResponseReturnValue:
    """The mails' rematch link: says what a rematch is and where it stands, and asks (a GET
    changes nothing)."""
    seat = _link_seat(token)
    links = rematches.links_of(service(), seat.game)
    box = _answers(seat.game, seat.position, may_ask=seat.status == FINISHED
                   and links["rematch"] is None)
    if not rematches.is_player(service(), seat.game, seat.position):
        box["may_ask"] = False
    return render_template("pages/rematch.html", seat=seat, links=links, box=box,
                           finished=seat.status == FINISHED,
                           game_url=url_for("play.game", uid=seat.game),
                           action=url_for("rematch.make_from_mail", token=token),
                           decline=url_for("rematch.decline_from_mail", token=token),
                           settle=url_for("rematch.settle_from_mail", token=token))


def _mail_player(token: str) -> LinkSeat:
    """The mail link's seat, remembered in this browser when a person plays it."""
    seat = _link_seat(token)
    if rematches.is_player(service(), seat.game, seat.position):
        remember_seat(seat.game, seat.position)
    return seat


@bp.post("/g/<token>/rematch")
def make_from_mail(token: str) -> ResponseReturnValue:
    """Yes, as the mail link's seat: make the rematch, or say yes to the one made."""
    seat = _mail_player(token)
    return _yes(seat.game, seat.position)


@bp.post("/g/<token>/rematch/no")
def decline_from_mail(token: str) -> ResponseReturnValue:
    seat = _mail_player(token)
    return _no(seat.game, seat.position)


@bp.post("/g/<token>/rematch/settle")
def settle_from_mail(token: str) -> ResponseReturnValue:
    seat = _mail_player(token)
    return _settle(seat.game, seat.position)
