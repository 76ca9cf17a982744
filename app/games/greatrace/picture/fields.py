"""Reading a state view for the Great Race board picture: each field as the picture needs it,
and a malformed one as best it can be (never raising)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from app.games.greatrace.engine.board import CITY, parse_space


def as_int(value: object, default: int | None = None) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int):
        return default
    return value


def mapping_of(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def strings_of(value: object) -> list[str]:
    if not isinstance(value, list | tuple):
        return []
    return [item for item in value if isinstance(item, str)]


def space_of(value: object) -> str | None:
    return parse_space(value) if isinstance(value, str) else None


def crews_of(view: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any]]]:
    """The crews of the view in seat order (then by name), each with its mapping."""
    crews = mapping_of(view.get("crews"))
    found = [(str(name), mapping_of(info)) for name, info in crews.items()]
    return sorted(found, key=lambda item: (as_int(item[1].get("seat"), 99), item[0]))


def pending_crews_of(view: Mapping[str, Any]) -> list[str]:
    if view.get("phase") == "over" or view.get("winner"):
        return []
    pending = mapping_of(view.get("pending"))
    crews = strings_of(pending.get("crews"))
    crew = pending.get("crew")
    if not crews and isinstance(crew, str):
        crews = [crew]
    return crews


def phase_of(view: Mapping[str, Any]) -> str:
    """The view's phase, or an empty string when it names none."""
    phase = view.get("phase")
    return phase if isinstance(phase, str) else ""


def hand_count_of(hand: object) -> int | None:
    """The number of cards in a hand given whole (a list) or as a count; never its cards."""
    if isinstance(hand, list | tuple):
        return len(hand)
    return as_int(hand)


def start_of(view: Mapping[str, Any]) -> str:
    start = view.get("start")
    return start if isinstance(start, str) and start in CITY else "alger"


def finish_of(view: Mapping[str, Any]) -> str:
    finish = view.get("finish")
    if isinstance(finish, str) and finish in CITY:
        return finish
    return "le-cap" if start_of(view) == "alger" else "alger"
