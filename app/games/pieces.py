"""A piece of a game's state (a Titan, a crew, the turn in progress: a dataclass) to and from
JSON, field by field, so that a game declares its fields once and writes no serialiser.

Lists and dicts are copied (the JSON never shares them with the state), tuples are written as
lists and read back as tuples where the game says so (``tuples``); a field missing from older
JSON takes its value from ``defaults`` (else the read fails with KeyError, as a damaged state
must).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import fields
from typing import Any, TypeVar

Piece = TypeVar("Piece")


_FIELD_NAMES: dict[type, tuple[str, ...]] = {}


def field_names(cls: type) -> tuple[str, ...]:
    """The dataclass ``cls``'s fields in their order (read once per class)."""
    names = _FIELD_NAMES.get(cls)
    if names is None:
        names = _FIELD_NAMES[cls] = tuple(item.name for item in fields(cls))
    return names


def _plain(value: Any) -> Any:
    kind = type(value)
    if kind is list or kind is tuple:
        return list(value)
    if kind is dict:
        return dict(value)
    return value


def piece_to_json(piece: object, leave_out: Collection[str] = ()) -> dict[str, Any]:
    """Every field of ``piece`` but ``leave_out``, as JSON (written out without a call a field:
    the state of every move is dumped several times)."""
    data: dict[str, Any] = {}
    for name in field_names(type(piece)):
        if name in leave_out:
            continue
        value = getattr(piece, name)
        kind = type(value)
        data[name] = (list(value) if kind is list or kind is tuple
                      else dict(value) if kind is dict else value)
    return data


def piece_from_json(cls: type[Piece], data: Mapping[str, Any], *, tuples: Collection[str] = (),
                    defaults: Mapping[str, Any] | None = None) -> Piece:
    """A ``cls`` from its JSON (:func:`piece_to_json`)."""
    missing = defaults or {}
    values: dict[str, Any] = {}
    for name in field_names(cls):
        value = data[name] if name in data or name not in missing else missing[name]
        values[name] = (tuple(value) if name in tuples and value is not None
                        else _plain(value))
    return cls(**values)
