"""One-click unsubscribe (RFC 8058): the ``/u/<token>`` address every game mail names in its
``List-Unsubscribe`` header.

A mail provider's "unsubscribe" button POSTs ``List-Unsubscribe=One-Click`` to it blind: no
cookie, no CSRF token (the blueprint is exempt), so the signed token is the credential. That
POST sets the seat's mail to ``none`` and answers 200. A GET (a person, or a mail scanner that
opens every link) changes nothing: it shows the choice as two buttons, "no more mail" and "a
daily digest instead", whose POST carries ``mail``. A forged, altered or expired token, or one
of a seat since given to someone else, is refused with the link pages' refusal and changes
nothing. Everything goes through :meth:`Timekeeper.change_settings`.

A daily digest covers the games of one address, so its ``List-Unsubscribe`` address is
``/u/digest/<token>``: the address and the seats (game, position) it covers, signed with the
server key. Its one-click POST sets the mail of each of those seats to ``none`` (the one thing a
mail provider's button can mean: no more of this mail); a seat given since to another address
is left alone. Its GET shows the choice and changes nothing.
"""

from __future__ import annotations

from flask import Blueprint, abort, current_app, g, render_template, request, url_for
from flask.typing import ResponseReturnValue
from sqlmodel import col, select

from app.core.config import Settings
from app.core.i18n import language, translate
from app.core.models import Game, Seat
from app.features.clock.playersettings import SettingsChange
from app.features.clock.timekeeper import install as install_timekeeper
from app.mail.notify import DIGEST, NONE
from app.service import LinkSeat
from app.web.browser_seats import service
from app.web.linkchecks import seat_of_token
from app.web.linktokens import LinkError, read_digest_unsubscribe_token, read_unsubscribe_token
from app.web.linkwords import Refused, link_language, refused_page

unsubscribe = Blueprint("unsubscribe", __name__)

ONE_CLICK = "One-Click"
"""The value of the ``List-Unsubscribe`` field a one-click POST carries (RFC 8058)."""


def _verified(token: str) -> LinkSeat:
    uid, seat = seat_of_token(token)
    lang = link_language(seat.language)
    settings: Settings = current_app.extensions["titanpost.settings"]
    try:
        game, position = read_unsubscribe_token(token, settings.secret_key, seat.secret)
    except LinkError as exc:
        raise Refused(exc.reason, uid=uid, lang=lang) from None
    if game != uid or position != seat.position:
        raise Refused("forged", uid=uid, lang=lang)
    return seat


def _no_store(page: str, status: int) -> ResponseReturnValue:
    return page, status, {"Cache-Control": "no-store", "Referrer-Policy": "no-referrer",
                          "X-Robots-Tag": "noindex, nofollow"}


@unsubscribe.get("/u/<token>")
def confirm(token: str) -> ResponseReturnValue:
    """The choice, with its buttons. Changes nothing."""
    try:
        seat = _verified(token)
    except Refused as refusal:
        return _no_store(*refused_page(refusal))
    lang = link_language(seat.language)
    g.lang = lang  # the words of the page around (base.html), too
    page = render_template(
        "links/unsubscribe.html", lang=lang, done=False,
        title=translate(lang, "Stop the mail of this game?"),
        intro=translate(lang, "This link from your mail stops the mail of {game} to {player}.",
                        game=seat.game_name or seat.game[:8], player=seat.name),
        action=url_for("unsubscribe.apply", token=token),
        stop=translate(lang, "No more mail from this game"),
        digest=translate(lang, "A daily digest instead"),
        note=translate(lang, "Nothing changes until you press a button. The game's result "
                       "and a notice should your seat be handed over still come."),
        game_url=f"{request.script_root}/games/{seat.game}",
        game_words=translate(lang, "Open the game"),
    )
    return _no_store(page, 200)


@unsubscribe.post("/u/<token>")
def apply(token: str) -> ResponseReturnValue:
    """Set the seat's mail: ``none`` for a one-click POST (``List-Unsubscribe=One-Click``) or
    the confirm page's first button, ``digest`` for its second."""
    try:
        seat = _verified(token)
    except Refused as refusal:
        return _no_store(*refused_page(refusal))
    lang = link_language(seat.language)
    mode = DIGEST if request.form.get("mail") == DIGEST else NONE
    if request.form.get("List-Unsubscribe") not in (None, ONE_CLICK):
        return _no_store(*refused_page(Refused("malformed", uid=seat.game, lang=lang)))
    install_timekeeper(service()).change_settings(seat.game, seat.position,
                                                  SettingsChange(mail=mode))
    message = (translate(lang, "You get one daily digest of this game instead of each mail.")
               if mode == DIGEST else
               translate(lang, "You get no more mail from this game."))
    g.lang = lang  # the words of the page around (base.html), too
    page = render_template(
        "links/unsubscribe.html", lang=lang, done=True,
        title=translate(lang, "Your mail setting is saved"), intro=message,
        note=translate(lang, "Change it again on your settings page of the game."),
        game_url=f"{request.script_root}/games/{seat.game}/me",
        game_words=translate(lang, "My settings"),
    )
    return _no_store(page, 200)


def _digest_seats(token: str) -> tuple[str, list[tuple[str, int]]]:
    """The digest's address and those of its seats still played from that address (they may
    since have been given to someone else, or their game removed); 404 for a bad token."""
    settings: Settings = current_app.extensions["titanpost.settings"]
    try:
        email, seats = read_digest_unsubscribe_token(token, settings.secret_key)
    except LinkError:
        abort(404)
    kept: list[tuple[str, int]] = []
    with service().session() as s:
        for uid, position in seats:
            seat = s.exec(select(Seat).join(Game, col(Game.id) == col(Seat.game_id))
                          .where(Game.uid == uid, Seat.position == position)).first()
            if seat is not None and (seat.email or "").lower() == email.lower():
                kept.append((uid, position))
    return email, kept


def _digest_language(seats: list[tuple[str, int]]) -> str:
    if not seats:
        return "en"
    return language(service().link_seat(*seats[0]).language)


@unsubscribe.get("/u/digest/<token>")
def confirm_digest(token: str) -> ResponseReturnValue:
    """The choice for a digest's games. Changes nothing."""
    email, seats = _digest_seats(token)
    lang = _digest_language(seats)
    page = render_template(
        "links/unsubscribe.html", lang=lang, done=False,
        title=translate(lang, "Stop the daily digest?"),
        intro=translate(lang, "This link from your daily digest stops the mail of its games "
                        "to {address}.", address=email),
        action=url_for("unsubscribe.apply_digest", token=token),
        stop=translate(lang, "No more mail from these games"),
        digest=translate(lang, "Keep the daily digest"),
        note=translate(lang, "Nothing changes until you press a button. The game's result "
                       "and a notice should your seat be handed over still come."),
        game_url=f"{request.script_root}/", game_words=translate(lang, "Home"),
    )
    return _no_store(page, 200)


@unsubscribe.post("/u/digest/<token>")
def apply_digest(token: str) -> ResponseReturnValue:
    """Set the mail of every seat the digest covers to ``none`` (a one-click POST, or the
    confirm page's first button); its second button (``mail=digest``) keeps the digest."""
    _, seats = _digest_seats(token)
    lang = _digest_language(seats)
    if request.form.get("List-Unsubscribe") not in (None, ONE_CLICK):
        return _no_store(*refused_page(Refused("malformed", lang=lang)))
    mode = DIGEST if request.form.get("mail") == DIGEST else NONE
    keeper = install_timekeeper(service())
    for uid, position in seats:
        keeper.change_settings(uid, position, SettingsChange(mail=mode))
    message = (translate(lang, "You keep getting the daily digest.") if mode == DIGEST else
               translate(lang, "You get no more mail from these games."))
    page = render_template(
        "links/unsubscribe.html", lang=lang, done=True,
        title=translate(lang, "Your mail setting is saved"), intro=message,
        note=translate(lang, "Change it again on your settings page of each game."),
        game_url=f"{request.script_root}/", game_words=translate(lang, "Home"),
    )
    return _no_store(page, 200)
