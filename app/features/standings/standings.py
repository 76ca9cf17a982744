"""A table's standings as the page, the API and the command line show them: the people first,
best first, each by the name they used in the table's games (never by address: the reader's
own line is marked ``you``), then the computer, one line per level, then the former players.

See app/features/standings/figures.py for the figures and tables.py for which games count;
docs/standings.md for the whole."""

from __future__ import annotations

from typing import Any, Final

from app.games.base import BOT_LEVELS
from app.service import GameService

from . import groups
from .figures import COMPUTER, FORMER, PERSON, Line, Result, figures, ranked
from .tables import Season, address_table, group_table

AUTOMATIC: Final = "automatic"
GROUP: Final = "group"


def _figures(line: Line) -> dict[str, Any]:
    rating = None
    if line.mu is not None and line.sigma is not None and line.ordinal is not None:
        rating = {"ordinal": round(line.ordinal, 2), "mu": round(line.mu, 2),
                  "sigma": round(line.sigma, 2)}
    return {"games": line.games, "wins": line.wins,
            "average_place": round(line.average_place, 2), "rating": rating}


def table(results: list[Result], viewer: str) -> dict[str, Any]:
    """The lines of a table of ``results`` as ``viewer`` (an address) sees them."""
    lines = ranked(figures(results))
    people = [{"name": line.name, "you": line.who == viewer, **_figures(line)}
              for line in lines if line.kind == PERSON]
    computers = sorted(([line for line in lines if line.kind == COMPUTER]),
                       key=lambda line: BOT_LEVELS.index(line.who)
                       if line.who in BOT_LEVELS else len(BOT_LEVELS))
    former = next((line for line in lines if line.kind == FORMER), None)
    return {"finished_games": len(results), "players": people,
            "computers": [{"level": line.who, **_figures(line)} for line in computers],
            "former": None if former is None else _figures(former)}


def automatic(service: GameService, viewer: str, game: str, period: Season) -> dict[str, Any]:
    """The automatic table of ``viewer``: its finished games and who sat in them."""
    return {"table": AUTOMATIC, **table(address_table(service, viewer, game, period), viewer)}


def of_group(service: GameService, viewer: str, uid: str, game: str,
             period: Season) -> dict[str, Any]:
    """The table of ``viewer``'s group ``uid`` (NotFound for a group not its own)."""
    name, members = groups.members_of(service, viewer, uid)
    found = group_table(service, viewer, members, game, period)
    return {"table": GROUP, "group": uid, "name": name, **table(found, viewer)}


def standings(service: GameService, viewer: str, game: str, period: Season,
              group: str | None = None) -> dict[str, Any]:
    """What ``GET /api/standings`` answers: the game, the season, and the automatic table of
    ``viewer`` or, with ``group``, that group's."""
    found = (of_group(service, viewer, group, game, period) if group
             else automatic(service, viewer, game, period))
    return {"game": game, **period.to_json(), **found}
