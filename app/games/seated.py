"""What a game's ruleset shares when its seats each race pieces of one pool (Titans, crews):
the pieces a seat chose checked and the rest dealt at random, the state dumped as its
engine's JSON, and no secret answers unless the game has simultaneous decisions.

A game's ruleset subclasses :class:`SeatedRuleset` and describes its pool in a
:class:`PiecePool`; it writes only what differs (its setup, its seats' other fields, how the
engine starts, its secret answers if it has any).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from app.games.base import LoggedRuleset, MoveRejected, SetupError
from app.games.rng import Dealing


@dataclass(frozen=True)
class PiecePool:
    """The pieces seats race with and how a seat's choice is refused.

    ``unknown`` (English, with ``{piece}`` and ``{pool}``) refuses a name not in ``names``;
    ``twice`` (a catalogue message with the field ``twice_field``) a piece two seats chose;
    ``too_many`` (a catalogue message with ``{n}``), when given, more pieces than a seat races.
    The free pieces are shuffled by the setup source ``salt`` under ``label``: a game keeps its
    values for good, or its seeded deals change."""

    names: tuple[str, ...]
    salt: int
    label: str
    unknown: str
    twice: str
    twice_field: str
    too_many: str | None = None


def deal_pieces(pool: PiecePool, asked: list[list[str]], per_seat: int,
                dealing: Dealing) -> list[list[str]]:
    """Each seat's pieces: those it asked for (checked: in the pool, nobody else's, at most
    ``per_seat``), the rest drawn at random from those nobody asked for."""
    taken: list[str] = []
    for pieces in asked:
        for piece in pieces:
            if piece not in pool.names:
                raise SetupError(pool.unknown.format(piece=piece, pool=", ".join(pool.names)))
            if piece in taken:
                fields: dict[str, Any] = {pool.twice_field: piece}
                raise SetupError(pool.twice, **fields)
            taken.append(piece)
        if len(pieces) > per_seat and pool.too_many is not None:
            raise SetupError(pool.too_many, n=per_seat)
    free = [piece for piece in pool.names if piece not in taken]
    dealing.setup_source(pool.salt).shuffle(free, pool.label)
    return [list(pieces) + [free.pop() for _ in range(per_seat - len(pieces))]
            for pieces in asked]


class SeatedRuleset(LoggedRuleset):
    """A :class:`LoggedRuleset` whose engine's game keeps its state in ``state`` (with
    ``to_json``), and which answers no secret decision unless the game says otherwise."""

    def dump(self, game: Any) -> dict[str, Any]:
        state: dict[str, Any] = game.state.to_json()
        return state

    def own_input(self, game: Any, seat: int, text: str) -> str:
        """A game without simultaneous decisions has no secret answer to take."""
        raise MoveRejected("this game has no simultaneous decisions", self.options(game, seat))

    def mark_sealed(self, view: dict[str, Any], seats: list[int],
                    own: str | None = None) -> dict[str, Any]:
        return view
