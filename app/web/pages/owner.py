"""What a game's owner (its creator) does to a game: pause, resume, replace a seat, and add or
remove its webhooks."""

from __future__ import annotations

from flask import (
    flash,
    g,
    redirect,
    request,
    url_for,
)
from flask.typing import ResponseReturnValue

from app.features.webhooks.hooks import add_webhook, remove_webhook
from app.service import (
    BadRequest,
)
from app.web.browser_seats import service
from app.web.pages.common import (
    created_games,
    keep_created,
    page_blueprint,
    require_creator,
    seat_lang,
)
from app.web.pages.language import (
    keep_lang,
    lang,
    pick_lang,
    tr,
)

bp = page_blueprint("owner")



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


@bp.post("/games/<uid>/seats/<int:position>/replace")
def replace_seat(uid: str, position: int) -> ResponseReturnValue:
    """The creator gives a seat of a running game to a new player (an invitation) or to the
    computer."""
    token = require_creator(uid)
    g.lang = pick_lang()
    if request.form.get("to") == "computer":
        service().replace_seat(uid, token, position, None)
        flash(tr("The computer plays seat {position} from now on.", position=position + 1), "ok")
        return redirect(url_for("newgame.setup", uid=uid, **keep_lang()), 303)
    email = request.form.get("email", "").strip()
    if not email:
        raise BadRequest(tr("give the new player's e-mail address, or let the computer play "
                            "the seat"))
    result = service().replace_seat(uid, token, position, email)
    if "invite_token" not in result:  # a rematch's seat: invited by mail alone
        flash(tr("Seat {position} is offered to {email}: their invitation is on its way by "
                 "mail. The computer plays the seat until they join.", position=position + 1,
                 email=result["email"]), "ok")
        return redirect(url_for("newgame.setup", uid=uid, **keep_lang()), 303)
    entry = created_games().get(uid) or {"token": token}
    invites = dict(entry.get("invites") or {})
    invites[str(position)] = result["invite_token"]
    keep_created(uid, {**entry, "invites": invites})
    flash(tr("Seat {position} is offered to {email}: send them the invitation link below. The "
             "computer plays the seat until they join.", position=position + 1,
             email=result["email"]), "ok")
    return redirect(url_for("newgame.setup", uid=uid, **keep_lang()), 303)


@bp.post("/games/<uid>/webhooks")
def add_hook(uid: str) -> ResponseReturnValue:
    token = require_creator(uid)
    g.lang = pick_lang()
    # (a form without the field: the page's language, as the select shows it first)
    added = add_webhook(service(), uid, token, request.form.get("url", "").strip(),
                        request.form.get("format", "").strip(),
                        language=request.form.get("language", "").strip() or lang())
    flash(tr("Webhook {number} added: it is told of every turn and of the game's end.",
             number=added["id"]), "ok")
    if added.get("secret"):
        flash(tr("Its posts are signed (Standard Webhooks) with this secret, shown once: keep "
                 "it to check them: {secret}", secret=added["secret"]), "token")
    return redirect(url_for("newgame.setup", uid=uid, **keep_lang()), 303)


@bp.post("/games/<uid>/webhooks/<int:webhook_id>/remove")
def remove_hook(uid: str, webhook_id: int) -> ResponseReturnValue:
    token = require_creator(uid)
    g.lang = pick_lang()
    remove_webhook(service(), uid, token, webhook_id)
    flash(tr("Webhook {number} removed.", number=webhook_id), "ok")
    return redirect(url_for("newgame.setup", uid=uid, **keep_lang()), 303)
