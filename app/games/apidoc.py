"""What the JSON API's OpenAPI document says of one game's own JSON (:class:`ApiWords`): each
ruleset declares it as ``api_words``, and app/web/api/schemas.py joins every registered game's
into the descriptions of the set-up fields. English, as the rest of the API's reference."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class ApiWords:
    """A game's words in the API's reference; each text says one game's part of a field."""

    title: str
    """The game's name as the reference writes it."""
    variants: str
    """Its variants, e.g. ``standard, leaders (the Leader module)``."""
    setup: str
    """Its ``setup`` object, e.g. ``{"start": "alger"}``."""
    older_setup: str
    """What the older setup list (:data:`app.games.base.OLDER_SETUP`) holds in this game."""
    pieces: str
    """A seat's ``pieces`` object."""
    older_pieces: str
    """What the older list of piece names (:data:`app.games.base.OLDER_PIECES`) holds."""
    setup_example: dict[str, Any] = field(default_factory=dict)
    pieces_example: dict[str, Any] = field(default_factory=dict)


def joined(words: list[ApiWords], part: str) -> str:
    """Every game's ``part`` in one text: ``Title: its part; Other title: its part``."""
    return "; ".join(f"{each.title}: {getattr(each, part)}" for each in words)
