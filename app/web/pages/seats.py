"""A seat of a running game given to someone else by the game's creator: to a new player (an
invitation) or to the computer."""

from __future__ import annotations

from flask import (
    flash,
    g,
    redirect,
    request,
    url_for,
)
from flask.typing import ResponseReturnValue

from app.service import (
    BadRequest,
)
from app.web.browser_seats import service
from app.web.pages.common import (
    created_games,
    keep_created,
    page_blueprint,
    require_creator,
)
from app.web.pages.language import (
    keep_lang,
    pick_lang,
    tr,
)

bp = page_blueprint("seats")


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
