"""The server-rendered side: blueprints per area and what they share.

A browser has no account: it holds, in its signed session cookie, the seats it has opened (by
joining from an invitation, or by following a signed link from a mail). ``seat_in(uid)`` says
which seat of a game this browser plays, if any.
"""

from __future__ import annotations

from typing import Any

from flask import Flask, current_app, session

from .service import GameService

SESSION_SEATS = "seats"


def service() -> GameService:
    svc: GameService = current_app.extensions["titanpost.service"]
    return svc


def remember_seat(uid: str, position: int) -> None:
    """This browser now plays ``position`` in game ``uid``."""
    seats: dict[str, int] = dict(session.get(SESSION_SEATS, {}))
    seats[uid] = position
    session[SESSION_SEATS] = seats
    session.permanent = True


def seat_in(uid: str) -> int | None:
    seats: dict[str, Any] = session.get(SESSION_SEATS, {})
    position = seats.get(uid)
    return int(position) if position is not None else None


def my_seats() -> dict[str, int]:
    return {uid: int(p) for uid, p in session.get(SESSION_SEATS, {}).items()}


def register_web(app: Flask) -> None:
    """Register every page blueprint (each area lives in its own module)."""
    from .links import links
    from .pages import pages

    app.register_blueprint(pages)
    app.register_blueprint(links)
    if not app.extensions["titanpost.settings"].production:  # the outbox page (mail not sent)
        from .mail.devmail import devmail

        app.register_blueprint(devmail)
