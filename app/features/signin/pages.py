"""The sign-in pages (app/features/signin/signins.py does the work): ask for a link by mail, the
link's page, signing out, and opening one of the signed-in address's seats in this browser.

- ``GET /signin``: the form (or, signed in, who this browser is and the sign-out button);
- ``POST /signin``: asks for a link; the answer is the same page whether or not the address
  holds a seat, and it takes at least :data:`app.features.signin.signins.ANSWER_FLOOR` seconds
  either way, so that neither its words nor its time tell who plays;
- ``GET /signin/<token>``: what the link would do, or which of damaged, forged, expired, used
  or replaced it is; changes nothing (mail scanners open every link);
- ``POST /signin/<token>``: signs this browser in (the link is used up) and goes to /games;
- ``POST /signout``; ``POST /games/<uid>/open/<position>``: play that seat in this browser;
- ``POST /games/<uid>/take/<position>``: take a seat the address was invited to (My games).
"""

from __future__ import annotations

from typing import Final

from flask import (
    flash,
    g,
    redirect,
    render_template,
    request,
    url_for,
)
from flask.typing import ResponseReturnValue
from flask_limiter.util import get_remote_address

from app.features.signin.signins import (
    REFUSALS,
    REFUSED_STATUS,
    WEB,
    SignInRefused,
    TooManyAsks,
    account_seats,
    ask_link,
    check_link,
    sign_out,
    take_invited_seat,
    use_link,
)
from app.service import Forbidden, ServiceError
from app.web.browser_seats import (
    browser_language,
    remember_seat,
    service,
    sign_in_browser,
    sign_out_browser,
    signed_in,
)
from app.web.linktokens import SIGNIN_LINK_MAX_AGE
from app.web.pages.common import page_blueprint
from app.web.pages.language import keep_lang, lang, pick_lang, tr

bp = page_blueprint("signin")

PRIVATE: Final = {"Cache-Control": "no-store", "Referrer-Policy": "no-referrer",
                  "X-Robots-Tag": "noindex, nofollow"}
"""The headers of a page whose address carries a sign-in token."""


def _ask_page(**context: object) -> str:
    return render_template("signin/ask.html", minutes=SIGNIN_LINK_MAX_AGE // 60, **context)


@bp.get("/signin")
def form() -> ResponseReturnValue:
    g.lang = pick_lang()
    return _ask_page(account=signed_in(), sent=False, error=None,
                           address="")


@bp.post("/signin")
def ask() -> ResponseReturnValue:
    g.lang = pick_lang()
    address = request.form.get("email", "")
    try:
        ask_link(service(), address, get_remote_address() or "", browser_language() or lang())
    except TooManyAsks as exc:
        message = tr("Too many sign-in links were asked for, for this address or from yours, "
                     "in a short time. Try again in {minutes} minutes.",
                     minutes=max(1, exc.retry_after // 60))
        page = _ask_page(account=None, sent=False, error=message,
                               address=address)
        return page, 429, {"Retry-After": str(exc.retry_after)}
    except ServiceError as exc:
        page = _ask_page(account=None, sent=False,
                               error=exc.say(lang()), address=address)
        return page, 400
    return _ask_page(account=None, sent=True, error=None,
                           address=address.strip())


def _refused(reason: str) -> ResponseReturnValue:
    message = tr(REFUSALS[reason], minutes=SIGNIN_LINK_MAX_AGE // 60)
    page = render_template("signin/link.html", address=None, refused=reason, message=message,
                           token=None)
    return page, REFUSED_STATUS[reason], PRIVATE


@bp.get("/signin/<token>")
def confirm(token: str) -> ResponseReturnValue:
    """What the link does (a button), or what is wrong with it. Changes nothing."""
    g.lang = pick_lang()
    try:
        link = check_link(service(), token)
    except SignInRefused as exc:
        return _refused(exc.reason)
    page = render_template("signin/link.html", address=link.email, refused=None, message=None,
                           token=token)
    return page, 200, PRIVATE


@bp.post("/signin/<token>")
def apply(token: str) -> ResponseReturnValue:
    g.lang = pick_lang()
    try:
        account = use_link(service(), token, WEB)
    except SignInRefused as exc:
        return _refused(exc.reason)
    sign_in_browser(account)
    flash(tr("You are signed in as {address}.", address=account.email), "ok")
    return redirect(url_for("home.my_games", **keep_lang()), 303)


@bp.post("/signout")
def signout() -> ResponseReturnValue:
    g.lang = pick_lang()
    account = signed_in()
    if account is not None:
        sign_out(service(), account)
    sign_out_browser()
    flash(tr("You are signed out: this browser keeps none of that address's games."), "ok")
    return redirect(url_for("home.home", **keep_lang()), 303)


@bp.post("/games/<uid>/take/<int:position>")
def take_seat(uid: str, position: int) -> ResponseReturnValue:
    """Take seat ``position`` of game ``uid``, invited to the signed-in address, in this browser
    (with its share of the deal, drawn by the page after it showed the commitment)."""
    g.lang = pick_lang()
    account = signed_in()
    if account is None:
        raise Forbidden(tr("this seat is not one of the address you signed in as: sign in "
                           "with its address"))
    taken = take_invited_seat(service(), account.email, uid, position,
                              contribution=request.form.get("contribution") or None)
    remember_seat(uid, int(taken["position"]))
    flash(tr("You have taken seat {position}.", position=position + 1), "ok")
    return redirect(url_for("play.game", uid=uid, **keep_lang()), 303)


@bp.post("/games/<uid>/open/<int:position>")
def open_seat(uid: str, position: int) -> ResponseReturnValue:
    """Play seat ``position`` of game ``uid`` in this browser: a seat of the signed-in address."""
    g.lang = pick_lang()
    account = signed_in()
    if account is None or (uid, position) not in account_seats(service(), account.email):
        raise Forbidden(tr("this seat is not one of the address you signed in as: sign in "
                           "with its address"))
    remember_seat(uid, position)
    return redirect(url_for("play.game", uid=uid, **keep_lang()), 303)
