"""The clock's arithmetic (app/features/clock/arithmetic.py): pure functions, checked against worked
examples."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from app.features.clock.arithmetic import (
    DEFAULT_REMINDERS,
    ClockError,
    ClockSettings,
    Quiet,
    ReminderPoint,
    aware,
    bank_after,
    check_reminders,
    computer_from,
    counted,
    deadline_at,
    merge,
    out_of_quiet,
    reminder_at,
    stretch,
    zone,
)

T = datetime(2026, 1, 5, 12, 0, tzinfo=UTC)  # a Monday, no DST anywhere near
HOUR = timedelta(hours=1)


def h(hours: float) -> datetime:
    """T plus ``hours``."""
    return T + timedelta(hours=hours)


def utc(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


def away(*spans: tuple[float, float]) -> list[tuple[datetime, datetime]]:
    return [(h(a), h(b)) for a, b in spans]


# ---------------------------------------------------------------------- away time


@pytest.mark.parametrize(
    ("spans", "hours", "expected"),
    [
        ((), 48, 48),
        (((10, 20),), 48, 58),  # fully inside: moves by its length
        (((10, 20), (15, 30)), 48, 68),  # overlapping: counted once
        (((15, 30), (10, 20)), 48, 68),  # in any order
        (((10, 20), (20, 30)), 48, 68),  # touching
        (((10, 20), (12, 14)), 48, 58),  # one inside another
        (((10, 20), (30, 40)), 48, 68),  # two apart
        (((-5, 5),), 48, 53),  # begun before the decision opened: only the part after counts
        (((-10, -2),), 48, 48),  # over before it opened
        (((48, 60),), 48, 48),  # begins exactly at the deadline: no effect
        (((47, 60),), 48, 61),  # begins an hour before it: that hour comes after the away time
        (((60, 70),), 48, 48),  # after the deadline
        (((0, 48),), 48, 96),  # the whole allowance
        (((20, 10),), 48, 48),  # an empty interval (end before start) is ignored
    ],
)
def test_stretch_over_away_time(spans: tuple[tuple[float, float], ...], hours: float,
                                expected: float) -> None:
    assert stretch(T, hours * 3600, away(*spans)) == h(expected)


def test_stretch_takes_naive_utc_times() -> None:
    naive = T.replace(tzinfo=None)
    assert stretch(naive, 3600, [(naive + HOUR / 2, naive + 2 * HOUR)]) == h(2.5)


@pytest.mark.parametrize(
    ("spans", "until", "expected"),
    [
        ((), 48, 48),
        (((10, 20),), 48, 38),
        (((10, 20), (15, 30)), 48, 28),
        (((10, 20), (15, 30)), 58, 38),
        (((-5, 5),), 48, 43),
        (((40, 60),), 48, 40),
        (((60, 70),), 48, 48),
        (((0, 100),), 48, 0),
        ((), -3, 0),  # until before opened: nothing counted
    ],
)
def test_counted_leaves_away_time_out(spans: tuple[tuple[float, float], ...], until: float,
                                      expected: float) -> None:
    assert counted(T, h(until), away(*spans)) == pytest.approx(expected * 3600)


@pytest.mark.parametrize("spans", [(), ((10, 20),), ((10, 20), (15, 30)), ((-5, 5), (40, 41))])
def test_counted_undoes_stretch(spans: tuple[tuple[float, float], ...]) -> None:
    due = stretch(T, 48 * 3600, away(*spans))
    assert counted(T, due, away(*spans)) == pytest.approx(48 * 3600)


def test_merge() -> None:
    assert merge(away((10, 20), (15, 30), (40, 41), (5, 6), (41, 42), (3, 3))) == away(
        (5, 6), (10, 30), (40, 42))
    assert merge([]) == []


# ---------------------------------------------------------------------- quiet hours

WARSAW_NIGHT = Quiet.parse("22:00-08:00", "Europe/Warsaw")


@pytest.mark.parametrize(
    ("quiet", "zone_name", "moment", "expected"),
    [
        # winter, Warsaw is UTC+1: quiet 21:00-07:00 UTC
        ("22:00-08:00", "Europe/Warsaw", "2026-01-10T20:59", None),
        ("22:00-08:00", "Europe/Warsaw", "2026-01-10T21:00", "2026-01-11T07:00"),
        ("22:00-08:00", "Europe/Warsaw", "2026-01-10T22:30", "2026-01-11T07:00"),
        ("22:00-08:00", "Europe/Warsaw", "2026-01-10T23:30", "2026-01-11T07:00"),  # local 00:30
        ("22:00-08:00", "Europe/Warsaw", "2026-01-11T03:00", "2026-01-11T07:00"),
        ("22:00-08:00", "Europe/Warsaw", "2026-01-11T07:00", None),  # the end is not quiet
        # summer, UTC+2
        ("22:00-08:00", "Europe/Warsaw", "2026-07-01T21:00", "2026-07-02T06:00"),
        # spring forward (29 March 2026, 02:00 CET -> 03:00 CEST): the night is an hour shorter
        ("22:00-08:00", "Europe/Warsaw", "2026-03-28T21:30", "2026-03-29T06:00"),
        ("22:00-08:00", "Europe/Warsaw", "2026-03-28T23:30", "2026-03-29T06:00"),
        ("22:00-08:00", "Europe/Warsaw", "2026-03-29T01:30", "2026-03-29T06:00"),
        ("22:00-08:00", "Europe/Warsaw", "2026-03-29T06:00", None),
        # fall back (25 October 2026, 03:00 CEST -> 02:00 CET): an hour longer
        ("22:00-08:00", "Europe/Warsaw", "2026-10-24T20:00", "2026-10-25T07:00"),
        ("22:00-08:00", "Europe/Warsaw", "2026-10-25T00:30", "2026-10-25T07:00"),  # 02:30 CEST
        ("22:00-08:00", "Europe/Warsaw", "2026-10-25T01:30", "2026-10-25T07:00"),  # 02:30 CET
        ("22:00-08:00", "Europe/Warsaw", "2026-10-25T06:59", "2026-10-25T07:00"),
        ("22:00-08:00", "Europe/Warsaw", "2026-10-25T07:00", None),
        # a quiet end inside the skipped hour: the moment after the gap
        ("23:00-02:30", "Europe/Warsaw", "2026-03-28T23:00", "2026-03-29T01:30"),
        # daytime quiet hours, in UTC by default
        ("13:00-15:30", None, "2026-01-10T12:59", None),
        ("13:00-15:30", None, "2026-01-10T13:00", "2026-01-10T15:30"),
        ("13:00-15:30", None, "2026-01-10T15:29", "2026-01-10T15:30"),
        ("13:00-15:30", None, "2026-01-10T15:30", None),
        ("1-6", "America/New_York", "2026-01-10T07:00", "2026-01-10T11:00"),  # 02:00 EST
        ("1-6", "America/New_York", "2026-01-10T05:00", None),  # 00:00 EST
    ],
)
def test_quiet_hours_end(quiet: str, zone_name: str | None, moment: str,
                         expected: str | None) -> None:
    hours = Quiet.parse(quiet, zone_name)
    assert hours is not None
    end = hours.end_of(utc(moment))
    assert end == (utc(expected) if expected else None)
    assert out_of_quiet(utc(moment), hours) == (end or utc(moment))
    if end is not None:
        assert hours.end_of(end) is None


@pytest.mark.parametrize(
    ("opened", "hours", "spans", "expected"),
    [
        # 48 hours end 2026-01-12 03:00 UTC (04:00 in Warsaw): moved to 08:00 Warsaw
        ("2026-01-10T03:00", 48, (), "2026-01-12T07:00"),
        ("2026-01-10T10:00", 48, (), "2026-01-12T10:00"),  # ends at 11:00 Warsaw: stays
        # the away time first, then the quiet hours
        ("2026-01-10T10:00", 48, ((1, 13),), "2026-01-13T07:00"),
        # DST night: 2026-03-29 00:30 UTC is 01:30 CET, the night ends 08:00 CEST = 06:00 UTC
        ("2026-03-27T00:30", 48, (), "2026-03-29T06:00"),
        ("2026-10-23T00:30", 48, (), "2026-10-25T07:00"),
    ],
)
def test_deadline_at(opened: str, hours: int, spans: tuple[tuple[float, float], ...],
                     expected: str) -> None:
    start = utc(opened)
    intervals = [(start + timedelta(hours=a), start + timedelta(hours=b)) for a, b in spans]
    assert deadline_at(start, hours * 3600, intervals, WARSAW_NIGHT) == utc(expected)
    assert deadline_at(start, hours * 3600, intervals, None) == stretch(
        start, hours * 3600, intervals)


@pytest.mark.parametrize(
    ("spec", "zone_name", "message"),
    [
        ("22-22", None, "same time"),
        ("22:00-22:00", "UTC", "same time"),
        ("25:00-08:00", None, "should look like"),
        ("22:00", None, "should look like"),
        ("night", None, "should look like"),
        ("22:00-08:00", "Mars/Olympus", "not a time zone"),
    ],
)
def test_bad_quiet_hours(spec: str, zone_name: str | None, message: str) -> None:
    with pytest.raises(ClockError, match=message):
        Quiet.parse(spec, zone_name)


def test_quiet_hours_parse() -> None:
    assert Quiet.parse(None, "Europe/Warsaw") is None
    assert Quiet.parse("", None) is None
    quiet = Quiet.parse(" 22:30 - 7 ", "Europe/Warsaw")
    assert quiet is not None
    assert (quiet.start.hour, quiet.start.minute, quiet.end.hour) == (22, 30, 7)
    assert str(quiet.zone) == "Europe/Warsaw"
    with pytest.raises(ClockError, match="Europe/Warsaw"):
        zone("Nowhere")


# ---------------------------------------------------------------------- reminder points


@pytest.mark.parametrize(
    ("text", "share", "before"),
    [("50%", 0.5, None), (" 25% ", 0.25, None), ("1%", 0.01, None), ("99%", 0.99, None),
     ("2h", None, 2), ("2H", None, 2), ("1h", None, 1), ("999h", None, 999)],
)
def test_reminder_point_parse(text: str, share: float | None, before: int | None) -> None:
    point = ReminderPoint.parse(text)
    assert point.text == text.strip().lower()
    assert point.share == share
    assert point.before == (timedelta(hours=before) if before is not None else None)


@pytest.mark.parametrize("text", ["half", "0%", "100%", "50", "0h", "00h", "1000h", "2 h",
                                  "-2h", "1.5h", "", "%", "h"])
def test_reminder_point_parse_errors(text: str) -> None:
    with pytest.raises(ClockError):
        ReminderPoint.parse(text)


def test_reminder_point_must_be_text() -> None:
    with pytest.raises(ClockError, match="neither a share"):
        ReminderPoint.parse(50)  # type: ignore[arg-type]


def test_check_reminders() -> None:
    assert check_reminders([" 50% ", "2H"]) == ["50%", "2h"]
    assert check_reminders([]) == []
    for bad in ("50%", ["50%"] * 6, None, {"a": "50%"}):
        with pytest.raises(ClockError, match="at most 5"):
            check_reminders(bad)
    with pytest.raises(ClockError, match="'soon'"):
        check_reminders(["50%", "soon"])


@pytest.mark.parametrize(
    ("point", "due", "spans", "quiet", "expected"),
    [
        ("50%", 48, (), None, 24),
        ("25%", 48, (), None, 12),
        ("2h", 48, (), None, 46),
        ("48h", 48, (), None, None),  # at the opening: dropped
        ("49h", 48, (), None, None),  # before the opening: dropped
        ("2h", 1, (), None, None),  # the whole decision is shorter than the point
        ("50%", 1, (), None, 0.5),
        ("99%", 48, (), None, 47.52),
        # inside away time: after it
        ("50%", 48, ((20, 30),), None, 30),
        ("50%", 48, ((20, 30), (25, 35)), None, 35),
        # moved past the deadline by away time: dropped
        ("2h", 48, ((45, 50),), None, None),
    ],
)
def test_reminder_at(point: str, due: float, spans: tuple[tuple[float, float], ...],
                     quiet: str | None, expected: float | None) -> None:
    moment = reminder_at(ReminderPoint.parse(point), T, h(due), away(*spans),
                         Quiet.parse(quiet, "UTC") if quiet else None)
    assert moment == (h(expected) if expected is not None else None)


def test_reminder_moves_out_of_quiet_hours_or_is_dropped() -> None:
    night = Quiet.parse("22:00-08:00", "UTC")
    opened = utc("2026-01-10T12:00")
    # 50% of 48h is 2026-01-11 12:00: not quiet
    assert reminder_at(ReminderPoint.parse("50%"), opened, opened + 48 * HOUR, [],
                       night) == utc("2026-01-11T12:00")
    # 50% of 24h is 2026-01-11 00:00: quiet until 08:00, before the deadline at 12:00
    assert reminder_at(ReminderPoint.parse("50%"), opened, opened + 24 * HOUR, [],
                       night) == utc("2026-01-11T08:00")
    # a deadline at 08:00 (the end of the night) with a reminder 2h before (06:00, quiet):
    # the end of the quiet hours is the deadline itself, so the reminder is dropped
    due = utc("2026-01-11T08:00")
    assert reminder_at(ReminderPoint.parse("2h"), opened, due, [], night) is None
    assert reminder_at(ReminderPoint.parse("2h"), opened, due, [], None) == utc(
        "2026-01-11T06:00")


@pytest.mark.parametrize(
    ("spans", "due", "expected"),
    [
        ((), 48, None),
        (((5, 10),), 48, 5),
        (((-1, 1),), 48, 0),  # away when it opens: from the opening
        (((-10, -1), (30, 40)), 48, 30),  # the first absence is over; the next one counts
        (((48, 60),), 48, None),  # from the deadline on: too late
        (((47.5, 60),), 48, 47.5),
        (((30, 40), (5, 10)), 48, 5),  # the earliest
    ],
)
def test_computer_from(spans: tuple[tuple[float, float], ...], due: float,
                       expected: float | None) -> None:
    assert computer_from(T, h(due), away(*spans)) == (h(expected) if expected is not None
                                                       else None)


# ---------------------------------------------------------------------- settings and banks


def test_settings_defaults() -> None:
    clock = ClockSettings.of({})
    assert clock.running
    assert clock.deadline == 48 * HOUR and clock.reaction == 12 * HOUR
    assert clock.bank == clock.increment == timedelta(0)
    assert [p.text for p in clock.reminders] == list(DEFAULT_REMINDERS) == ["50%", "2h"]
    assert clock.on_timeout == "bot" and clock.max_missed == 0
    assert clock.after_missed == "computer"
    assert clock.initial_bank() is None


@pytest.mark.parametrize(
    ("settings", "expected"),
    [
        ({"deadline_hours": 6}, {"deadline": 6 * HOUR, "reaction": 6 * HOUR}),
        ({"deadline_hours": 0}, {"deadline": None, "running": False, "reaction": HOUR}),
        ({"deadline_hours": 72, "reaction_hours": 3}, {"reaction": 3 * HOUR}),
        ({"on_timeout": "default"}, {"on_timeout": "pass"}),
        ({"on_timeout": "pause"}, {"on_timeout": "pause"}),
        ({"on_timeout": "pass"}, {"on_timeout": "pass"}),
        ({"reminders": []}, {"reminders": ()}),
        ({"bank_hours": 5, "increment_hours": 1},
         {"bank": 5 * HOUR, "increment": HOUR, "initial_bank": 5 * 3600}),
        ({"increment_hours": 2}, {"initial_bank": 0}),  # a bank that only grows
        ({"max_missed": 3, "after_missed": "invite"}, {"max_missed": 3, "after_missed": "invite"}),
    ],
)
def test_settings_of(settings: dict[str, Any], expected: dict[str, Any]) -> None:
    clock = ClockSettings.of(settings)
    for key, value in expected.items():
        got = clock.initial_bank() if key == "initial_bank" else getattr(clock, key)
        assert got == value, key


def test_settings_with_a_bad_reminder() -> None:
    with pytest.raises(ClockError):
        ClockSettings.of({"reminders": ["tomorrow"]})


@pytest.mark.parametrize(
    ("quick", "bank", "expected"),
    [
        (False, None, (48, 48)),
        (False, 0, (48, 48)),
        (False, 5 * 3600, (48, 53)),
        (False, -3600, (48, 48)),
        (True, 5 * 3600, (12, 12)),  # quick decisions: the reaction time, no bank
    ],
)
def test_allowance(quick: bool, bank: int | None, expected: tuple[int, int]) -> None:
    own, total = ClockSettings.of({}).allowance(quick, bank)
    assert (own, total) == (expected[0] * 3600, expected[1] * 3600)


def test_allowance_of_a_quick_decision_without_a_turn_clock() -> None:
    clock = ClockSettings.of({"deadline_hours": 0})
    assert clock.allowance(True, 100) == (3600, 3600)


@pytest.mark.parametrize(
    ("bank", "used", "increment", "expected"),
    [
        (None, 100, 1, None),  # no bank in this game
        (10, 30, 0, 10),  # within the deadline: nothing used
        (10, 48, 0, 10),  # exactly the deadline
        (10, 50, 0, 8),
        (10, 58, 0, 0),
        (10, 70, 0, 0),  # never below zero
        (10, 50, 1, 9),  # the increment after the charge
        (0, 60, 2, 2),
        (0, 10, 2, 2),
    ],
)
def test_bank_after(bank: int | None, used: float, increment: int,
                    expected: int | None) -> None:
    result = bank_after(None if bank is None else bank * 3600, 48 * 3600, used * 3600,
                        timedelta(hours=increment))
    assert result == (None if expected is None else expected * 3600)


def test_aware() -> None:
    naive = datetime(2026, 1, 1, 12)
    assert aware(naive) == datetime(2026, 1, 1, 12, tzinfo=UTC)
    plus_two = datetime.fromisoformat("2026-01-01T14:00:00+02:00")
    assert aware(plus_two) == datetime(2026, 1, 1, 12, tzinfo=UTC)
    assert aware(plus_two).tzinfo == UTC
