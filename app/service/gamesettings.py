"""A game's settings (its clock and spectator access) and a player's quiet hours, checked as a
request gives them."""

from __future__ import annotations

from typing import Any

from app.features.clock.arithmetic import (
    HANDOVERS,
    TIMEOUT_ACTIONS,
    ClockError,
    ClockSettings,
    Quiet,
    check_reminders,
    zone,
)

from .errors import BadRequest

GAME_SETTINGS: dict[str, tuple[type, Any, Any]] = {
    "deadline_hours": (int, 0, 24 * 30),
    "reaction_hours": (int, 1, 24 * 30),
    "bank_hours": (int, 0, 24 * 30),
    "increment_hours": (int, 0, 24 * 7),
    "reminders": (list, None, None),
    "on_timeout": (str, (*TIMEOUT_ACTIONS, "default"), None),
    "max_missed": (int, 0, 50),
    "after_missed": (str, HANDOVERS, None),
    "spectators": (bool, None, None),
}
"""Per-game options: the clock (see app.features.clock.arithmetic.SETTINGS_HELP; "default" is the
older name of the "pass" timeout action) and spectator access."""


def check_game_settings(settings: Any) -> dict[str, Any]:
    if not isinstance(settings, dict):
        raise BadRequest("settings must be an object")
    unknown = sorted(set(settings) - set(GAME_SETTINGS))
    if unknown:
        raise BadRequest(f"unknown setting {', '.join(unknown)}; the settings are "
                         f"{', '.join(GAME_SETTINGS)}")
    for key, value in settings.items():
        kind, low, high = GAME_SETTINGS[key]
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            raise BadRequest(f"setting {key} must be a {kind.__name__}")
        if kind is int and not low <= value <= high:
            raise BadRequest(f"setting {key} must be between {low} and {high}")
        if kind is str and value not in low:
            raise BadRequest(f"setting {key} must be one of {', '.join(low)}")
    checked = dict(settings)
    try:
        if "reminders" in checked:
            checked["reminders"] = check_reminders(checked["reminders"])
        clock = ClockSettings.of(checked)
    except ClockError as exc:
        raise BadRequest(str(exc), words=exc.words) from None
    if clock.deadline is not None and clock.reaction > clock.deadline:
        raise BadRequest("reaction_hours must not be longer than deadline_hours")
    return checked


def check_quiet(quiet: Any, timezone: Any) -> dict[str, str]:
    """A player's clock preferences (quiet hours and time zone), checked."""
    if quiet is not None and not isinstance(quiet, str):
        raise BadRequest("quiet hours must be text such as 22:00-08:00")
    if timezone is not None and not isinstance(timezone, str):
        raise BadRequest("the time zone must be a name such as Europe/Warsaw")
    try:
        Quiet.parse(quiet or None, timezone or None)
        if timezone:
            zone(timezone)
    except ClockError as exc:
        raise BadRequest(str(exc), words=exc.words) from None
    prefs: dict[str, str] = {}
    if quiet:
        prefs["quiet"] = quiet.replace(" ", "")
    if timezone:
        prefs["timezone"] = timezone
    return prefs

