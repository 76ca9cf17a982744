"""Reading a state view for the Great Race board picture: each field as the picture needs it,
and a malformed one as best it can be (never raising)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from app.games.greatrace.engine.board import CITY, parse_space


def _int(value: object, default: int | None = None) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int):
        return default
    return value


def _mapping(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _strings(value: object) -> list[str]:
    if not isinstance(value, list | tuple):
        return []
    return [item for item in value if isinstance(item, str)]


def _space(value: object) -> str | None:
    return parse_space(value) if isinstance(value, str) else None


def _crews(view: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any]]]:
    """The crews of the view in seat order (then by name), each with its mapping."""
    crews = _mapping(view.get("crews"))
    found = [(str(name), _mapping(info)) for name, info in crews.items()]
    return sorted(found, key=lambda item: (_int(item[1].get("seat"), 99), item[0]))


def _pending_crews(view: Mapping[str, Any]) -> list[str]:
    if view.get("phase") == "over" or view.get("winner"):
        return []
    pending = _mapping(view.get("pending"))
    crews = _strings(pending.get("crews"))
    crew = pending.get("crew")
    if not crews and isinstance(crew, str):
        crews = [crew]
    return crews


def _phase(view: Mapping[str, Any]) -> str:
    """The view's phase, or an empty string when it names none."""
    phase = view.get("phase")
    return phase if isinstance(phase, str) else ""


def _hand_count(hand: object) -> int | None:
    """The number of cards in a hand given whole (a list) or as a count; never its cards."""
    if isinstance(hand, list | tuple):
        return len(hand)
    return _int(hand)


def _start(view: Mapping[str, Any]) -> str:
    start = view.get("start")
    return start if isinstance(start, str) and start in CITY else "alger"


def _finish(view: Mapping[str, Any]) -> str:
    finish = view.get("finish")
    if isinstance(finish, str) and finish in CITY:
        return finish
    return "le-cap" if _start(view) == "alger" else "alger"
