"""The standings on the pages, for a browser signed in by mail (app/features/signin/):

- ``GET /standings?game=&from=&to=``: the game and season chosen by a GET form, the automatic
  table of the address and each of its groups' tables, and a form that makes a group; a
  browser not signed in is told to sign in;
- ``GET /standings/groups/<group>``: a group of the address (404 for another's): its members'
  addresses, the forms that add and remove one and delete the group;
- ``POST /standings/groups`` (``name``), ``POST /standings/groups/<group>/members`` (``email``),
  ``.../members/remove`` (``email``) and ``.../delete``: each with the form's CSRF token.
"""

from __future__ import annotations

from typing import Any, Final

from babel.numbers import format_decimal
from flask import flash, g, redirect, render_template, request, url_for
from flask.typing import ResponseReturnValue

from app.games import GAMES
from app.games.base import BOT_LEVEL_WORDS
from app.games.ui import game_ui
from app.service import Forbidden, ServiceError
from app.web.browser_seats import service, signed_in
from app.web.pages.common import page_blueprint
from app.web.pages.language import keep_lang, lang, pick_lang, tr

from . import groups
from .standings import automatic, of_group
from .tables import Season, game_name, season

bp = page_blueprint("standings")

PRIVATE: Final = {"Cache-Control": "private, no-store"}
"""A page of a signed-in address's tables and addresses is kept by no cache."""


def decimal(value: float | None, places: int = 2) -> str:
    """``value`` as the page's language writes a decimal number ("2.33", Polish "2,33")."""
    if value is None:
        return "\N{EN DASH}"
    return format_decimal(value, format="0." + "0" * places, locale=lang())


def _names(table: dict[str, Any]) -> dict[str, Any]:
    """A table's lines with their words: the computer's lines named by level."""
    for line in table["computers"]:
        level = tr(BOT_LEVEL_WORDS.get(line["level"], line["level"]))
        line["name"] = tr("the computer ({level})", level=level)
    return table


def _games() -> list[tuple[str, str]]:
    return [(name, game_ui(name).title) for name in GAMES]


def _viewer() -> str:
    account = signed_in()
    if account is None:
        raise Forbidden(tr("sign in by mail first: the standings are those of your address"))
    return account.email


def _choice() -> tuple[str, Season, str | None]:
    """The game and season of the GET form, and what is wrong with them (then the defaults)."""
    try:
        return (game_name(request.args.get("game")),
                season(request.args.get("from"), request.args.get("to")), None)
    except ServiceError as exc:
        return game_name(None), Season(), exc.say(lang())


@bp.get("/standings")
def standings_page() -> ResponseReturnValue:
    g.lang = pick_lang()
    account = signed_in()
    if account is None:
        return render_template("pages/standings.html", account=None), 200, PRIVATE
    game, period, error = _choice()
    viewer = account.email
    tables = [_names(automatic(service(), viewer, game, period))]
    for found in groups.groups_of(service(), viewer):
        tables.append(_names(of_group(service(), viewer, found["group"], game, period)))
    page = render_template("pages/standings.html", account=account, tables=tables,
                           game=game, games=_games(), period=period.to_json(), error=error,
                           decimal=decimal, title=game_ui(game).title)
    return page, 400 if error else 200, PRIVATE


def _group_page(uid: str, error: str | None = None, status: int = 200,
                address: str = "") -> ResponseReturnValue:
    found = groups.group(service(), _viewer(), uid)
    page = render_template("pages/standings_group.html", group=found, error=error,
                           address=address)
    return page, status, PRIVATE


@bp.get("/standings/groups/<uid>")
def group_page(uid: str) -> ResponseReturnValue:
    g.lang = pick_lang()
    return _group_page(uid)


@bp.post("/standings/groups")
def make_group() -> ResponseReturnValue:
    g.lang = pick_lang()
    viewer = _viewer()
    made = groups.make(service(), viewer, request.form.get("name", ""))  # (refused: 400)
    flash(tr("The group {name} is made: add the players you play with.", name=made["name"]),
          "ok")
    return redirect(url_for("standings.group_page", uid=made["group"], **keep_lang()), 303)


@bp.post("/standings/groups/<uid>/members")
def add_member(uid: str) -> ResponseReturnValue:
    g.lang = pick_lang()
    address = request.form.get("email", "")
    try:
        groups.add(service(), _viewer(), uid, address)
    except ServiceError as exc:
        if exc.status == 404:
            raise
        return _group_page(uid, exc.say(lang()), exc.status, address.strip()[:254])
    flash(tr("{address} is in the group.", address=address.strip().lower()), "ok")
    return redirect(url_for("standings.group_page", uid=uid, **keep_lang()), 303)


@bp.post("/standings/groups/<uid>/members/remove")
def remove_member(uid: str) -> ResponseReturnValue:
    g.lang = pick_lang()
    address = request.form.get("email", "")
    try:
        groups.remove(service(), _viewer(), uid, address)
    except ServiceError as exc:
        if exc.status == 404:
            raise
        return _group_page(uid, exc.say(lang()), exc.status)
    flash(tr("{address} is no longer in the group.", address=address.strip().lower()), "ok")
    return redirect(url_for("standings.group_page", uid=uid, **keep_lang()), 303)


@bp.post("/standings/groups/<uid>/delete")
def delete_group(uid: str) -> ResponseReturnValue:
    g.lang = pick_lang()
    groups.drop(service(), _viewer(), uid)
    flash(tr("The group is deleted."), "ok")
    return redirect(url_for("standings.standings_page", **keep_lang()), 303)
