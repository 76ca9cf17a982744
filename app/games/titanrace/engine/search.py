"""The searching computer players (levels ``normal`` and ``strong``): information-set Monte Carlo
tree search from one seat's point of view.

Each iteration of the search plays in a *sampled world* (:mod:`.worlds`): the true state with
everything the seat cannot see (the other hands, the deck's order, every future die) drawn again
from the search's own generator, which is seeded from the seat's view alone.

The tree holds the searching seat's own decisions (open loop: keyed by its inputs); the other
players are played in every world by a quick greedy model of them. A rollout stops a few turns
ahead and the position is scored by :func:`.evaluation.evaluate`, an estimate in [0, 1] of the
seat's chance to win fitted to races between easy players; a finished race scores 1 for the
winners (a whole team in the teams variant) and 0.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final

from app.games.errors import EngineError, InputError

from .bot import advance, choose, model
from .evaluation import evaluate
from .race import Race
from .rules import Resolver
from .state import OVER, RaceState
from .worlds import passive, sample_world, seat_of, seat_random

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


# ---------------------------------------------------------------------- the search


def _model(st: RaceState) -> str:
    return model(st, Resolver(st).options())


def _turn_key(st: RaceState) -> tuple[int, int]:
    return st.round, st.turn_index


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

    ``seed`` fixes the search's generator (tests); in play it is seeded from the seat's view
    (:func:`.worlds.seat_random`), so that the answer depends on nothing the seat cannot see.
    ``clock`` None searches by the iteration budget alone.
    """
    rnd = random.Random(seed) if seed is not None else seat_random(state, seat)
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
