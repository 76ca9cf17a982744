"""The clock's JSON API: pause and resume a game, its deadlines, a seat's quiet hours and
settings (reminders, deadlines, standing choices), a player's absences."""


from __future__ import annotations

from typing import Any

from apiflask import APIBlueprint
from sqlmodel import select

from app.core.models import Game
from app.features.clock.arithmetic import ClockSettings
from app.features.clock.playersettings import SettingsChange
from app.service import (
    Forbidden,
    NotFound,
)
from app.web.api.access import (
    CREATOR,
    creator_token,
    idempotent,
    keeper,
    optional_seat,
    replayable,
    seat_auth,
    seat_in,
    service,
)
from app.web.api.schemas import GAME_VARIANTS as GAME_VARIANTS  # (the CLI's choices)
from app.web.api.schemas import GAMES as GAMES
from app.web.api.schemas import (
    AbsencesOut,
    AddedAbsenceOut,
    AwayIn,
    DeadlinesOut,
    PauseIn,
    QuietIn,
    QuietOut,
    SettingsIn,
    SettingsOut,
    answers,
)
from app.web.idempotency import (
    Claim,
)

bp = APIBlueprint("clock_api", __name__, url_prefix="/api", tag="Clock")

# ---------------------------------------------------------------------- the clock


@bp.post("/games/<uid>/pause")
@bp.input(PauseIn, arg_name="body")
@bp.doc(summary="Pause the game", description="Creator only (X-Creator-Token). The clock "
        "stops and no moves are taken until the game is resumed; the players are told.",
        security=CREATOR, responses=answers(200, 400, 401, 403, 404, 409))
@replayable()
def pause(uid: str, body: dict[str, Any]) -> dict[str, Any]:
    return service().pause(uid, creator_token(), reason=body["reason"].strip())


@bp.post("/games/<uid>/resume")
@bp.doc(summary="Resume a paused game", description="Creator only. Open deadlines move on by "
        "the length of the pause.", security=CREATOR,
        responses=answers(200, 400, 401, 403, 404, 409))
@replayable()
def resume(uid: str) -> dict[str, Any]:
    return service().resume(uid, creator_token())


@bp.get("/games/<uid>/deadlines")
@bp.output(DeadlinesOut)
@bp.doc(summary="The clock", description="The open deadlines (timeouts and reminders, due "
        "times in UTC), the clock settings in effect, whether the game is paused, and each "
        "seat's time bank and missed deadlines. For the game's seats (Bearer token) and, when "
        "the game allows them, spectators.", security=[{}, {"SeatToken": []}],
        responses=answers(200, 401, 403, 404))
def deadlines(uid: str) -> dict[str, Any]:
    summary = service().state(uid, optional_seat(uid))["game"]
    with service().session() as s:
        game = s.exec(select(Game).where(Game.uid == uid)).one()
        settings = dict(game.settings)
        # the seat rows as they are now (banks and missed deadlines change with the clock)
        seats = {seat.position: seat for seat in service().seats(s, game)}
    for row in summary["seats"]:
        seat = seats[row["position"]]
        row["bank_seconds"], row["missed_deadlines"] = seat.bank_seconds, seat.missed_deadlines
    return {
        **summary,
        "clock": ClockSettings.of(settings).in_effect(),
        "deadlines": keeper().deadlines_of(uid) if summary["status"] == "active" else [],
    }


@bp.put("/games/<uid>/me/quiet")
@bp.auth_required(seat_auth)
@bp.input(QuietIn, arg_name="body")
@bp.output(QuietOut)
@bp.doc(summary="Set my quiet hours", description="Quiet hours and time zone of the token's "
        "seat (both replaced; null clears). A deadline that would end in them moves to their "
        "end, and no reminder is sent in them.",
        responses=answers(200, 400, 401, 403, 404, 409))
def set_quiet(uid: str, body: dict[str, Any]) -> dict[str, Any]:
    position = seat_in(uid)
    prefs = keeper().set_quiet_hours(uid, position, body["quiet"], body["timezone"])
    return {"game": uid, "position": position, "quiet": prefs.get("quiet"),
            "timezone": prefs.get("timezone")}


@bp.get("/games/<uid>/me/settings")
@bp.auth_required(seat_auth)
@bp.output(SettingsOut)
@bp.doc(summary="My settings", description="The token's seat's own settings: mail, language, "
        "quiet hours and time zone.", responses=answers(200, 401, 403, 404))
def my_settings(uid: str) -> dict[str, Any]:
    return keeper().settings_of(uid, seat_in(uid))


SETTINGS_DOC = ("Change the token's seat's own settings (only those given). Bad values are "
                "refused with 400 and change nothing. Answers the settings now in force.")


@bp.post("/games/<uid>/me/settings")
@bp.auth_required(seat_auth)
@bp.input(SettingsIn, arg_name="body")
@bp.output(SettingsOut)
@bp.doc(summary="Change my settings", description=SETTINGS_DOC,
        responses=answers(200, 400, 401, 403, 404))
@replayable()
def change_settings(uid: str, body: dict[str, Any]) -> dict[str, Any]:
    return keeper().change_settings(uid, seat_in(uid), SettingsChange(**body))


@bp.patch("/games/<uid>/me/settings")
@bp.auth_required(seat_auth)
@bp.input(SettingsIn, arg_name="body")
@bp.output(SettingsOut)
@bp.doc(summary="Change my settings (PATCH)", description=SETTINGS_DOC,
        responses=answers(200, 400, 401, 403, 404))
def patch_settings(uid: str, body: dict[str, Any]) -> dict[str, Any]:
    return keeper().change_settings(uid, seat_in(uid), SettingsChange(**body))


def _my_email() -> str:
    seat = seat_auth.current_user
    assert seat is not None
    email = str(seat["email"])
    if not email:
        raise Forbidden("this seat has no e-mail address: away dates belong to a player's address")
    return email


@bp.get("/away")
@bp.auth_required(seat_auth)
@bp.output(AbsencesOut)
@bp.doc(summary="My away dates", description="The away dates of the token's address, for all "
        "its games (cancelled ones are not listed).", responses=answers(200, 401, 403))
def list_away() -> dict[str, Any]:
    email = _my_email()
    return {"email": email, "absences": keeper().absences(email)}


@bp.post("/away")
@bp.auth_required(seat_auth)
@bp.input(AwayIn, arg_name="body")
@bp.output(AddedAbsenceOut, status_code=201)
@bp.doc(summary="Add away dates", description="For every game of the token's address: in "
        "stretch mode the deadlines stretch over the absence; in computer mode the computer "
        "plays for you meanwhile. The other players are told.",
        responses=answers(201, 400, 401, 403))
@idempotent(201)
def add_away(body: dict[str, Any], answer: Claim | None) -> dict[str, Any]:
    return keeper().set_absence(_my_email(), body["starts"], body["until"], body["mode"],
                                idempotency=answer)


@bp.delete("/away/<int:absence_id>")
@bp.auth_required(seat_auth)
@bp.doc(summary="Cancel away dates", description="Your deadlines are computed without them "
        "again.", responses=answers(200, 400, 401, 403, 404))
def cancel_away(absence_id: int) -> dict[str, Any]:
    email = _my_email()
    if absence_id not in {a["id"] for a in keeper().absences(email)}:
        raise NotFound(f"you have no away dates {absence_id} (GET /api/away lists yours)")
    keeper().cancel_absence(email, absence_id)
    return {"id": absence_id, "cancelled": True}
