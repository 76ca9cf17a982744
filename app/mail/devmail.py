"""The development mail page: the outbox, and each mail as its recipient would see it.

Without ``TITANPOST_SMTP_URL`` nothing is sent: mail stays in the outbox and is read here.
``GET /dev/mail`` lists the newest rows with their state; ``/dev/mail/<id>`` shows one mail's
headers, its text and its HTML (with the board picture), and ``/dev/mail/<id>.eml`` the whole
message. Registered only outside production (and refusing to answer there regardless).
"""

from __future__ import annotations

import re
from typing import Any

from flask import Blueprint, Response, abort, current_app, render_template, url_for
from sqlmodel import col, select

from app.core.config import Settings
from app.core.models import Game, OutboxMail
from app.mail.render import MailError, Rendered, build_message
from app.web.browser_seats import mail_renderer, service

devmail = Blueprint("devmail", __name__)
LIST_LIMIT = 300


def _development_only() -> None:
    """(Checked in each view: APIFlask expects blueprint-level hooks on API blueprints only.)"""
    settings: Settings = current_app.extensions["titanpost.settings"]
    if settings.production:
        abort(404)


def state_of(row: OutboxMail, max_attempts: int) -> str:
    if row.sent_at is not None:
        if row.last_error and row.last_error.startswith("skipped:"):
            return "skipped"
        return "sent"
    if row.attempts >= max_attempts:
        return "gave up"
    if row.attempts:
        return "retrying"
    return "waiting"


def _row(mail_id: int) -> OutboxMail:
    with service().session() as s:
        row = s.get(OutboxMail, mail_id)
    if row is None:
        abort(404)
    return row


def _render(row: OutboxMail) -> tuple[Rendered | None, str | None]:
    try:
        return mail_renderer().render(row, always=True), None
    except MailError as exc:
        return None, str(exc)


@devmail.get("/dev/mail")
def outbox() -> str:
    _development_only()
    from app.mail.send import MAX_ATTEMPTS

    settings: Settings = current_app.extensions["titanpost.settings"]
    with service().session() as s:
        rows = s.exec(
            select(OutboxMail, Game)
            .join(Game, col(Game.id) == col(OutboxMail.game_id), isouter=True)
            .order_by(col(OutboxMail.id).desc())
            .limit(LIST_LIMIT)
        ).all()
    items: list[dict[str, Any]] = [
        {"row": row, "game": game, "state": state_of(row, MAX_ATTEMPTS)} for row, game in rows
    ]
    return render_template("mail/dev/list.html", items=items, smtp=bool(settings.smtp_url))


@devmail.get("/dev/mail/<int:mail_id>")
def show(mail_id: int) -> str:
    _development_only()
    from app.mail.send import MAX_ATTEMPTS

    row = _row(mail_id)
    mail, error = _render(row)
    headers: list[tuple[str, str]] = []
    if mail is not None:
        message = build_message(current_app.extensions["titanpost.settings"], row, mail)
        headers = [(k, str(v)) for k, v in message.items()]
    return render_template("mail/dev/show.html", row=row, mail=mail, error=error,
                           headers=headers, state=state_of(row, MAX_ATTEMPTS))


@devmail.get("/dev/mail/<int:mail_id>/html")
def html(mail_id: int) -> Response:
    _development_only()
    mail, error = _render(_row(mail_id))
    if mail is None:
        return Response(error or "", status=410, mimetype="text/plain")

    def image_url(match: re.Match[str]) -> str:
        return "src=\"" + url_for("devmail.image", mail_id=mail_id, cid=match.group(1)) + "\""

    body = re.sub(r'src="cid:([^"]+)"', image_url, mail.html)
    return Response(body, mimetype="text/html")


@devmail.get("/dev/mail/<int:mail_id>/image/<path:cid>")
def image(mail_id: int, cid: str) -> Response:
    _development_only()
    mail, _ = _render(_row(mail_id))
    if mail is None or cid not in mail.images:
        abort(404)
    return Response(mail.images[cid], mimetype="image/png")


@devmail.get("/dev/mail/<int:mail_id>.eml")
def raw(mail_id: int) -> Response:
    _development_only()
    row = _row(mail_id)
    mail, error = _render(row)
    if mail is None:
        return Response(error or "", status=410, mimetype="text/plain")
    message = build_message(current_app.extensions["titanpost.settings"], row, mail)
    return Response(bytes(message), mimetype="message/rfc822",
                    headers={"Content-Disposition": f"inline; filename=mail-{mail_id}.eml"})
