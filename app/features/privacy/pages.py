"""The "My data" page of a browser signed in by mail (linked from My games):

- ``GET /account/data``: what the server holds about the address, in counts, with the two
  downloads, and the "Forget me" form (or, while the address still plays, the games that stop
  it and the way out);
- ``GET /account/data/download.json`` and ``.zip``: the download (changes nothing);
- ``POST /account/forget``: forgets the address when ``confirm`` is the address itself, signs
  the browser out and goes to ``GET /account/forgotten``, which says what went and what stays.

A browser not signed in is sent to the sign-in page.
"""

from __future__ import annotations

from typing import Final

from flask import g, redirect, render_template, request, url_for
from flask.typing import ResponseReturnValue

from app.features.privacy import forget as leaving
from app.features.privacy import mydata
from app.features.privacy.api import download
from app.features.signin.signins import Account, account_seats
from app.service import ServiceError
from app.web.browser_seats import service, sign_out_browser, signed_in
from app.web.pages.common import page_blueprint
from app.web.pages.language import keep_lang, lang, pick_lang

bp = page_blueprint("privacy")

PRIVATE: Final = {"Cache-Control": "no-store", "X-Robots-Tag": "noindex, nofollow"}
"""The headers of a page that shows a player's own data."""


def _page(account: Account, *, error: str | None = None, typed: str = "",
          status: int = 200) -> ResponseReturnValue:
    data = mydata.personal_data(service(), account.email)
    stopping = leaving.still_playing(service(), account.email)
    page = render_template("pages/my_data.html", account=account, counts=mydata.summary(data),
                           seats=data["seats"], stopping=[leaving.game_label(g_)
                                                          for g_ in stopping],
                           stopping_games=stopping, error=error, typed=typed)
    return page, status, PRIVATE


@bp.get("/account/data")
def data_page() -> ResponseReturnValue:
    g.lang = pick_lang()
    account = signed_in()
    if account is None:
        return redirect(url_for("signin.form", **keep_lang()), 303)
    return _page(account)


@bp.get("/account/data/download.<kind>")
def data_download(kind: str) -> ResponseReturnValue:
    g.lang = pick_lang()
    account = signed_in()
    if account is None:
        return redirect(url_for("signin.form", **keep_lang()), 303)
    if kind not in ("json", "zip"):
        return redirect(url_for("privacy.data_page", **keep_lang()), 303)
    data = mydata.personal_data(service(), account.email)
    return download(data, kind, url_for("privacy.data_page", _external=True), lang())


@bp.post("/account/forget")
def forget() -> ResponseReturnValue:
    g.lang = pick_lang()
    account = signed_in()
    if account is None:
        return redirect(url_for("signin.form", **keep_lang()), 303)
    typed = request.form.get("confirm", "")
    games = [uid for uid, _ in account_seats(service(), account.email)]
    try:
        leaving.check_confirmation(account.email, typed)
        leaving.forget(service(), account.email)
    except ServiceError as exc:
        return _page(account, error=exc.say(lang()), typed=typed, status=exc.status)
    sign_out_browser(games)
    return redirect(url_for("privacy.forgotten", **keep_lang()), 303)


@bp.get("/account/forgotten")
def forgotten() -> ResponseReturnValue:
    g.lang = pick_lang()
    return render_template("pages/forgotten.html"), 200, PRIVATE
