"""A seat's deadlines as an iCalendar feed: ``GET /games/<uid>/me/deadlines.ics?token=...``.

Calendar apps subscribe to an address and cannot log in, so the address carries a signed token
naming the game and the seat (signed with the server key and the seat's secret: it stops working
when the seat is given to someone else). The feed has one VEVENT per open timeout of the seat:
UID stable per deadline row (game, decision, seat, kind), DTSTART the due time (which moves when
quiet hours, away dates or a pause move it), SUMMARY naming the game and the decision, URL the
game page. Written with the ``icalendar`` package; a GET changes nothing.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from flask import Blueprint, Response, current_app, request, url_for
from icalendar import Calendar, Event

from app.core.config import Settings
from app.core.i18n import translate
from app.core.models import ACTIVE
from app.features.clock.timekeeper import install as install_timekeeper
from app.games.ui import game_ui
from app.service import LinkSeat
from app.web.browser_seats import service
from app.web.linkchecks import seat_of_token
from app.web.linktokens import LinkError, make_calendar_token, read_calendar_token
from app.web.linkwords import Refused, link_language, refused_page

calendar_feed = Blueprint("calendar", __name__)

PRODID = "-//Titan Post//deadlines//EN"


def calendar_url(settings: Settings, seat_secret: str, uid: str, position: int) -> str:
    """The feed's address for a seat (shown on its settings page)."""
    token = make_calendar_token(settings.secret_key, seat_secret, uid, position)
    return f"{settings.base_url}/games/{uid}/me/deadlines.ics?token={token}"


def _settings() -> Settings:
    settings: Settings = current_app.extensions["titanpost.settings"]
    return settings


def _verified(uid: str, token: str) -> LinkSeat:
    token_uid, seat = seat_of_token(token)
    lang = link_language(seat.language)
    try:
        game, position = read_calendar_token(token, _settings().secret_key, seat.secret)
    except LinkError as exc:
        raise Refused(exc.reason, uid=token_uid, lang=lang) from None
    if game != token_uid or game != uid or position != seat.position:
        raise Refused("forged", uid=token_uid, lang=lang)
    return seat


@calendar_feed.get("/games/<uid>/me/deadlines.ics")
def deadlines_ics(uid: str) -> Any:
    """The seat's open deadlines as ``text/calendar``."""
    try:
        seat = _verified(uid, request.args.get("token", ""))
    except Refused as refusal:
        page, status = refused_page(refusal)
        return Response(page, status, headers={"Cache-Control": "no-store"},
                        mimetype="text/html")
    body = feed(seat).to_ical()
    return Response(body, 200, mimetype="text/calendar", headers={
        "Cache-Control": "no-store", "Referrer-Policy": "no-referrer",
        "Content-Disposition": f'inline; filename="titanpost-{uid[:8]}.ics"'})


def feed(seat: LinkSeat) -> Calendar:
    """The calendar of the seat's open timeouts."""
    lang = link_language(seat.language)
    game_name = seat.game_name or f"#{seat.game[:8]}"
    calendar = Calendar()
    calendar.add("prodid", PRODID)
    calendar.add("version", "2.0")
    calendar.add("x-wr-calname", translate(lang, "Titan Post: {game}", game=game_name))
    if seat.status != ACTIVE:
        return calendar
    decision = _decision_words(seat, lang)
    page = f"{_settings().base_url}{url_for('play.game', uid=seat.game)}"
    now = datetime.now(UTC)
    for row in install_timekeeper(service()).open_timeouts_of(seat.game, seat.position):
        event = Event()
        event.add("uid", f"{seat.game}.{row['seq']}.{seat.position}.{row['kind']}"
                         f"@{_settings().mail_domain}")
        event.add("dtstamp", now)
        # iCalendar counts in whole seconds: the event starts at the deadline's second
        event.add("dtstart", row["due_at"].astimezone(UTC).replace(microsecond=0))
        event.add("summary", translate(lang, "{game} \u2013 your deadline: {decision}",
                                       game=game_name, decision=decision))
        event.add("url", page)
        calendar.add_component(event)
    return calendar


def _decision_words(seat: LinkSeat, lang: str) -> str:
    with service().session() as s:
        loaded = service().load(s, seat.game)
        pending = loaded.rules.pending(loaded.state) if loaded.state is not None else None
    return game_ui(seat.ruleset).describe_decision(pending, lang)
