"""The worlds every computer level of Titan Race decides in: the race as one seat may know it,
with everything else drawn again.

What a seat cannot see: the Bonus cards in the other players' hands (it sees how many each
holds), the order of the face-down deck (it sees its size; the discard pile is open) and every
future die: the round's rolls, the last player's reroll, pentacle rerolls and which card a
Pickpocket steals, all drawn from the game's random source. A *sampled world* is the true state
with those parts replaced by a deal drawn from the player's own generator (the cards nobody
shows, shuffled into the other hands by their counts and into the deck) and a fresh random
source seeded from it. Nothing of the game's own random source is copied, so the worlds tell
nothing about the dice to come.

When the decision waits inside a suspended input (a reaction window or a pirate attack in
someone's move), the input is re-run from the state before it in a sampled world; a world is kept
only when it reaches the very decision the seat sees, with the same view for the seat (rejection
sampling, which also respects what the windows already opened reveal).

The player's generator is seeded from the seat's view alone (:func:`seat_random`), so the same
view always gives the same worlds, whatever the hidden parts really are.
"""

from __future__ import annotations

import random
from typing import Final

from app.games.errors import EngineError
from app.games.logged import run_again
from app.games.rng import Rng, view_seed

from .cards import CARDS
from .race import pending_decision, state_view
from .rules import Resolver, turn_titan
from .state import RaceState

SAMPLING_TRIES: Final = 40
"""Worlds drawn before a suspended decision settles for one that reached the same decision with
another view, or gives up (and the player answers :func:`passive`)."""


def seat_of(st: RaceState) -> int | None:
    """The seat owing the pending decision (None once the race is over)."""
    pending = pending_decision(st)
    return None if pending is None else st.titans[pending["titan"]].seat


def seat_random(st: RaceState, seat: int) -> random.Random:
    """A generator seeded from what ``seat`` sees of ``st`` (its view, its own options among
    it) and from nothing else."""
    return random.Random(view_seed(state_view(st, seat=seat)))


def _redeal(
    st: RaceState, seat: int, rnd: random.Random, pinned: dict[str, str] | None = None
) -> None:
    """Replace, in place, everything ``seat`` cannot see in ``st`` by a deal from ``rnd``: the
    other hands (same sizes), the deck (same size), the random source and any scripted rolls.

    ``pinned`` names a card another Titan is known to hold (the card its public input plays).
    """
    pinned = pinned or {}
    known = set(st.discard) | set(pinned.values())
    for t in st.titans.values():
        if t.seat == seat:
            known.update(t.hand)
    pool = [card for card in CARDS if card not in known]
    rnd.shuffle(pool)
    for t in st.titans.values():
        if t.seat != seat:
            held = [pinned[t.name]] if t.name in pinned else []
            size = len(t.hand) - len(held)
            t.hand, pool = held + pool[:size], pool[size:]
    st.deck = pool
    st.rng = _fresh_rng(rnd)
    st.forced_rolls = []


def _played(st: RaceState, text: str, seat: int) -> dict[str, str]:
    """The card another seat's input plays or discards from its hand (the input is public)."""
    words = text.split()
    if st.window is None and st.phase == "turn" and words[0] in ("play", "discard"):
        actor = turn_titan(st)
        if actor.seat != seat and words[1] in CARDS:
            return {actor.name: words[1]}
    return {}


def _fresh_rng(rnd: random.Random) -> Rng:
    return Rng(rnd.getrandbits(64))


def sample_world(st: RaceState, seat: int, rnd: random.Random) -> RaceState | None:
    """A world ``seat`` cannot tell from ``st``, drawn from ``rnd`` and the seat's view only.

    When the decision waits inside a suspended input, a re-run of that input in a sampled deal
    must reach the same decision with the same view; failing that in :data:`SAMPLING_TRIES`
    tries, one that reached the same decision will do, and None when none did.
    """
    if st.suspended is None:
        world = st.copy()
        _redeal(world, seat, rnd)
        return world
    sus = st.suspended
    assert st.window is not None
    decision = st.window
    seen = state_view(st, seat=seat, options=list(decision["options"]))
    pinned = _played(sus.base, sus.input, seat)
    near: RaceState | None = None
    for _ in range(SAMPLING_TRIES):
        base = sus.base.copy()
        _redeal(base, seat, rnd, pinned)
        try:
            world = run_again(sus, Resolver, base)[0]
        except (EngineError, ValueError, AssertionError):
            continue  # this deal cannot have led here (a card another window played)
        if world.window is None or world.window != decision:
            continue
        if state_view(world, seat=seat, options=list(decision["options"])) == seen:
            return world
        near = near or world
    return near


def passive(options: list[str]) -> str:
    """The answer when no world could be sampled: let the event pass (lose the pirates' Life
    Point rather than a card), else the first option."""
    for quiet in ("pass", "lose", "end"):
        if quiet in options:
            return quiet
    return options[0]


__all__ = ["SAMPLING_TRIES", "passive", "sample_world", "seat_of", "seat_random"]
