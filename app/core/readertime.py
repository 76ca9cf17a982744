"""The times of a game's chat and log as their reader reads them: the wall clock of the
reader's time zone (a seat's setting, ``notify.timezone``: /me, ``titanpost settings
--zone``), the zone named, ``2026-11-27 15:30 Europe/Warsaw``; UTC, named too, for a reader
without one (a spectator, a seat that never set it). Pages, mails and the terminal client
all write them this way."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError


def zone_of(notify: Any) -> str | None:
    """The time zone a seat's settings name (None: none set, or not a zone)."""
    name = notify.get("timezone") if isinstance(notify, dict) else None
    return name if isinstance(name, str) and _zone(name) is not None else None


def _zone(name: str | None) -> ZoneInfo | None:
    if not name or not name.strip():
        return None
    try:
        return ZoneInfo(name.strip())
    except (ZoneInfoNotFoundError, ValueError):
        return None


def reader_time(stamp: Any, zone_name: str | None) -> str:
    """``stamp`` (a datetime or an ISO string; without an offset it is UTC) on the clock of
    ``zone_name``, the zone named: UTC when the zone is unset or unknown. An unreadable stamp is
    given back as it is."""
    if isinstance(stamp, datetime):
        moment = stamp
    else:
        try:
            moment = datetime.fromisoformat(str(stamp).strip().replace("Z", "+00:00"))
        except ValueError:
            return "" if stamp is None else str(stamp)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    zone = _zone(zone_name)
    if zone is None:
        return f"{moment.astimezone(UTC):%Y-%m-%d %H:%M} UTC"
    return f"{moment.astimezone(zone):%Y-%m-%d %H:%M} {zone.key}"
