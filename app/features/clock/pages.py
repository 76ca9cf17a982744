"""The clock on the game page, for the game's creator: pause the game (the clock stops, no
moves are taken) and resume it (open deadlines move on by the pause's length)."""

from __future__ import annotations

from flask import (
    flash,
    redirect,
    request,
    url_for,
)
from flask.typing import ResponseReturnValue

from app.web.browser_seats import service
from app.web.pages.common import (
    page_blueprint,
    require_creator,
    seat_lang,
)
from app.web.pages.language import (
    keep_lang,
    tr,
)

bp = page_blueprint("clock")


@bp.post("/games/<uid>/pause")
def pause(uid: str) -> ResponseReturnValue:
    token = require_creator(uid)
    seat_lang(uid)
    reason = request.form.get("reason", "").strip()
    service().pause(uid, token, reason=reason)
    flash(tr("The game is paused: the clock stops and no moves are taken until you resume it."),
          "ok")
    return redirect(url_for("play.game", uid=uid, **keep_lang()), 303)


@bp.post("/games/<uid>/resume")
def resume(uid: str) -> ResponseReturnValue:
    token = require_creator(uid)
    seat_lang(uid)
    service().resume(uid, token)
    flash(tr("The game goes on: open deadlines moved on by the length of the pause."), "ok")
    return redirect(url_for("play.game", uid=uid, **keep_lang()), 303)
