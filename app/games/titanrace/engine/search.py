"""The searching computer players (levels ``normal`` and ``strong``): information-set Monte Carlo
tree search from one seat's point of view.

What a seat cannot see in Titan Race: the Bonus cards in the other players' hands (it sees how
many each holds), the order of the face-down deck (it sees its size; the discard pile is open)
and every future die: the round's rolls, the last player's reroll, pentacle rerolls and which
card a Pickpocket steals, all drawn from the game's random source. Each iteration of the search
therefore plays in a *sampled world*: the true state with those parts replaced by a deal drawn
from the search's own generator (the cards nobody shows, shuffled into the other hands by their
counts and into the deck) and a fresh random source seeded from it. Nothing of the game's own
random source is copied, so the worlds tell nothing about the dice to come.

When the decision waits inside a suspended input (a reaction window or a pirate attack in
someone's move), the input is re-run from the state before it in a sampled world; a world is kept
only when it reaches the very decision the seat sees, with the same view for the seat (rejection
sampling, which also respects what the windows already opened reveal).

The tree holds the searching seat's own decisions (open loop: keyed by its inputs); the other
players are played in every world by a quick greedy model of them. A rollout stops a few turns
ahead and the position is scored by :func:`.evaluation.evaluate`, an estimate in [0, 1] of the
seat's chance to win fitted to races between easy players; a finished race scores 1 for the
winners (a whole team in the teams variant) and 0.
"""

from __future__ import annotations

import math
import random
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final

from app.games.errors import EngineError, InputError
from app.games.rng import Rng

from .bot import advance, choose, model
from .cards import CARDS
from .evaluation import evaluate
from .race import Race, _execute, pending_decision, state_view
from .rules import Resolver, turn_titan
from .state import OVER, RaceState

Clock = Callable[[], float]


@dataclass(frozen=True, slots=True)
class Budget:
    """How much a decision may search: iterations always, seconds when a clock is given."""

    iterations: int
    seconds: float | None
    horizon: int | None = None
    """Turns (of any Titan) a rollout plays past the one it starts in before it is scored; None:
    one fewer than there are Titans, so it plays every other Titan's reply once and stops as
    the Titan whose turn it was plays again."""
    exploration: float = 0.35


NORMAL_BUDGET: Final = Budget(iterations=100, seconds=0.15)
STRONG_BUDGET: Final = Budget(iterations=1000, seconds=0.8, horizon=5)
"""Rollouts two whole rounds long (to the seat's pick after next): with 300 iterations they won
64% of 120 games against two easy players where one round won 61% (and the turn alone 49%), and
one round gained nothing from 300 to 1,400 iterations. About 800 iterations fit in 0.8 s on a
free CPU; the time cap stops it sooner on a busy machine."""
BUDGETS: Final = {"normal": NORMAL_BUDGET, "strong": STRONG_BUDGET}
SAMPLING_TRIES: Final = 40
"""Worlds drawn before a suspended decision gives up searching and answers as the easy player."""


# ---------------------------------------------------------------------- sampled worlds


def seat_of(st: RaceState) -> int | None:
    """The seat owing the pending decision (None once the race is over)."""
    pending = pending_decision(st)
    return None if pending is None else st.titans[pending["titan"]].seat


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
            world = _execute(base, sus.input, list(sus.answers), sus.reported)[0]
        except (EngineError, ValueError, AssertionError):
            continue  # this deal cannot have led here (a card another window played)
        if world.window is None or world.window != decision:
            continue
        if state_view(world, seat=seat, options=list(decision["options"])) == seen:
            return world
        near = near or world
    return near
    return None


# ---------------------------------------------------------------------- the search


def _model(st: RaceState) -> str:
    return model(st, Resolver(st).options())


def _turn_key(st: RaceState) -> tuple[int, int]:
    return st.round, st.turn_index


def passive(options: list[str]) -> str:
    """The answer when no world could be sampled: let the event pass (lose the pirates' Life
    Point rather than a card), else the first option."""
    for quiet in ("pass", "lose", "end"):
        if quiet in options:
            return quiet
    return options[0]


@dataclass(slots=True)
class Node:
    """One decision of the searching seat, reached by its inputs from the root."""

    visits: int = 0
    total: float = 0.0
    available: int = 0
    children: dict[str, Node] = field(default_factory=dict)


@dataclass
class Search:
    """One decision's search; :meth:`run` answers it."""

    state: RaceState
    seat: int
    budget: Budget
    rnd: random.Random
    clock: Clock | None = None
    iterations: int = 0
    worlds: list[RaceState] = field(default_factory=list)
    keep_worlds: bool = False

    def run(self) -> str:
        options = Resolver(self.state).options()
        if len(options) == 1:
            return options[0]
        root = Node()
        deadline = None
        if self.clock is not None and self.budget.seconds is not None:
            deadline = self.clock() + self.budget.seconds
        while self.iterations < self.budget.iterations:
            if deadline is not None and self.clock is not None and self.clock() >= deadline:
                break
            world = sample_world(self.state, self.seat, self.rnd)
            if world is None:
                return passive(options)
            if self.keep_worlds:
                self.worlds.append(world)
            self.iterations += 1
            self._iterate(root, world)
        visited = [(node.visits, node.total, option) for option, node in root.children.items()
                   if option in options]
        if not visited:
            return passive(options)
        return max(visited)[2]

    def _iterate(self, root: Node, world: RaceState) -> None:
        path = [root]
        st = world
        node = root
        start = _turn_key(st)
        expanded = False
        turns = 0
        last = start
        horizon = self.budget.horizon
        if horizon is None:
            horizon = len(st.order) - 1
        while st.phase != OVER and turns <= horizon:
            actor = seat_of(st)
            if actor == self.seat and not expanded:
                option, node, expanded = self._select(node, st)
                path.append(node)
            else:
                option = _model(st)
            try:
                st = advance(st, option)
            except (InputError, EngineError):
                break
            key = _turn_key(st)
            if key != last:
                turns += 1
                last = key
        value = evaluate(st, self.seat)
        for visited in path:
            visited.visits += 1
            visited.total += value

    def _select(self, node: Node, st: RaceState) -> tuple[str, Node, bool]:
        """The seat's input at ``node`` in this world (UCB over the inputs legal here), the
        child it leads to, and whether that child was just added (the tree grows by one)."""
        options = Resolver(st).options()
        fresh = [o for o in options if o not in node.children]
        for option in options:
            child = node.children.get(option)
            if child is not None:
                child.available += 1
        if fresh:
            option = fresh[self.rnd.randrange(len(fresh))]
            child = Node(available=1)
            node.children[option] = child
            return option, child, True
        c = self.budget.exploration
        best_option, best_value = options[0], -math.inf
        for option in options:
            child = node.children[option]
            value = child.total / child.visits + c * math.sqrt(
                math.log(child.available) / child.visits)
            if value > best_value:
                best_option, best_value = option, value
        return best_option, node.children[best_option], False


def search_move(
    state: RaceState,
    seat: int,
    budget: Budget,
    *,
    seed: int | None = None,
    clock: Clock | None = time.monotonic,
) -> str:
    """The searching player's answer for ``seat`` to the pending decision of ``state``.

    ``seed`` fixes the search's generator (tests); in play it comes from :mod:`secrets`.
    ``clock`` None searches by the iteration budget alone.
    """
    rnd = random.Random(seed if seed is not None else secrets.randbits(64))
    return Search(state, seat, budget, rnd, clock).run()


def bot_answer(race: Race, seat: int | None, level: str) -> str:
    """The answer at ``level`` (``easy``, ``normal`` or ``strong``) for the seat owing the
    pending decision: in Titan Race exactly one seat owes it (``seat`` adds nothing)."""
    owner = race.seat_to_act()
    if level not in BUDGETS or owner is None:
        return choose(race)
    return search_move(race.state, owner, BUDGETS[level])


__all__ = [
    "BUDGETS",
    "NORMAL_BUDGET",
    "STRONG_BUDGET",
    "Budget",
    "Node",
    "Search",
    "bot_answer",
    "evaluate",
    "sample_world",
    "search_move",
    "seat_of",
]
