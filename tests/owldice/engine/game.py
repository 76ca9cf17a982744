"""Owl Dice as a :class:`~app.games.logged.LoggedGame`: what each input does, the pending
decision and its options, and the views (full, a seat's, a spectator's).

A round: the lead owl rolls the moon (a die, 1 to 6); then every owl hoots 1 to 3 at once and
in secret. When the last hoot is in, all are revealed: an owl scores its hoot when its two
pellets and the moon add up to at least four times the hoot, else nothing. After three rounds
the owls with the highest score win.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from app.games.errors import (
    N_,
    EngineError,
    GameOverError,
    IllegalInputError,
    InvalidInputError,
    Reason,
    Word,
)
from app.games.logged import LoggedGame
from app.games.rng import RandomSource, Rng

from .notation import HOOTS, normalise
from .state import HOOT, OVER, OWLS, PELLETS, ROLL, Owl, OwlState

OWL_DICE_VERSION: Final = 1
MOON_FACES: Final = 6
PELLETS_EACH: Final = 2


def scores(pellets: Sequence[int], moon: int, hoot: int) -> int:
    """What a hoot scores: the hoot when the pellets and the moon reach four times it."""
    return hoot if sum(pellets) + moon >= 4 * hoot else 0


def new_game(owls: Sequence[str], *, glade: str = "hollow-oak",
             rng: RandomSource | None = None) -> OwlState:
    """A new game (owls in seat order): the deck shuffled and two pellets dealt to each owl."""
    names = [str(name) for name in owls]
    if not 2 <= len(names) <= len(OWLS) or len(set(names)) != len(names) or not set(
            names) <= set(OWLS):
        raise EngineError(f"Owl Dice has 2 to {len(OWLS)} different owls of {', '.join(OWLS)}")
    source = rng if rng is not None else Rng(0)
    deck = list(PELLETS)
    source.shuffle(deck, "deck")
    hands = {name: [deck.pop() for _ in range(PELLETS_EACH)] for name in names}
    return OwlState(owls={name: Owl(name, seat, hands[name]) for seat, name in enumerate(names)},
                    order=names, deck=deck, rng=source, glade=glade)


def options(st: OwlState, owl: str | None = None) -> list[str]:
    """The legal inputs now (only ``owl``'s when given)."""
    if st.phase == ROLL:
        return ["roll"] if owl in (None, st.lead) else []
    if st.phase == HOOT:
        return [f"hoot {name} {n}" for name in st.owing() if owl in (None, name) for n in HOOTS]
    return []


def step(st: OwlState, text: str) -> tuple[OwlState, list[str]]:
    """Apply one input to a copy of ``st``: the new state and the random outcomes."""
    if st.phase == OVER:
        raise GameOverError(Reason(N_("the game is over: no more inputs")), [])
    legal = options(st)
    try:
        norm = normalise(text)
    except InvalidInputError as exc:
        raise InvalidInputError(exc.message, legal) from None
    if norm not in legal:
        raise IllegalInputError(Reason(N_("'{input}' is not one of the options now"),
                                       {"input": norm}), legal)
    new = st.copy()
    if norm == "roll":
        new.moon = new.rng.below(MOON_FACES, "dice") + 1
        new.phase = HOOT
        for owl in new.owls.values():
            owl.hooted, owl.hoot = False, None
        return new, [f"moon {new.moon}"]
    _, name, count = norm.split()
    owl = new.owls[name]
    owl.hoot, owl.hooted = int(count), True
    if not new.owing():
        _reveal(new)
    return new, []


def _reveal(st: OwlState) -> None:
    """Every hoot is in: score them and begin the next round (or end the game)."""
    assert st.moon is not None
    for owl in st.owls.values():
        owl.score += scores(owl.pellets, st.moon, owl.hoot or 0)
    if st.round >= st.rounds:
        st.phase = OVER
    else:
        st.round += 1
        st.phase = ROLL


def winners(st: OwlState) -> list[str]:
    if st.phase != OVER:
        return []
    best = max(owl.score for owl in st.owls.values())
    return [name for name in st.order if st.owls[name].score == best]


def pending(st: OwlState) -> dict[str, Any] | None:
    """The decision waiting for an answer (without options); None once the game is over."""
    if st.phase == ROLL:
        return {"kind": "roll", "owl": st.lead, "owls": [st.lead], "round": st.round}
    if st.phase == HOOT:
        owing = st.owing()
        return {"kind": "hoot", "owl": owing[0] if owing else None, "owls": owing,
                "round": st.round, "moon": st.moon}
    return None


class OwlDice(LoggedGame[OwlState]):
    """A game of Owl Dice: its state, its inputs with their outcomes, and where it began."""

    RULESET = "owl-dice"
    ENGINE_VERSION = OWL_DICE_VERSION

    @staticmethod
    def step(state: OwlState, text: str) -> tuple[OwlState, list[str]]:
        return step(state, text)

    @staticmethod
    def load_state(data: dict[str, Any]) -> OwlState:
        return OwlState.from_json(data)

    @staticmethod
    def log_form(text: str) -> str:
        return normalise(text)

    def owl_of(self, seat: int) -> str:
        for owl in self.state.owls.values():
            if owl.seat == seat:
                return owl.owl
        raise EngineError(f"there is no seat {seat} in this game")

    def to_act(self) -> list[int]:
        decision = pending(self.state)
        return [] if decision is None else [self.state.owls[n].seat for n in decision["owls"]]

    def own_input(self, seat: int, text: str) -> str:
        """Seat ``seat``'s hoot in canonical form, from ``hoot 2`` or ``hoot <own owl> 2``."""
        owl = self.owl_of(seat)
        words = text.strip().lower().split()
        if len(words) == 2 and words[0] == "hoot":
            words.insert(1, owl)
        if len(words) != 3 or words[0] != "hoot":
            raise IllegalInputError(Reason(N_("only a hoot is given in secret (hoot 1 to 3)")),
                                    options(self.state, owl))
        if words[1] != owl:
            raise IllegalInputError(Reason(N_("you hoot for {owl}, not {other}"), {
                "owl": Word("owl", owl), "other": Word("owl", words[1])}),
                options(self.state, owl))
        norm = normalise(" ".join(words))
        if norm not in options(self.state, owl):
            raise IllegalInputError(Reason(N_("'{input}' is not one of the options now"),
                                           {"input": norm}), options(self.state, owl))
        return norm

    def view(self, seat: int | None = None, spectator: bool = False) -> dict[str, Any]:
        """Full when neither ``seat`` nor ``spectator`` is given; otherwise the other owls'
        pellets are counts and the options only the viewer's."""
        st = self.state
        full = seat is None and not spectator
        viewer = None if seat is None or spectator else self.owl_of(seat)
        decision = pending(st)
        if decision is not None and (full or viewer in decision["owls"]):
            decision["options"] = options(st, None if full else viewer)
        found = winners(st)
        return {
            "game": "owl-dice", "glade": st.glade, "round": st.round, "rounds": st.rounds,
            "phase": st.phase, "moon": st.moon, "lead": st.lead, "deck": len(st.deck),
            "owls": {name: {
                "seat": owl.seat, "score": owl.score,
                "hand": list(owl.pellets) if full or name == viewer else len(owl.pellets),
                "hoot": owl.hoot if st.phase != HOOT else None,
                "hooted": owl.hooted and st.phase == HOOT,  # (a scenario's, part-way in)
            } for name, owl in st.owls.items()},
            "pending": decision,
            "winner": found[0] if found else None,
            "winners": found,
        }
