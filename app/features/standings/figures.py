"""The figures of a table of players (pure: no database, no words): from the finished games'
places, each player's games, wins, average place and rating.

The rating is openskill's Weng-Lin model (:class:`openskill.models.PlackettLuce`, the package's
default), made for games of several players (not pairwise Elo): each game is one match of
every seat, ranked by its places (seats the rules leave tied share a rank), processed in the
order the games finished (then by id). A rating is shown as its ordinal, mu - 3 sigma (a
cautious estimate that rises as the uncertainty shrinks), with mu and sigma beside it.

Who a seat is (:class:`Entry`): a person by address (:data:`PERSON`), the computer by level
(:data:`COMPUTER`: one line per level, rated like a player), or a player who asked to be
forgotten (:data:`FORMER`: no longer anyone; each such seat plays its game as a newcomer, and
the line of former players carries no rating). When one identity holds several seats of a
game (two computer seats of one level, say), its best-placed seat counts for it; the others
still take part in the match, rated as it stands, their change dropped.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Final

from openskill.models import PlackettLuce

PERSON: Final = "person"
COMPUTER: Final = "computer"
FORMER: Final = "former"
FORMER_KEY: Final = "former"
"""The identity of the line that gathers the seats of forgotten players."""


def model() -> PlackettLuce:
    """The rating model: openskill's Weng-Lin PlackettLuce with its default parameters."""
    return PlackettLuce()


@dataclass(frozen=True)
class Entry:
    """One seat's result in a game: ``who`` identifies the player (an address, a computer
    level; for :data:`FORMER` a key of the seat alone), ``name`` what the game called them,
    ``place`` the rank the game's rules gave the seat (1 the best)."""

    who: str
    kind: str
    name: str
    place: int


@dataclass(frozen=True)
class Result:
    """A finished game: its id, when it finished, and every seat's :class:`Entry`."""

    game_id: int
    finished_at: datetime
    entries: tuple[Entry, ...]


@dataclass
class Line:
    """A player's figures over a table's games."""

    who: str
    kind: str
    name: str
    games: int = 0
    wins: int = 0
    place_sum: int = 0
    mu: float | None = None
    sigma: float | None = None
    last: tuple[Any, ...] = field(default=(), repr=False)
    """When the name was last seen (the game's finishing order): the latest name wins."""

    @property
    def average_place(self) -> float:
        return self.place_sum / self.games if self.games else 0.0

    @property
    def ordinal(self) -> float | None:
        """mu - 3 sigma: what the line is shown and ranked by."""
        if self.mu is None or self.sigma is None:
            return None
        return self.mu - 3 * self.sigma


def in_order(results: Iterable[Result]) -> list[Result]:
    """The games in the order they are rated: by finishing time, then by id."""
    return sorted(results, key=lambda r: (r.finished_at, r.game_id))


def counted(entries: Sequence[Entry]) -> list[bool]:
    """For each entry, whether it counts for its identity: the best-placed seat of each
    identity in the game (the first such in seat order); every seat of a former player."""
    best: dict[str, int] = {}
    for index, entry in enumerate(entries):
        if entry.kind == FORMER:
            continue
        kept = best.get(entry.who)
        if kept is None or entry.place < entries[kept].place:
            best[entry.who] = index
    chosen = set(best.values())
    return [entry.kind == FORMER or index in chosen for index, entry in enumerate(entries)]


def figures(results: Iterable[Result], rater: PlackettLuce | None = None) -> list[Line]:
    """Every identity's :class:`Line` over ``results`` (in :func:`in_order`), the former
    players' seats on one line without a rating; unordered."""
    rater = rater if rater is not None else model()
    lines: dict[str, Line] = {}
    ratings: dict[str, Any] = {}
    for result in in_order(results):
        entries = result.entries
        counts = counted(entries)
        for entry, counts_here in zip(entries, counts, strict=True):
            if counts_here:
                _tally(lines, entry, (result.finished_at, result.game_id))
        if len(entries) >= 2:
            _rate(rater, ratings, entries, counts)
    for who, rating in ratings.items():
        lines[who].mu, lines[who].sigma = float(rating.mu), float(rating.sigma)
    return list(lines.values())


def _tally(lines: dict[str, Line], entry: Entry, when: tuple[Any, ...]) -> None:
    key = FORMER_KEY if entry.kind == FORMER else entry.who
    line = lines.get(key)
    if line is None:
        line = lines[key] = Line(key, entry.kind, entry.name)
    line.games += 1
    line.wins += entry.place == 1
    line.place_sum += entry.place
    if when >= line.last:
        line.name, line.last = entry.name, when


def _rate(rater: PlackettLuce, ratings: dict[str, Any], entries: Sequence[Entry],
          counts: Sequence[bool]) -> None:
    """One game as one match: each seat on its own side, ranked by its place; the counted
    seats' new ratings kept."""
    sides = []
    for entry in entries:
        if entry.kind == FORMER:
            sides.append([rater.rating()])
            continue
        now = ratings.get(entry.who)
        if now is None:
            now = ratings[entry.who] = rater.rating()
        sides.append([rater.rating(mu=now.mu, sigma=now.sigma)])
    rated = rater.rate(sides, ranks=[float(entry.place) for entry in entries])
    for entry, counts_here, side in zip(entries, counts, rated, strict=True):
        if counts_here and entry.kind != FORMER:
            ratings[entry.who] = side[0]


def ranked(lines: Iterable[Line]) -> list[Line]:
    """Lines best first: by ordinal (a line without a rating last), then wins, average place
    and name."""
    return sorted(lines, key=lambda line: (line.ordinal is None, -(line.ordinal or 0.0),
                                           -line.wins, line.average_place, line.name,
                                           line.who))
