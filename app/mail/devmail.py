"""The development mail page: the outbox, and each mail as its recipient would see it.

Without ``TITANPOST_SMTP_URL`` nothing is sent: mail stays in the outbox and is read here.
``GET /dev/mail`` lists the newest rows with their state and what a relay's sender would do
with each now (:func:`relay_plan`: held until when, held or left out and why, skipped and why,
sent); ``/dev/mail/<id>`` shows one mail's
headers, its text and its HTML (with the board picture), and ``/dev/mail/<id>.eml`` the whole
message. Registered only outside production (and refusing to answer there regardless).
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

from flask import Blueprint, Response, abort, current_app, render_template, url_for
from sqlmodel import col, select

from app.core.config import Settings
from app.core.models import Game, OutboxMail, utcnow
from app.features.live.presence import (
    HELD_WHY,
    HOLD,
    LEAVE_OUT,
    LEFT_OUT_WHY,
    watched_rows,
    while_watched,
)
from app.mail.notify import decision_kinds
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
    if row.attempts >= max_attempts or row.body_purged_at is not None:
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
    if row.body_purged_at is not None:  # (app/features/retention/)
        return None, f"its body was purged on {row.body_purged_at:%Y-%m-%d} (retention)"
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
    now = utcnow()
    with service().session() as s:
        watched = watched_rows(s, [row for row, _ in rows if row.sent_at is None])
    items: list[dict[str, Any]] = [
        {"row": row, "game": game, "state": state_of(row, MAX_ATTEMPTS),
         "plan": relay_plan(row, row.id in watched, now)} for row, game in rows
    ]
    return render_template("mail/dev/list.html", items=items, smtp=bool(settings.smtp_url))


def relay_plan(row: OutboxMail, watched: bool, now: datetime) -> str:
    """What a relay's sender does with an unsent row now (the sender's own rules: held until a
    time, held or left out while its player has the game open, skipped as no longer worth
    sending, or sent); for a settled row, what became of it."""
    if row.sent_at is not None:
        return row.last_error or "sent"
    rule = while_watched(row.kind) if watched else None
    if rule == LEAVE_OUT:
        return f"left out: {LEFT_OUT_WHY}"
    due = row.next_attempt_at
    if due is not None and due.tzinfo is None:
        due = due.replace(tzinfo=UTC)
    if due is not None and due > now:
        why = row.last_error or ("a step of the player's own turn: skipped if they go on "
                                 "first" if row.kind in decision_kinds() else "")
        return f"held until {due:%H:%M} UTC" + (f" ({why})" if why else "")
    mail, error = _render(row)
    if mail is None:
        return f"would fail: {error}"
    if mail.skip:
        return f"would be skipped: {mail.skip}"
    if rule == HOLD:
        return HELD_WHY
    return "would be sent now"


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
