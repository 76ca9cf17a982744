"""A game's webhooks on its set-up page, for the game's creator: add one, remove one."""

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
from app.web.browser_seats import service
from app.web.pages.common import (
    page_blueprint,
    require_creator,
)
from app.web.pages.language import (
    keep_lang,
    lang,
    pick_lang,
    tr,
)

bp = page_blueprint("webhooks")


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
