"""The API's words for a game's own JSON: the older names of the setup and pieces fields
(:data:`OLDER_SETUP`, :data:`OLDER_PIECES`, :data:`OLDER_TEAM`), which the server, its
exports, its fairness records and the command line still read and give, and what the OpenAPI
document says of each game's JSON (:class:`ApiWords`: each ruleset declares it as
``api_words``, and app/web/api/schemas.py joins every registered game's into the descriptions
of the set-up fields; English, as the rest of the API's reference). Imports nothing: the
player's commands read the older fields too."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

OLDER_SETUP: Final = "circuits"
"""The older field of a game's setup: a list each game maps
(:meth:`app.games.base.Ruleset.setup_from_circuits`).

Before a game's setup and a seat's pieces were the game's own JSON (``setup``, ``pieces``),
the API, the export format 1 and the fairness records held them in fields named after the first
game's, Titan Race's; those names are still accepted and given, so that older clients and the
records players downloaded keep working."""
OLDER_PIECES: Final = "titans"
"""The older field of the names of a seat's pieces
(:meth:`app.games.base.Ruleset.pieces_from_fields`)."""
OLDER_TEAM: Final = "team"
"""The older field of a seat's team (None: no team)."""


@dataclass(frozen=True)
class ApiWords:
    """A game's words in the API's reference; each text says one game's part of a field."""

    variants: str
    """Its variants, e.g. ``standard, leaders (the Leader module)``."""
    setup: str
    """Its ``setup`` object, e.g. ``{"start": "alger"}``."""
    older_setup: str
    """What the older setup list (:data:`OLDER_SETUP`) holds in this game."""
    pieces: str
    """A seat's ``pieces`` object."""
    older_pieces: str
    """What the older list of piece names (:data:`OLDER_PIECES`) holds."""
    setup_example: dict[str, Any] = field(default_factory=dict)
    pieces_example: dict[str, Any] = field(default_factory=dict)


def joined(words: Mapping[str, ApiWords], part: str) -> str:
    """Every game's ``part`` in one text, ``words`` by the games' titles: ``Title: its part;
    Other title: its part``."""
    return "; ".join(f"{title}: {getattr(each, part)}" for title, each in words.items())
