"""The game clock's arithmetic: deadlines, reminder points, quiet hours, away time, time banks.

Pure functions of their arguments (no database, no current time): the scheduler
(:mod:`app.features.clock.timekeeper`) gives them the moments and stores what they compute. A
decision is allowed some seconds of the player's time; time the player is away (a vacation in
``stretch`` mode) does not count, and a deadline that would fall in the player's quiet hours moves
to the end of them, so nobody times out in their sleep."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from app.core.i18n import N_

Interval = tuple[datetime, datetime]
"""A stretch of time [start, end)."""

HOUR = 3600
DEFAULT_DEADLINE_HOURS = 48
DEFAULT_REACTION_HOURS = 12
DEFAULT_REMINDERS = ("50%", "2h")
TIMEOUT_ACTIONS = ("bot", "pass", "pause")
HANDOVERS = ("computer", "invite")

_POINT = re.compile(r"^(?:(?P<percent>[1-9][0-9]?)%|(?P<hours>[0-9]{1,3})h)$")
_QUIET = re.compile(r"^(?P<h1>[01]?[0-9]|2[0-3])(?::(?P<m1>[0-5][0-9]))?-"
                    r"(?P<h2>[01]?[0-9]|2[0-3])(?::(?P<m2>[0-5][0-9]))?$")


class ClockError(ValueError):
    """A clock setting that cannot be used; the message says which and why.

    ``text`` is a catalogue message (English) and ``fields`` fill it: the error's message is
    the English, ``words`` the pair a page puts in its reader's language."""

    def __init__(self, text: str, /, **fields: Any) -> None:
        super().__init__(text.format(**fields))
        self.words: tuple[str, dict[str, Any]] = (text, fields)


def aware(moment: datetime) -> datetime:
    """``moment`` as an aware UTC time (SQLite gives naive UTC values back)."""
    if moment.tzinfo is None:
        return moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC)


@dataclass(frozen=True)
class ReminderPoint:
    """When to remind: after a share of the allowed time (``50%``) or some hours before the
    deadline (``2h``)."""

    text: str
    share: float | None
    before: timedelta | None

    @classmethod
    def parse(cls, text: str) -> ReminderPoint:
        match = _POINT.match(text.strip().lower()) if isinstance(text, str) else None
        if match is None:
            raise ClockError(
                N_("reminder point '{point}' is neither a share of the time ('50%') nor hours "
                   "before the deadline ('2h')"), point=text)
        if match["percent"]:
            return cls(text.strip().lower(), int(match["percent"]) / 100, None)
        hours = int(match["hours"])
        if hours < 1:
            raise ClockError(N_("a reminder point in hours must be at least 1h"))
        return cls(text.strip().lower(), None, timedelta(hours=hours))

    def moment(self, opened: datetime, due: datetime) -> datetime:
        if self.share is not None:
            return opened + (due - opened) * self.share
        assert self.before is not None
        return due - self.before


_CLOCK_KEYS = ("deadline_hours", "reaction_hours", "on_timeout", "bank_hours",
               "increment_hours", "reminders", "max_missed", "after_missed")
"""The settings :meth:`ClockSettings.of` reads."""
_UNSET = object()
_CLOCKS: dict[tuple[Any, ...], ClockSettings] = {}
_CLOCKS_KEPT = 256


def _hashable(value: Any) -> Any:
    """``value`` as a key: a list as a tuple of its items' keys, with each item's type (1 and
    "1" are told apart: the parsing may refuse one and take the other)."""
    if isinstance(value, list | tuple):
        return (type(value), tuple(_hashable(item) for item in value))
    if isinstance(value, dict):
        return (dict, tuple(sorted((str(k), _hashable(v)) for k, v in value.items())))
    return (type(value), value)


@dataclass(frozen=True)
class ClockSettings:
    """A game's clock, read from its settings (see :data:`SETTINGS_HELP` for each key)."""

    deadline: timedelta | None
    reaction: timedelta
    bank: timedelta
    increment: timedelta
    reminders: tuple[ReminderPoint, ...]
    on_timeout: str
    max_missed: int
    after_missed: str

    @classmethod
    def of(cls, settings: Mapping[str, Any]) -> ClockSettings:
        """The clock of a game's ``settings`` (read once per set of values a process meets:
        a move asks several times, and parsing them cost more than the move's clock work)."""
        key = tuple(_hashable(settings.get(name, _UNSET)) for name in _CLOCK_KEYS)
        made = _CLOCKS.get(key)
        if made is None:
            made = cls._parsed(settings)
            if len(_CLOCKS) >= _CLOCKS_KEPT:
                _CLOCKS.clear()
            _CLOCKS[key] = made
        return made

    @classmethod
    def _parsed(cls, settings: Mapping[str, Any]) -> ClockSettings:
        hours = int(settings.get("deadline_hours", DEFAULT_DEADLINE_HOURS))
        deadline = timedelta(hours=hours) if hours > 0 else None
        reaction_hours = int(settings.get("reaction_hours",
                                          min(DEFAULT_REACTION_HOURS, max(hours, 1))))
        action = str(settings.get("on_timeout", "bot"))
        return cls(
            deadline=deadline,
            reaction=timedelta(hours=reaction_hours),
            bank=timedelta(hours=int(settings.get("bank_hours", 0))),
            increment=timedelta(hours=int(settings.get("increment_hours", 0))),
            reminders=tuple(ReminderPoint.parse(p)
                            for p in settings.get("reminders", DEFAULT_REMINDERS)),
            on_timeout="pass" if action == "default" else action,
            max_missed=int(settings.get("max_missed", 0)),
            after_missed=str(settings.get("after_missed", "computer")),
        )

    @property
    def running(self) -> bool:
        """Whether decisions have deadlines at all (``deadline_hours`` 0 turns the clock off)."""
        return self.deadline is not None

    def allowance(self, quick: bool, bank_seconds: int | None) -> tuple[int, int]:
        """(the decision's own time, that plus the seat's time bank) in seconds. A quick
        decision (out of turn: the game's ruleset says which, ``clock_kind``) gets the shorter
        reaction time and no time bank."""
        if quick:
            return int(self.reaction.total_seconds()), int(self.reaction.total_seconds())
        assert self.deadline is not None
        base = int(self.deadline.total_seconds())
        return base, base + max(0, bank_seconds or 0)

    def in_effect(self) -> dict[str, Any]:
        """The settings as they apply, defaults filled in, in the form they are given in (for
        the API and the pages; ``running`` false: no clock)."""

        def hours(span: timedelta) -> int:
            return int(span.total_seconds() // HOUR)

        return {
            "running": self.running,
            "deadline_hours": hours(self.deadline) if self.deadline is not None else 0,
            "reaction_hours": hours(self.reaction),
            "bank_hours": hours(self.bank),
            "increment_hours": hours(self.increment),
            "reminders": [point.text for point in self.reminders],
            "on_timeout": self.on_timeout,
            "max_missed": self.max_missed,
            "after_missed": self.after_missed,
        }

    def initial_bank(self) -> int | None:
        seconds = int(self.bank.total_seconds())
        return seconds if seconds > 0 or self.increment else None


def check_reminders(value: Any) -> list[str]:
    if not isinstance(value, list) or len(value) > 5:
        raise ClockError(N_("reminders must be a list of at most 5 points such as '50%' or "
                            "'2h'"))
    return [ReminderPoint.parse(point).text for point in value]


@dataclass(frozen=True)
class Quiet:
    """A player's quiet hours in their time zone, e.g. 22:00-08:00 in Europe/Warsaw."""

    zone: ZoneInfo
    start: time
    end: time

    @classmethod
    def parse(cls, spec: str | None, zone_name: str | None) -> Quiet | None:
        if not spec:
            return None
        match = _QUIET.match(spec.replace(" ", ""))
        if match is None:
            raise ClockError(N_("quiet hours '{spec}' should look like 22:00-08:00"), spec=spec)
        start = time(int(match["h1"]), int(match["m1"] or 0))
        end = time(int(match["h2"]), int(match["m2"] or 0))
        if start == end:
            raise ClockError(N_("quiet hours must not start and end at the same time"))
        return cls(zone(zone_name or "UTC"), start, end)

    def end_of(self, moment: datetime) -> datetime | None:
        """The moment quiet hours around ``moment`` end, or None if ``moment`` is not quiet."""
        local = aware(moment).astimezone(self.zone)
        clock = local.time().replace(tzinfo=None)
        overnight = self.start > self.end
        inside = (clock >= self.start or clock < self.end) if overnight else (
            self.start <= clock < self.end)
        if not inside:
            return None
        day = local.date()
        if overnight and clock >= self.start:
            day = day + timedelta(days=1)
        naive = datetime.combine(day, self.end)
        return naive.replace(tzinfo=self.zone).astimezone(UTC)


def zone(name: str) -> ZoneInfo:
    try:
        if len(name) > MAX_ZONE_NAME:  # (a file name the system refuses: OSError)
            raise ValueError(name)
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        shown = name if len(name) <= MAX_ZONE_NAME else name[:MAX_ZONE_NAME] + "..."
        raise ClockError(N_("'{zone}' is not a time zone (use a name like Europe/Warsaw)"),
                         zone=shown) from None


MAX_ZONE_NAME = 64
"""The longest time zone name taken (the longest IANA name has 32 characters)."""


def merge(intervals: Iterable[Interval]) -> list[Interval]:
    """Sorted, non-overlapping intervals covering the same time."""
    result: list[Interval] = []
    for start, end in sorted((aware(a), aware(b)) for a, b in intervals):
        if end <= start:
            continue
        if result and start <= result[-1][1]:
            result[-1] = (result[-1][0], max(result[-1][1], end))
        else:
            result.append((start, end))
    return result


def stretch(opened: datetime, seconds: float, away: Sequence[Interval]) -> datetime:
    """The moment ``seconds`` of the player's time have passed since ``opened``, not counting
    time inside ``away`` intervals."""
    moment = aware(opened)
    left = timedelta(seconds=seconds)
    for start, end in merge(away):
        if end <= moment:
            continue
        if start > moment:
            if moment + left <= start:
                break
            left -= start - moment
        moment = max(moment, end)
    return moment + left


def counted(opened: datetime, until: datetime, away: Sequence[Interval]) -> float:
    """Seconds of the player's time between ``opened`` and ``until`` (away time left out)."""
    start, end = aware(opened), aware(until)
    total = max(0.0, (end - start).total_seconds())
    for a, b in merge(away):
        overlap = (min(b, end) - max(a, start)).total_seconds()
        total -= max(0.0, overlap)
    return max(0.0, total)


def out_of_quiet(moment: datetime, quiet: Quiet | None) -> datetime:
    if quiet is None:
        return aware(moment)
    end = quiet.end_of(moment)
    return end if end is not None else aware(moment)


def deadline_at(opened: datetime, seconds: float, away: Sequence[Interval],
                quiet: Quiet | None) -> datetime:
    """When a decision opened at ``opened`` with ``seconds`` allowed times out."""
    return out_of_quiet(stretch(opened, seconds, away), quiet)


def reminder_at(point: ReminderPoint, opened: datetime, due: datetime,
                away: Sequence[Interval], quiet: Quiet | None) -> datetime | None:
    """When to send a reminder (moved out of away time and quiet hours), or None when that
    would not be before the deadline."""
    moment = point.moment(aware(opened), aware(due))
    for start, end in merge(away):
        if start <= moment < end:
            moment = end
    moment = out_of_quiet(moment, quiet)
    if moment >= aware(due) or moment <= aware(opened):
        return None
    return moment


def computer_from(opened: datetime, due: datetime,
                  computer_away: Sequence[Interval]) -> datetime | None:
    """The first moment from ``opened`` on, before ``due``, at which the player is away with
    the computer playing for them, or None."""
    for start, end in merge(computer_away):
        if end <= aware(opened):
            continue
        moment = max(start, aware(opened))
        return moment if moment < aware(due) else None
    return None


def bank_after(bank: int | None, base: int, used: float, increment: timedelta) -> int | None:
    """The time bank after a decision that took ``used`` seconds of ``base`` allowed."""
    if bank is None:
        return None
    over = max(0.0, used - base)
    return int(max(0.0, bank - over) + increment.total_seconds())


SETTINGS_HELP = {
    "deadline_hours": "hours a player has for a decision of their own turn (0: no clock); 48",
    "reaction_hours": "hours for an out-of-turn decision (reaction window, pirates); 12",
    "bank_hours": "a time bank each player can draw on when a turn takes longer; 0",
    "increment_hours": "hours added to the bank after each decision of one's own turn; 0",
    "reminders": "when to remind: shares of the time ('50%') or hours before ('2h'); 50%, 2h",
    "on_timeout": "bot (the computer moves), pass (pass what can be passed) or pause; bot",
    "max_missed": "missed deadlines after which the seat is handed over (0: never); 0",
    "after_missed": "computer (the computer plays on) or invite (the owner invites someone)",
}
