"""Signed links from the mails: ``/l/<token>`` answers a decision, ``/g/<token>`` opens a game.

A GET never changes anything (mail scanners and link previews open every link they see): it
shows what the link would do, and a POST form with a CSRF token does it. Both check the link
first (app/web/linkchecks.py: its signature, the browser's seat, the decision still pending, the
option still legal); a link that fails a check gets a page saying why (app/web/linkwords.py,
with the pages' words).

Then the GET shows the situation, the option in words and the board after it (or the board now
when the outcome depends on chance), and the POST submits it through the game service, remembers
the seat in this browser's session and redirects to the game page.

:func:`option_link` and :func:`game_link` build the addresses the mails carry.
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Response, flash, g, redirect, render_template, request, url_for
from flask_wtf.csrf import CSRFError
from markupsafe import Markup

from app.core.config import Settings
from app.service import BadRequest, Forbidden, GameMovedOn, IllegalMove, NotFound, NotPlaying
from app.web.browser_seats import remember_seat, seat_in, service
from app.web.linkchecks import (
    pending_state,
    refusal_after,
    seat_of_token,
    verified_game,
    verified_option,
)
from app.web.linktokens import OptionLink, make_game_token, make_option_token
from app.web.linkwords import (
    Refused,
    Words,
    describe_decision,
    game_page_url,
    link_language,
    refused_page,
    ui_of,
)

links = Blueprint("links", __name__)


# ------------------------------------------------------------------ building links


def option_link(
    settings: Settings, seat_secret: str, uid: str, position: int, seq: int, option: str
) -> str:
    """The address that answers the decision after ``seq`` moves of game ``uid`` with
    ``option``, for seat ``position`` (signed with the server key and the seat's secret)."""
    token = make_option_token(
        settings.secret_key, seat_secret, OptionLink(uid, position, seq, option)
    )
    return f"{settings.base_url}/l/{token}"


def game_link(settings: Settings, seat_secret: str, uid: str, position: int) -> str:
    """The address that opens game ``uid`` as seat ``position`` in a browser."""
    token = make_game_token(settings.secret_key, seat_secret, uid, position)
    return f"{settings.base_url}/g/{token}"


# ------------------------------------------------------------------ the pages


@links.after_request
def _private(response: Response) -> Response:
    """Link pages carry a credential in their address: keep them out of caches, indexes and
    Referer headers."""
    response.headers["Cache-Control"] = "no-store"
    response.headers["Referrer-Policy"] = "no-referrer"
    response.headers["X-Robots-Tag"] = "noindex, nofollow"
    return response


@links.get("/l/<token>")
def option_page(token: str) -> tuple[str, int]:
    """What the link would play, with a form that plays it. Changes nothing."""
    try:
        link, seat = verified_option(token)
        body = pending_state(link, seat)
        lang = link_language(seat.language)
        try:
            after = service().preview(link.game, link.seat, link.option)
        except IllegalMove as exc:
            raise refusal_after(
                link,
                seat,
                Refused("illegal", uid=link.game, lang=lang, option=link.option,
                        why=exc.say(lang)),
            ) from None
    except Refused as refusal:
        return refused_page(refusal)
    view: dict[str, Any] = body.get("view") or {}
    pending = view.get("pending") if isinstance(view.get("pending"), dict) else None
    try:
        ui = ui_of(seat.ruleset)
        marks = ui.highlight(link.option, view, after, ui.boards(seat.setup))
    except (ValueError, OSError):
        marks = []
    board = _board(after if after is not None else view, seat.setup, lang, marks,
                   seat.ruleset)
    words = Words(lang)
    g.lang = lang  # the words of the page around (base.html), too
    page = render_template(
        "links/confirm.html",
        lang=lang,
        t=words,
        title=words["confirm_title"],
        game_name=seat.game_name or seat.game[:8],
        game_url=game_page_url(seat.game),
        lead=words["lead"].format(player=seat.name, seq=link.seq),
        situation=describe_decision(pending, lang, seat.ruleset),
        option=link.option,
        option_words=ui_of(seat.ruleset).describe_option(
            link.option, view if view else {"pending": pending or {}}, lang),
        chance=after is None,
        sealed=after is None and service().seals_answers(link.game),
        marked=bool(marks),
        board=board,
        action=url_for("links.option_apply", token=token),
    )
    return page, 200


@links.post("/l/<token>")
def option_apply(token: str) -> Any:
    """Play the link's option (after every check again), then go to the game."""
    try:
        link, seat = verified_option(token)
        pending_state(link, seat)
        lang = link_language(seat.language)
        uid = link.game
        try:
            result = service().submit(uid, link.seat, link.seq, link.option)
        except GameMovedOn:
            raise refusal_after(link, seat, Refused("stale", uid=uid, lang=lang)) from None
        except NotPlaying:
            raise refusal_after(link, seat, Refused("finished", uid=uid, lang=lang)) from None
        except Forbidden:
            raise refusal_after(
                link, seat, Refused("not-yours", uid=uid, lang=lang,
                                    waiting=Words(lang)["nobody"])
            ) from None
        except (IllegalMove, BadRequest) as exc:
            raise refusal_after(
                link,
                seat,
                Refused("illegal", uid=uid, lang=lang, option=link.option, why=exc.say(lang)),
            ) from None
        if result.get("already_applied"):
            raise Refused("reused", uid=uid, lang=lang, option=link.option)
    except Refused as refusal:
        return refused_page(refusal)
    remember_seat(uid, link.seat)
    if result.get("sealed"):  # a secret answer: nothing was played yet
        flash(Words(lang)["sealed"].format(label=link.option))
    else:
        flash(Words(lang)["applied"].format(option=link.option))
    return redirect(game_page_url(uid), code=303)


@links.get("/g/<token>")
def game_page(token: str) -> tuple[str, int]:
    """Offer to open the game as the link's seat. Changes nothing (not even the session)."""
    try:
        seat = verified_game(token)
    except Refused as refusal:
        return refused_page(refusal)
    lang = link_language(seat.language)
    words = Words(lang)
    mine = seat_in(seat.game)
    switch = None
    if mine is not None and mine != seat.position:
        try:
            switch = words["open_switch"].format(
                mine=service().link_seat(seat.game, mine).name, player=seat.name
            )
        except NotFound:
            switch = None
    game_name = seat.game_name or seat.game[:8]
    g.lang = lang  # the words of the page around (base.html), too
    page = render_template(
        "links/open.html",
        lang=lang,
        t=words,
        title=words["open_title"],
        intro=words["open_intro"].format(
            player=seat.name,
            pieces=", ".join(ui_of(seat.ruleset).piece_name(t, lang) for t in seat.pieces) or "?",
            game=game_name,
        ),
        switch=switch,
        button=words["open_as"].format(player=seat.name),
        game_name=game_name,
        game_url=game_page_url(seat.game),
        action=url_for("links.game_open", token=token),
    )
    return page, 200


@links.post("/g/<token>")
def game_open(token: str) -> Any:
    """Remember the link's seat in this browser and go to the game."""
    try:
        seat = verified_game(token)
    except Refused as refusal:
        return refused_page(refusal)
    remember_seat(seat.game, seat.position)
    flash(Words(link_language(seat.language))["opened"].format(player=seat.name))
    return redirect(game_page_url(seat.game), code=303)


@links.errorhandler(CSRFError)
def _csrf_refused(exc: CSRFError) -> tuple[str, int]:
    """A POST without a valid CSRF token: nothing was done; say so in the seat's language."""
    uid: str | None = None
    lang = "en"
    token = (request.view_args or {}).get("token")
    if isinstance(token, str):
        try:
            uid, seat = seat_of_token(token)
            lang = seat.language
        except Refused as refusal:
            uid = refusal.uid
    # (the page's own words say what happened: Flask-WTF's English detail would be the one
    # sentence a Polish reader could not read)
    return refused_page(Refused("csrf", uid=uid, lang=lang))


# ------------------------------------------------------------------ the board


def _board(
    view: dict[str, Any], setup: dict[str, Any], lang: str, highlight: list[str],
    game_name: str | None = None,
) -> Markup | None:
    if not view:
        return None
    ui = ui_of(game_name)
    try:
        boards = ui.boards(setup)
    except (ValueError, OSError):
        return None
    return Markup(ui.board_svg(view, boards, highlight=highlight, lang=lang))
