"""A player's own settings of a seat (mail, language, quiet hours) and their away dates; and
the games of the address a browser signed in as by mail (shown on /games)."""

from __future__ import annotations

from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from flask import (
    current_app,
    flash,
    g,
    redirect,
    render_template,
    request,
    url_for,
)
from flask.typing import ResponseReturnValue

from app.core.i18n import LANGUAGES, N_, language_name
from app.core.models import ACTIVE, Game, Seat
from app.features.calendar.feed import calendar_url
from app.features.clock.keeperbase import ABSENCE_MODES
from app.features.clock.playersettings import SettingsChange, seat_settings
from app.features.delivery.table import address_state, ask_test_mail
from app.features.signin.signins import account_games, account_pending
from app.games import ruleset
from app.games.placings import place_words
from app.games.ui import game_ui
from app.mail.notify import MAIL_MODES
from app.service import (
    Forbidden,
    NotFound,
    ServiceError,
)
from app.web.api.access import keeper
from app.web.browser_seats import seat_in, service, signed_in
from app.web.pages.common import (
    FormProblem,
    game_rows,
    local_time,
    page_blueprint,
    time_zones,
    utc_time,
)
from app.web.pages.language import (
    lang,
    pick_lang,
    tr,
)

bp = page_blueprint("me")


# ---------------------------------------------------------------------------- away and quiet


def browser_seat(uid: str) -> tuple[Game, Seat]:
    """This browser's seat in game ``uid`` (403 without one); sets the page language."""
    game_row, seat_list = game_rows(uid)
    position = seat_in(uid)
    seat = next((s for s in seat_list if s.position == position), None)
    g.lang = pick_lang(seat.language if seat is not None else None)
    if seat is None:
        raise Forbidden(tr("this browser has no seat in this game: join from your invitation "
                           "or open the game from the link in your mail"))
    if not seat.email:
        raise Forbidden(tr("this seat has no player's address: away dates and quiet hours "
                           "belong to a player"))
    return game_row, seat


def _me_context(game_row: Game, seat: Seat) -> dict[str, Any]:
    prefs = seat.notify or {}
    zone_name = prefs.get("timezone") or None
    shown_zone = zone_name or "UTC"
    absences = []
    for absence in keeper().absences(seat.email):
        absences.append({
            **absence,
            "from_text": local_time(absence["from"], shown_zone),
            "until_text": local_time(absence["until"], shown_zone),
            "mode_words": tr(AWAY_MODE_WORDS.get(absence["mode"], absence["mode"])),
        })
    return {
        "game": game_row,
        "seat": seat,
        "quiet": prefs.get("quiet") or "",
        "timezone": zone_name or "",
        "shown_zone": shown_zone,
        "absences": absences,
        "modes": [(m, tr(AWAY_MODE_WORDS.get(m, m))) for m in ABSENCE_MODES],
        "zones": time_zones(),
        "form": {},
        "settings": seat_settings(game_row, seat),
        "calendar_url": calendar_url(current_app.extensions["titanpost.settings"], seat.secret,
                                     game_row.uid, seat.position),
        "mail_modes": [(m, tr(MAIL_MODE_WORDS[m])) for m in MAIL_MODES],
        "reaction_choices": _reaction_choices(game_row),
        "languages": [(code, language_name(code)) for code in LANGUAGES],
        "mail_state": mail_state_words(game_row.uid, seat, shown_zone),
    }


def mail_state_words(uid: str, seat: Seat, zone_name: str) -> dict[str, Any]:
    """The state of the seat's address (app/features/delivery/table.py) with its times in
    words: UTC, and the seat's own zone beside."""
    state = address_state(service(), uid, seat.position)

    def when(key: str) -> str | None:
        stamp = state.get(key)
        if not stamp:
            return None
        local = local_time(stamp, zone_name) if zone_name != "UTC" else None
        return utc_time(stamp) + (f" ({local})" if local else "")

    return state | {key + "_text": when(key) for key in (
        "last_delivered_at", "last_bounce_at", "undeliverable_since", "test_mail_at")}


def _reaction_choices(game_row: Game) -> list[tuple[str, str]]:
    """The game's standing choices for a seat's windows, with their words."""
    ui = game_ui(game_row.ruleset)
    return [(choice, ui.standing_choice(choice, lang()))
            for choice in ruleset(game_row.ruleset).standing_choices]


MAIL_MODE_WORDS = {
    "every": N_("every mail: each decision of mine, reminders and news"),
    "digest": N_("a daily digest instead of a mail per decision"),
    "none": N_("no mail: only the result and a notice should my seat be handed over"),
}
"""The seat's mail settings in words (English message ids; shown translated)."""
AWAY_MODE_WORDS = {
    "stretch": N_("my deadlines stretch over the absence"),
    "computer": N_("the computer plays for me meanwhile"),
}
"""What happens to a player's deadlines while away (English message ids)."""


def _me_refused(game_row: Game, seat: Seat, exc: ServiceError | FormProblem,
                form: dict[str, Any]) -> ResponseReturnValue:
    message = exc.say(lang()) if isinstance(exc, ServiceError) else str(exc)
    status = exc.status if isinstance(exc, ServiceError) else 400
    context = _me_context(game_row, seat)
    context["form"] = form
    return render_template("pages/me.html", error=message, **context), status


@bp.get("/games/<uid>/me")
def me(uid: str) -> ResponseReturnValue:
    game_row, seat = browser_seat(uid)
    return render_template("pages/me.html", **_me_context(game_row, seat))


@bp.post("/games/<uid>/me/settings")
def change_settings(uid: str) -> ResponseReturnValue:
    game_row, seat = browser_seat(uid)
    form = request.form.to_dict()
    try:
        change = SettingsChange(
            mail=form.get("mail") or None,
            language=form.get("language") or None,
            anytime_windows=_checkbox(form, "anytime_windows"),
            reactions=form.get("reactions") or None,
            everywhere=form.get("everywhere") == "1",
        )
        keeper().change_settings(uid, seat.position, change)
    except ServiceError as exc:
        return _me_refused(game_row, seat, exc, form)
    g.lang = pick_lang(change.language or seat.language)
    flash(tr("Your settings are saved."), "ok")
    return redirect(url_for("me.me", uid=uid), 303)


def _checkbox(form: dict[str, str], name: str) -> bool | None:
    """A checkbox shown with a hidden ``<name>_shown`` field: None when the form had none."""
    if f"{name}_shown" not in form:
        return None
    return form.get(name) == "1"


@bp.post("/games/<uid>/me/token")
def issue_token(uid: str) -> ResponseReturnValue:
    """A new API token of this browser's seat, for the player's scripts: shown once, here."""
    _, seat = browser_seat(uid)
    issued = service().issue_api_token(uid, seat.position)
    flash(tr("Your seat's API token, for programs (shown once): {token}",
             token=issued["api_token"]), "token")
    return redirect(url_for("me.me", uid=uid, _anchor="api-token"), 303)


@bp.post("/games/<uid>/me/test-mail")
def test_mail(uid: str) -> ResponseReturnValue:
    """The player asks for a test mail: their address is tried again (see
    app/features/delivery/table.py)."""
    game_row, seat = browser_seat(uid)
    try:
        asked = ask_test_mail(service(), uid, seat.position)
    except ServiceError as exc:
        return _me_refused(game_row, seat, exc, {})
    flash(tr("A test mail is on its way to {address}. Mail to your address is tried again.",
             address=asked["address"]), "ok")
    return redirect(url_for("me.me", uid=uid, _anchor="mail-state"), 303)


@bp.post("/games/<uid>/me/quiet")
def set_quiet(uid: str) -> ResponseReturnValue:
    game_row, seat = browser_seat(uid)
    quiet = request.form.get("quiet", "").strip()
    zone_name = request.form.get("timezone", "").strip()
    try:
        keeper().set_quiet_hours(uid, seat.position, quiet or None, zone_name or None)
    except ServiceError as exc:
        return _me_refused(game_row, seat, exc, request.form.to_dict())
    if quiet:
        flash(tr("Your quiet hours are {quiet} ({zone}).", quiet=quiet.replace(" ", ""),
                 zone=zone_name or "UTC"), "ok")
    else:
        flash(tr("You have no quiet hours now."), "ok")
    return redirect(url_for("me.me", uid=uid), 303)


def _form_time(value: str, zone_name: str, label: str) -> datetime:
    """A date-time field (``2025-07-01T08:00``) read in the seat's time zone."""
    try:
        moment = datetime.fromisoformat(value.strip())
    except ValueError:
        raise FormProblem(tr("{label}: give a date and time such as 2025-07-01 08:00",
                             label=tr(label))) from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=ZoneInfo(zone_name))
    return moment


@bp.post("/games/<uid>/me/away")
def add_away(uid: str) -> ResponseReturnValue:
    game_row, seat = browser_seat(uid)
    zone_name = (seat.notify or {}).get("timezone") or "UTC"
    form = request.form.to_dict()
    try:
        starts = _form_time(form.get("from", ""), zone_name, N_("From"))
        ends = _form_time(form.get("until", ""), zone_name, N_("Until"))
        absence = keeper().set_absence(seat.email, starts, ends, form.get("mode", ""))
    except (ServiceError, FormProblem) as exc:
        return _me_refused(game_row, seat, exc, form)
    flash(tr("Away from {start} until {end}: your co-players are told.",
             start=local_time(absence["from"], zone_name),
             end=local_time(absence["until"], zone_name)), "ok")
    return redirect(url_for("me.me", uid=uid), 303)


@bp.post("/games/<uid>/me/away/<int:absence_id>/cancel")
def cancel_away(uid: str, absence_id: int) -> ResponseReturnValue:
    _, seat = browser_seat(uid)
    if absence_id not in {a["id"] for a in keeper().absences(seat.email)}:
        raise NotFound(tr("you have no such away dates (they may have been cancelled already)"))
    keeper().cancel_absence(seat.email, absence_id)
    flash(tr("The away dates are cancelled."), "ok")
    return redirect(url_for("me.me", uid=uid), 303)


# ---------------------------------------------------------------------------- signed-in games


def account_listing() -> dict[str, Any]:
    """What /games shows of the address this browser signed in as (app/features/signin/signins.py):
    the invitations it has not taken yet (each with a button that takes the seat), the rematches
    it has a seat of that have not started (waiting for its yes, with the button, or for
    others: who), and every game of both games in which it holds a seat, whose turn it is, the
    seat's next deadline and a button that plays the seat in this browser. Empty when not
    signed in."""
    account = signed_in()
    if account is None:
        return {"account": None, "account_games": [], "invitations": [], "rematches": []}
    pending = account_pending(service(), account.email)
    rematches = [_named(row) for row in pending["rematches"]]
    listed = {row["game"] for row in rematches}
    rows = []
    for row in account_games(service(), account.email):
        if row["game"] in listed:  # (shown with the rematches, waiting)
            continue
        rows.append(_named(row) | {
            "turn": _turn_words(row),
            "deadline_text": local_time(row["deadline"], row["timezone"]),
            **finished_words(row["ruleset"], row["winner"], row["place"]),
        })
    return {"account": account, "account_games": rows,
            "invitations": [_named(row) for row in pending["invitations"]],
            "rematches": rematches}


def _named(row: dict[str, Any]) -> dict[str, Any]:
    """A listed game's row with its name, game and variant in words."""
    ui = game_ui(row["ruleset"])
    return row | {"name": row["name"] or f"{tr('Game')} {row['game'][:8]}",
                  "title": tr(ui.title), "variant": ui.variant_name(row["variant"], lang())}


def finished_words(game_name: str, winner: str | None,
                   place: dict[str, Any] | None) -> dict[str, str | None]:
    """A finished game's result in a row of My games: ``winner``, the winning pieces by name,
    and ``place``, the reader's own place in words (None for a game not over)."""
    ui = game_ui(game_name)
    return {
        "winner": ", ".join(ui.piece_name(piece, lang()) for piece in str(winner).split(",")
                            if piece) if winner else None,
        "place": place_words(place, ui, lang()) if place else None,
    }


def _turn_words(row: dict[str, Any]) -> str:
    if row["your_turn"]:
        return tr("yours")
    if row["status"] == ACTIVE and row["paused"]:
        return tr("paused")
    if row["status"] == ACTIVE:
        return ", ".join(row["to_act_names"])
    return ""
