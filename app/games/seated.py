"""What a game's ruleset shares when its seats each race pieces of one pool (Titans, crews):
the pieces a seat chose checked and the rest dealt at random, the state dumped as its
engine's JSON, and a secret answer to a simultaneous decision taken alone and shown sealed.

A game's ruleset subclasses :class:`SeatedRuleset` and describes its pool in a
:class:`PiecePool`, and its simultaneous decision, if it has one, in a :class:`SecretDecision`;
it writes only what differs (its setup, its seats' other fields, how the engine starts, which
piece an answer is for and how the viewer's own sealed answer shows).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from app.games.base import SECRET_ALONE, LoggedRuleset, MoveRejected, SetupError
from app.games.errors import InputError
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


@dataclass(frozen=True)
class SecretDecision:
    """A game's simultaneous decision, every seat answering in secret (The Great Race's plan):
    the pending decision's ``kind``; ``pieces``, the key of the pieces both in the view and in
    the pending decision (those who owe an answer); ``piece``, the pending decision's key of
    the one piece shown as deciding; ``answered``, the flag a piece whose answer is sealed gets
    in the view."""

    kind: str
    pieces: str
    piece: str
    answered: str


class SeatedRuleset(LoggedRuleset):
    """A :class:`LoggedRuleset` whose engine's game keeps its state in ``state`` (with
    ``to_json``), and which answers no secret decision unless it names one in ``secret``."""

    variants: tuple[str, ...]
    secret: ClassVar[SecretDecision | None] = None
    """The game's simultaneous decision; None: it has none."""

    def dump(self, game: Any) -> dict[str, Any]:
        state: dict[str, Any] = game.state.to_json()
        return state

    def check_variant(self, variant: str) -> None:
        """SetupError for a variant the game does not have, listing those it has."""
        if variant not in self.variants:
            raise SetupError(
                f"unknown variant '{variant}'; choose one of {', '.join(self.variants)}")

    def own_input(self, game: Any, seat: int, text: str) -> str:
        """The engine's game's ``own_input`` for the seat. A secret answer is given alone:
        joined to other inputs, the inputs after it would be played before it is revealed, or
        be another seat's. A game without simultaneous decisions has none to take."""
        if self.secret is None:
            raise MoveRejected("this game has no simultaneous decisions",
                               self.options(game, seat))
        parts = text.split(";")
        if len(parts) > 1:
            fields = {"number": 2, "input": parts[1].strip()}
            raise MoveRejected(SECRET_ALONE.format(**fields), self.options(game, seat), 1,
                               (SECRET_ALONE, fields))
        try:
            answer: str = game.own_input(seat, text)
        except InputError as exc:
            raise self.refusal(exc, self.options(game, seat)) from None
        return answer

    def mark_sealed(self, view: dict[str, Any], seats: list[int],
                    own: str | None = None) -> dict[str, Any]:
        """The pieces of ``seats`` marked ``answered`` and no longer owing the decision (nor
        offered its options); the viewer's ``own`` sealed answer shown by
        :meth:`show_own_answer`."""
        secret = self.secret
        if secret is None:
            return view
        pieces = view.get(secret.pieces) or {}
        if own is not None:
            self.show_own_answer(pieces, own)
        done = {name for name, piece in pieces.items() if piece.get("seat") in seats}
        for name in done:
            pieces[name][secret.answered] = True
        pending = view.get("pending")
        if pending and pending.get("kind") == secret.kind:
            owing = [name for name in pending.get(secret.pieces, []) if name not in done]
            pending[secret.pieces] = owing
            pending[secret.piece] = owing[0] if owing else None
            pending["options"] = [option for option in pending.get("options") or []
                                  if self.answer_piece(option) in owing]
        return view

    def answer_piece(self, option: str) -> str:
        """The piece an answer to the secret decision is for (a game with one says how)."""
        raise NotImplementedError

    def show_own_answer(self, pieces: dict[str, Any], own: str) -> None:
        """Show the viewer's own sealed answer ``own`` in the view's ``pieces`` (by default
        not at all)."""
