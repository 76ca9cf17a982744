"""The admin pages: sign in, every game, the replay of a game."""

from __future__ import annotations

import json
import secrets
from collections.abc import Callable
from functools import wraps
from typing import Any, TypeVar, cast
from urllib.parse import urlencode

from flask import (
    flash,
    redirect,
    render_template,
    request,
    session,
    url_for,
)
from flask.typing import ResponseReturnValue
from markupsafe import Markup
from sqlalchemy import func
from sqlmodel import col, select

from app.core.i18n import N_
from app.core.models import Game, Move
from app.service import (
    Forbidden,
)
from app.web.browser_seats import SESSION_ADMIN, is_admin, service, sign_in_admin
from app.web.pages.common import (
    boards_of,
    game_rows,
    page_blueprint,
    safe_next,
    seat_rows,
    utc_time,
)
from app.web.pages.gamewords import card_info, changes, describe_input, ui
from app.web.pages.language import (
    lang,
    tr,
)
from app.web.pages.log import outcome_items

bp = page_blueprint("admin")
REPLAY_ACTOR_WORDS = {
    "player": N_("the player"),
    "computer": N_("the computer (a computer seat)"),
    "timeout": N_("the computer, on a missed deadline"),
    "away": N_("the computer, for a player away"),
    "owner": N_("the game's owner"),
    "admin": N_("an admin"),
    "clock": N_("the clock"),
}
"""Who made a move, as the replay says it (English message ids; shown translated)."""
F = TypeVar("F", bound=Callable[..., ResponseReturnValue])


# ---------------------------------------------------------------------------- admin


def admin_required(view: F) -> F:
    @wraps(view)
    def wrapped(*args: Any, **kwargs: Any) -> ResponseReturnValue:
        if not is_admin():
            target = request.full_path.rstrip("?")
            return redirect(url_for("admin.admin_login") + "?" + urlencode({"next": target}))
        return view(*args, **kwargs)

    return cast(F, wrapped)


@bp.get("/admin/login")
def admin_login() -> ResponseReturnValue:
    enabled = service().settings.admin_token is not None
    return render_template("pages/admin_login.html", enabled=enabled,
                           next=safe_next(request.args.get("next")) or ""), (
        200 if enabled else 403)


@bp.post("/admin/login")
def admin_login_post() -> ResponseReturnValue:
    expected = service().settings.admin_token
    if expected is None:
        raise Forbidden(tr("the admin pages are off: set {setting} on the server",
                           setting="TITANPOST_ADMIN_TOKEN"))
    given = request.form.get("token", "")
    if not secrets.compare_digest(given.encode(), expected.encode()):
        return render_template("pages/admin_login.html", enabled=True,
                               error=tr("wrong admin token"),
                               next=safe_next(request.form.get("next")) or ""), 403
    sign_in_admin()
    flash(tr("Signed in as the admin."), "ok")
    return redirect(safe_next(request.form.get("next")) or url_for("admin.admin_index"), 303)


@bp.post("/admin/logout")
def admin_logout() -> ResponseReturnValue:
    session.pop(SESSION_ADMIN, None)
    flash(tr("Signed out."), "ok")
    return redirect(url_for("home.home"), 303)


@bp.get("/admin")
@admin_required
def admin_index() -> ResponseReturnValue:
    uid = request.args.get("game", "").strip()
    if uid:
        return redirect(url_for("admin.admin_replay", uid=uid))
    with service().session() as s:
        moves = (
            select(func.count()).select_from(Move).where(Move.game_id == Game.id)
            .correlate(Game).scalar_subquery()
        )
        rows = s.exec(
            select(Game, moves).order_by(col(Game.created_at).desc()).limit(100)
        ).all()
        games = [
            {"uid": row[0].uid, "name": row[0].name, "status": row[0].status,
             "variant": ui(row[0].ruleset).variant_name(row[0].variant, lang()),
             "moves": int(row[1]),
             "created": row[0].created_at.strftime("%Y-%m-%d %H:%M")}
            for row in rows
        ]
    return render_template("pages/admin_index.html", games=games)


@bp.get("/admin/replay/<uid>")
@admin_required
def admin_replay(uid: str) -> ResponseReturnValue:
    game_row, seat_list = game_rows(uid)
    steps = service().replay(uid)["steps"]
    seats = seat_rows(game_row, seat_list)
    if not steps:
        return render_template("pages/admin_replay.html", game=game_row, seats=seats, step=None,
                               last=0)
    last = len(steps) - 1
    try:
        number = int(request.args.get("step", last))
    except ValueError:
        number = last
    number = max(0, min(last, number))
    current = steps[number]
    view = current["view"]
    boards = boards_of(game_row)
    marks: list[str] = []
    words: list[str] = []
    if number > 0:
        words, marks = changes(steps[number - 1]["view"], view, boards)
    move_row = current["move"]
    move_info = None
    if move_row is not None:
        actor = str(move_row.get("actor") or "player")
        who = next((s for s in seats if s["position"] == move_row["seat"]), None)
        before_pending = steps[number - 1]["view"].get("pending") or {}
        move_info = {
            **move_row,
            "who": who["name"] if who else "—",
            "label": describe_input(move_row["input"], before_pending),
            "piece": ui().decider(before_pending),
            "items": outcome_items(move_row["outcomes"]),
            "at": utc_time(move_row["created_at"]),
            "actor_words": tr(REPLAY_ACTOR_WORDS[actor]) if actor in REPLAY_ACTOR_WORDS
            else actor,
        }
    return render_template(
        "pages/admin_replay.html",
        game=game_row,
        game_name=game_row.ruleset,
        view=view,
        seats=seats,
        step=number,
        last=last,
        move=move_info,
        changes=words,
        board=Markup(ui().board_svg(view, boards, highlight=marks)),
        panel_facts=Markup(ui().panel_facts(view, boards, lang())),
        rows=ui().rows(view, seats, None, []),
        hands={piece: [card_info(c) for c in cards] for piece, cards in ui().hands(view).items()},
        view_json=json.dumps(view, indent=2, sort_keys=True),
    )
