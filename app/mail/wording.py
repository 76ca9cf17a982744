"""Words of a mail that come from Babel's locale data and the catalogue's patterns: lists
(``Kronos and Rhea``), times (in UTC and the player's time zone), dates and lengths of time."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Final
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from babel.dates import format_date, format_datetime
from babel.lists import format_list

from app.core.i18n import language, translate, translate_plural

UTC_NAMES: Final = frozenset({"UTC", "ETC/UTC", "UCT", "ETC/UCT", "ZULU", "ETC/ZULU",
                              "UNIVERSAL", "ETC/UNIVERSAL", "GMT", "ETC/GMT"})


def and_list(items: Any, lang: str) -> str:
    """``Kronos and Rhea``, ``Kronos i Rhea``: a list in words (Babel's locale data)."""
    words = [str(item) for item in items or [] if str(item)]
    return format_list(words, locale=language(lang)) if words else ""


# ------------------------------------------------------------------ times


def parse_time(value: Any) -> datetime | None:
    """An aware time from an ISO string (as the clock writes them) or a datetime; None if it
    is neither. A time without an offset is UTC."""
    if isinstance(value, datetime):
        moment = value
    elif isinstance(value, str) and value.strip():
        try:
            moment = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        except ValueError:
            return None
    else:
        return None
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment


def time_zone(name: Any) -> ZoneInfo | None:
    """The player's time zone, or None when it is unset, unknown or just UTC."""
    if not isinstance(name, str) or not name.strip() or name.strip().upper() in UTC_NAMES:
        return None
    try:
        return ZoneInfo(name.strip())
    except (ZoneInfoNotFoundError, ValueError):
        return None


def _day_words(moment: datetime, lang: str, *, weekday: bool = True, year: bool = True) -> str:
    """``Tuesday 4 March 2025``, ``4 marca 2025 (wtorek)``: the pattern of the language's
    catalogue, the names from Babel's locale data (the translator orders the words: the
    Polish ``d MMMM y (EEEE)`` reads well after "od", "do", "termin:", where a leading weekday
    would need another case)."""
    lang = language(lang)
    if weekday and year:
        # Translators: a date with its weekday, a Babel (CLDR) date pattern:
        # EEEE weekday, d day, MMMM month (its name), y year.
        pattern = translate(lang, "EEEE d MMMM y")
    elif weekday:
        # Translators: a date with its weekday but no year, a Babel (CLDR) date pattern.
        pattern = translate(lang, "EEEE d MMMM")
    else:
        # Translators: a date without its weekday, a Babel (CLDR) date pattern.
        pattern = translate(lang, "d MMMM y")
    return format_date(moment.date(), pattern, locale=lang)


def _clock_words(moment: datetime, lang: str) -> str:
    # Translators: the time of day, a Babel (CLDR) pattern: HH hours (00-23), mm minutes.
    return format_datetime(moment, translate(lang, "HH:mm"), tzinfo=moment.tzinfo, locale=lang)


def format_time(value: Any, lang: str, zone_name: Any = None) -> str:
    """A time for a mail: ``Tuesday 4 March 2025, 14:30 UTC (15:30 your time, Europe/Warsaw)``,
    in Polish ``4 marca 2025 (wtorek), godz. 14:30 UTC, czyli u Ciebie godz. 15:30
    (Europe/Warsaw)``. The player's local time is added when ``zone_name`` is a time zone other
    than UTC (with its date when that differs). An empty string for no time."""
    moment = parse_time(value)
    if moment is None:
        return ""
    lang = language(lang)
    utc = moment.astimezone(UTC)
    text = translate(lang, "{date}, {time} UTC", date=_day_words(utc, lang),
                     time=_clock_words(utc, lang))
    zone = time_zone(zone_name)
    if zone is None:
        return text
    local = utc.astimezone(zone)
    if local.date() == utc.date():
        return translate(lang, "{utc} ({time} your time, {zone})", utc=text,
                         time=_clock_words(local, lang), zone=zone.key)
    return translate(lang, "{utc} ({date}, {time} your time, {zone})", utc=text,
                     date=_day_words(local, lang, year=local.year != utc.year),
                     time=_clock_words(local, lang), zone=zone.key)


def format_day(value: Any, lang: str, zone_name: Any = None) -> str:
    """The date of a time (in the player's time zone if known, else UTC): ``4 March 2025``."""
    moment = parse_time(value)
    if moment is None:
        return ""
    zone = time_zone(zone_name)
    return _day_words(moment.astimezone(zone or UTC), lang, weekday=False)


def _duration_part(unit: str, n: int, lang: str) -> str:
    """``3 hours``: the catalogue's plural forms, as a length of time (Polish in the
    accusative, as after "przez" and "o": 1 godzinę, 2 godziny, 5 godzin)."""
    if unit == "day":
        # Translators: a length of time, as after "for" (Polish: accusative, "przez 1 dzień").
        return translate_plural(lang, "{n} day", "{n} days", n)
    if unit == "hour":
        # Translators: a length of time, as after "for" (Polish: accusative, "przez 1 godzinę").
        return translate_plural(lang, "{n} hour", "{n} hours", n)
    # Translators: a length of time, as after "for" (Polish: accusative, "przez 1 minutę").
    return translate_plural(lang, "{n} minute", "{n} minutes", n)


def format_duration(seconds: Any, lang: str) -> str:
    """A length of time in words, to the minute: ``2 days, 3 hours and 5 minutes``,
    ``2 dni, 3 godziny i 5 minut`` (Polish in the accusative: "przez …", "o …")."""
    lang = language(lang)
    try:
        minutes = round(float(seconds) / 60)
    except (TypeError, ValueError):
        return ""
    if minutes < 1:
        return translate(lang, "less than a minute")
    days, rest = divmod(minutes, 24 * 60)
    hours, mins = divmod(rest, 60)
    parts = [_duration_part(unit, n, lang)
             for unit, n in (("day", days), ("hour", hours), ("minute", mins)) if n]
    return and_list(parts, lang)
