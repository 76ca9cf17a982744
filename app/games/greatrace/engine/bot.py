"""The Great Race computer player: legal, fair and sensible, not clever.

It sees what its crew may see (its part of ``game.view(seat)``, :func:`.game.sight_view`: its own
hand, the public board, the counts of the bag and the deck, the public log) and nothing else, so
hidden information never changes its answer. It looks no input ahead; every decision is scored
from that view alone.

The strategy rests on one measure, the **cost to go**: a shortest path from each space to the
finish where entering a space costs one step of a drive plus weights for the petrol, the damage,
a STOP (the drive ends), a DANGER and a city stop (the drive ends, cards come in). A blank space
costs what the tiles still in the bag cost on average (the bag's contents are public, its order is
not), and a transport line costs its fare. From it:

- plan: mechanics to drive (and one more to repair a worn engine), funding for the petrol and the
  parts, a pathfinder when no tile leads forward, security when dangers lie ahead;
- a sequence: fund first, then repair, explore and drive; buy petrol just before driving (cheap
  in a city, only what is needed in the wilderness); play the cards that help now;
- a drive follows the cheapest path while a step lowers the cost to go;
- a tile is placed where it lowers our cost most (a bad tile where it hurts us least);
- damage goes to the CHASSIS while the ENGINE must keep running; a Saboteur's damage goes where
  it hurts the target most;
- cards are taken, kept and discarded by their worth to the crew now.
"""

from __future__ import annotations

import heapq
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from itertools import pairwise
from types import MappingProxyType
from typing import Any, Final, Generic, TypeVar

from app.games.cached import cached

from .board import (
    CITY,
    CITY_AT,
    NEIGHBOURS,
    RISK,
    SPACES,
    TERRAIN,
    Line,
    Space,
    finish_of,
    lines_from,
)
from .game import GreatRace, sight_view
from .notation import plan_of
from .pieces import (
    BOXES,
    MAX_CHASSIS,
    MAX_ENGINE,
    MAX_PETROL,
    PART_PRICE,
    PETROL_PRICE,
    TILE,
    TILES,
    TRANSPORT_SAVING,
    Box,
    Card,
    Crew,
    TileCode,
)

STEP: Final = 1.0
"""One space of a drive's ENGINE allowance: the unit of the cost to go."""
PETROL_WEIGHT: Final = 0.5
DAMAGE_WEIGHT: Final = 0.7
STOP_WEIGHT: Final = 2.0
"""A STOP ends the drive: the rest of the allowance is lost."""
DANGER_WEIGHT: Final = 1.2
CITY_WEIGHT: Final = 1.5
"""A city ends the drive too, but its cards are worth something."""
CARD_WORTH: Final = 0.4
BLANK_DOUBT: Final = 0.3
"""An unknown tile may turn out too dear and end the drive where it is."""
FRANC_WEIGHT: Final = 0.02
WORTH_A_CARD: Final = 0.5
"""The least gain in cost to go for which a tile-moving card is played."""

ENGINE_VALUE: Final = (-30.0, 3.0, 6.0, 8.5, 10.5, 12.0)
"""What each ENGINE level is worth to the crew: 0 is a breakdown, and every level is a space a
drive may enter."""
CHASSIS_VALUE: Final = (-2.0, 2.5, 4.5, 6.0, 7.0, 7.5)
"""What each CHASSIS level is worth: the hand limit, which seldom binds above 3."""
LOST_CARD: Final = 2.5

CARD_BASE: Final[dict[Card, float]] = {
    "refueling-station": 6.0,
    "driver": 6.0,
    "financial": 5.0,
    "cartographer": 4.0,
    "topographer": 3.5,
    "toolbox": 3.0,
    "repairman": 3.0,
    "tracker": 3.0,
    "militia": 3.0,
    "guide": 3.0,
    "jerrycan": 3.0,
    "saboteur": 3.0,
    "spare-parts": 2.0,
    "transport": 1.5,
    "trail-hunter": 1.5,
    "con-artist": 1.5,
}
DRIVE_STARTS: Final = ("drive", "play driver")
T = TypeVar("T")


# ---------------------------------------------------------------------- what the crew sees


@dataclass
class Sight:
    """The decision as ``crew`` sees it: its own view of the game, its options and the log."""

    crew: Crew
    view: dict[str, Any]
    options: list[str]
    inputs: list[str]

    @property
    def me(self) -> dict[str, Any]:
        crew: dict[str, Any] = self.view["crews"][self.crew]
        return crew

    @property
    def pending(self) -> dict[str, Any]:
        pending: dict[str, Any] = self.view["pending"]
        return pending

    @property
    def hand(self) -> list[Card]:
        hand: list[Card] = self.me["hand"]
        return hand

    @property
    def tiles(self) -> dict[Space, TileCode]:
        tiles: dict[Space, TileCode] = self.view["tiles"]
        return tiles

    @cached
    def finish(self) -> Space:
        return CITY[finish_of(self.view["start"])].space

    @property
    def in_city(self) -> bool:
        return self.me["space"] in CITY_AT

    def price(self, table: dict[str, int]) -> int:
        return table["city" if self.in_city else "wild"]

    def rivals(self) -> list[Crew]:
        """The other crews still racing, front of the track first."""
        crews = self.view["crews"]
        return [name for name in self.view["track"]
                if name != self.crew and crews[name]["finished"] is None]

    @cached
    def bag(self) -> Counter[TileCode]:
        """The tiles still in the bag: all of them less those seen (the order stays hidden),
        in the order of :data:`TILES` (``Counter(TILES) - seen``, counted without Counters)."""
        left = dict(TILES)
        for seen in (self.tiles.values(), self.view["removed"], self.view["drawn"]):
            for tile in seen:
                left[tile] = left.get(tile, 0) - 1
        return Counter({tile: n for tile, n in left.items() if n > 0})

    @cached
    def blank(self) -> dict[bool, float]:
        """The expected cost of entering a blank space, outside and inside a risk zone."""
        total = sum(self.bag.values())
        if total == 0 or self.view["bag"] == 0:
            return {risk: STEP + (2 + risk) * PETROL_WEIGHT for risk in (False, True)}
        return {
            risk: BLANK_DOUBT + sum(TILE_COST[t, risk] * n for t, n in self.bag.items()) / total
            for risk in (False, True)
        }

    def enter_cost(self, space: Space) -> float:
        if space == self.finish:
            return FINISH_COST
        city = CITY_COST.get(space)
        if city is not None:
            return city
        tile = self.tiles.get(space)
        risk = space in RISK
        return self.blank[risk] if tile is None else TILE_COST[tile, risk]

    @cached
    def played(self) -> list[str]:
        """Our inputs in the drive being answered (empty outside a drive)."""
        return drive_so_far(self.inputs) if self.pending["kind"] == "drive" else []

    def fare_saving(self, kind: str) -> int:
        """What the Transport cards in hand or played in this drive and the English leader's
        power can take off a line's fare."""
        transports = self.hand.count("transport") + self.played.count("play transport")
        saving = TRANSPORT_SAVING * transports
        english = kind == "sea" and self.view["leaders"] and self.crew == "english"
        if english and (not self.me["leader_used"] or "leader" in self.played):
            saving += TRANSPORT_SAVING
        return saving

    def line_fares(self, space: Space) -> list[tuple[Space, int]]:
        """The cities a transport line from ``space`` reaches that we can pay for, and fares."""
        city = CITY_AT.get(space)
        if city is None:
            return []
        fares = []
        for line in LINES_FROM[city.slug]:
            fare = max(0, line.cost - self.fare_saving(line.kind))
            if fare <= self.me["money"]:
                fares.append((CITY[line.other(city.slug)].space, fare))
        return fares

    @cached
    def entering(self) -> dict[Space, float]:
        """:meth:`enter_cost` of every space (worked out once: the shortest paths ask often;
        remembered across decisions by :attr:`board_key`, all it depends on)."""
        return _ENTERING.get(self.board_key, self._entering)

    def _entering(self) -> dict[Space, float]:
        """:meth:`enter_cost` of every space, with the board's tables read once."""
        finish, tiles = self.finish, self.tiles
        found: dict[Space, float] = {}
        for space, city, risk in ENTRIES:
            if space == finish:
                found[space] = FINISH_COST
            elif city is not None:
                found[space] = city
            else:
                tile = tiles.get(space)
                found[space] = self.blank[risk] if tile is None else TILE_COST[tile, risk]
        return found

    @cached
    def fares(self) -> dict[Space, list[tuple[Space, int]]]:
        """:meth:`line_fares` of every city space with a line we can pay for (remembered by
        all they depend on: the savings, and the money up to the dearest fare)."""
        key = (min(int(self.me["money"]), MOST_FARE), self.fare_saving("sea"),
               self.fare_saving("air"))
        return _FARES.get(key, self._fares)

    def _fares(self) -> dict[Space, list[tuple[Space, int]]]:
        found = {space: self.line_fares(space) for space in LINE_CITIES}
        return {space: fares for space, fares in found.items() if fares}

    def moves(self, space: Space) -> Iterable[tuple[Space, float]]:
        """Where a vehicle on ``space`` may go next, and what entering costs."""
        entering = self.entering
        for near in NEIGHBOURS[space]:
            yield near, entering[near]
        for end, fare in self.fares.get(space, ()):
            yield end, entering[end] + fare * FRANC_WEIGHT

    def moves_into(self, space: Space) -> Iterable[tuple[Space, float]]:
        """Where a vehicle may come from to enter ``space``, and what entering costs."""
        cost = self.entering[space]
        for near in NEIGHBOURS[space]:
            yield near, cost
        for end, fare in self.fares.get(space, ()):
            yield end, cost + fare * FRANC_WEIGHT

    @cached
    def board_key(self) -> tuple[Any, ...]:
        """Everything the cost of entering a space depends on: the finish, the tiles, the bag's
        contents (told by the tiles out of it besides those on the board, cheaper to read than
        :attr:`bag`) and whether it is empty."""
        out = sorted((*self.view["removed"], *self.view["drawn"]))
        return (self.finish, frozenset(self.tiles.items()), tuple(out), self.view["bag"] == 0)

    @cached
    def paths_key(self) -> tuple[Any, ...]:
        """Everything the costs of moving depend on: :attr:`board_key` and the lines the crew
        can pay for, with their fares (so money that changes no fare changes no path)."""
        return (*self.board_key, tuple((space, tuple(fares)) for space, fares in
                                       sorted(self.fares.items())))

    @cached
    def to_go(self) -> dict[Space, float]:
        """The cost to go from every space to the finish (a space's cost is paid on entering
        it, so the search runs backwards from the finish)."""
        return _remembered(("to_go", self.paths_key),
                           lambda: shortest_into(self.finish, self.entering, self.fares))

    @cached
    def from_here(self) -> dict[Space, float]:
        """The cost of reaching every space from the vehicle."""
        return _remembered(("from", self.me["space"], self.paths_key),
                           lambda: shortest_from(self.me["space"], self.entering, self.fares))

    def slack(self, space: Space) -> float:
        """How much dearer the best route through ``space`` is than the best route (0: on it);
        remembered for the decision (a tile is weighed on each space it may go to)."""
        found = self.slacks.get(space)
        if found is None:
            here = self.to_go[self.me["space"]]
            found = self.slacks[space] = (self.from_here.get(space, 1e9)
                                          + self.to_go.get(space, 1e9) - here)
        return found

    @cached
    def slacks(self) -> dict[Space, float]:
        """:meth:`slack` of the spaces asked about so far."""
        return {}

    def tile_change(self, space: Space, old: float, new: float) -> float:
        """Roughly how much our cost to go changes when entering ``space`` costs ``new``, not
        ``old``: a gain counts when the space is near our route, a loss when it is on it."""
        delta = new - old
        slack = self.slack(space)
        return max(0.0, delta - slack) if delta > 0 else min(0.0, delta + slack)

    def danger_ahead(self, steps: int = 6) -> bool:
        """A DANGER tile on or next to the next spaces of our best route."""
        for space in self.route()[:steps]:
            for near in (space, *NEIGHBOURS[space]):
                tile = self.tiles.get(near)
                if tile is not None and TILE[tile].danger and self.slack(near) < 1.0:
                    return True
        return False

    def route(self) -> list[Space]:
        """The spaces of the best route from the vehicle to the finish."""
        return list(_ROUTES.get(("route", self.me["space"], self.paths_key), self._route))

    def _route(self) -> list[Space]:
        path: list[Space] = []
        space = self.me["space"]
        to_go, entering, fares = self.to_go, self.entering, self.fares
        while space != self.finish and len(path) < 40:
            # min over moves(space) by (cost + to_go, space), written out
            best: tuple[float, Space] | None = None
            for near in NEIGHBOURS[space]:
                key = (entering[near] + to_go[near], near)
                if best is None or key < best:
                    best = key
            for end, fare in fares.get(space, ()):
                key = ((entering[end] + fare * FRANC_WEIGHT) + to_go[end], end)
                if best is None or key < best:
                    best = key
            assert best is not None
            nxt = best[1]
            path.append(nxt)
            space = nxt
        return path


LINES_FROM: Final[dict[str, tuple[Line, ...]]] = {slug: lines_from(slug) for slug in CITY}
LINE_CITIES: Final = tuple(space for space, city in CITY_AT.items() if LINES_FROM[city.slug])
"""The city spaces with a transport line."""
PATHS_REMEMBERED: Final = 2048
"""Shortest-path tables kept for reuse (the searching players ask for the same ones many
times); the answers are the same as computing them afresh."""
MOST_FARE: Final = 150


class Memo(Generic[T]):
    """A bounded table of computed values (emptied when full)."""

    def __init__(self) -> None:
        self.table: dict[tuple[Any, ...], T] = {}

    def get(self, key: tuple[Any, ...], compute: Callable[[], T]) -> T:
        found = self.table.get(key)
        if found is None:
            if len(self.table) >= PATHS_REMEMBERED:
                self.table.clear()
            found = self.table[key] = compute()
        return found


_PATHS: Memo[dict[Space, float]] = Memo()
_ROUTES: Memo[list[Space]] = Memo()
_ENTERING: Memo[dict[Space, float]] = Memo()
_FARES: Memo[dict[Space, list[tuple[Space, int]]]] = Memo()


def _remembered(
    key: tuple[Any, ...], compute: Callable[[], dict[Space, float]]
) -> dict[Space, float]:
    return _PATHS.get(key, compute)


def tile_cost(tile: TileCode, risk: bool) -> float:
    info = TILE[tile]
    return (
        STEP
        + (info.petrol + risk) * PETROL_WEIGHT
        + info.damage * DAMAGE_WEIGHT
        + STOP_WEIGHT * info.stop
        + DANGER_WEIGHT * info.danger
    )


TILE_COST: Final[dict[tuple[TileCode, bool], float]] = {
    (tile, risk): tile_cost(tile, risk) for tile in TILE for risk in (False, True)}
""":func:`tile_cost` of every tile, outside and inside a risk zone."""
FINISH_COST: Final = STEP + PETROL_WEIGHT
"""What entering the finish costs (a city whose cards do not count)."""
CITY_COST: Final[dict[Space, float]] = {
    space: STEP + PETROL_WEIGHT + CITY_WEIGHT - CARD_WORTH * city.cards
    for space, city in CITY_AT.items()}
"""What entering each city costs (the finish apart): the drive ends, the cards come in."""
ENTRIES: Final[tuple[tuple[Space, float | None, bool], ...]] = tuple(
    (space, CITY_COST.get(space), space in RISK) for space in SPACES)
"""Every space with what entering it costs when that is fixed (a city) and whether it lies in
a risk zone, in board order (:meth:`Sight._entering` walks them)."""


def shortest_into(
    finish: Space, entering: dict[Space, float], fares: dict[Space, list[tuple[Space, int]]]
) -> dict[Space, float]:
    """:func:`shortest` from ``finish`` over :meth:`Sight.moves_into`, written out on numbered
    spaces (the searching players ask for thousands of them): the same sums in the same order,
    the queue's ties broken alike (the numbers follow the names), so the same costs to the last
    bit, in the same order."""
    enter = [entering[space] for space in NAMES]
    lines = _numbered(fares)
    source = NUMBER[finish]
    best = [UNSEEN] * len(NAMES)
    best[source] = 0.0
    found = [source]
    queue = [(0.0, source)]
    pop, push, near_of = heapq.heappop, heapq.heappush, NEAR
    while queue:
        cost, space = pop(queue)
        if cost > best[space]:
            continue
        here = enter[space]
        total = cost + here
        for near in near_of[space]:
            if total < best[near]:
                if best[near] == UNSEEN:
                    found.append(near)
                best[near] = total
                push(queue, (total, near))
        for end, fare in lines.get(space, ()):
            total = cost + (here + fare * FRANC_WEIGHT)
            if total < best[end]:
                if best[end] == UNSEEN:
                    found.append(end)
                best[end] = total
                push(queue, (total, end))
    return {NAMES[space]: best[space] for space in found}


def shortest_from(
    source: Space, entering: dict[Space, float], fares: dict[Space, list[tuple[Space, int]]]
) -> dict[Space, float]:
    """:func:`shortest` from ``source`` over :meth:`Sight.moves`, written out like
    :func:`shortest_into`."""
    enter = [entering[space] for space in NAMES]
    lines = _numbered(fares)
    start = NUMBER[source]
    best = [UNSEEN] * len(NAMES)
    best[start] = 0.0
    found = [start]
    queue = [(0.0, start)]
    pop, push, near_of = heapq.heappop, heapq.heappush, NEAR
    while queue:
        cost, space = pop(queue)
        if cost > best[space]:
            continue
        for near in near_of[space]:
            total = cost + enter[near]
            if total < best[near]:
                if best[near] == UNSEEN:
                    found.append(near)
                best[near] = total
                push(queue, (total, near))
        for end, fare in lines.get(space, ()):
            total = cost + (enter[end] + fare * FRANC_WEIGHT)
            if total < best[end]:
                if best[end] == UNSEEN:
                    found.append(end)
                best[end] = total
                push(queue, (total, end))
    return {NAMES[space]: best[space] for space in found}


NAMES: Final[tuple[Space, ...]] = tuple(sorted(SPACES))
"""The spaces numbered in the order of their names, so that a queue of (cost, number) breaks
its ties as one of (cost, name) does."""
NUMBER: Final[dict[Space, int]] = {space: i for i, space in enumerate(NAMES)}
NEAR: Final[tuple[tuple[int, ...], ...]] = tuple(
    tuple(NUMBER[near] for near in NEIGHBOURS[space]) for space in NAMES)
""":data:`NEIGHBOURS` by number, in the same order."""
UNSEEN: Final = 1e18
"""The cost of a space the search has not reached (more than any real cost)."""


def _numbered(fares: dict[Space, list[tuple[Space, int]]]) -> dict[int, list[tuple[int, int]]]:
    return {NUMBER[space]: [(NUMBER[end], fare) for end, fare in ends]
            for space, ends in fares.items()}


def shortest(
    source: Space, edges: Callable[[Space], Iterable[tuple[Space, float]]]
) -> dict[Space, float]:
    """Dijkstra from ``source`` over ``edges`` (space -> (next space, cost) pairs)."""
    best = {source: 0.0}
    queue = [(0.0, source)]
    while queue:
        cost, space = heapq.heappop(queue)
        if cost > best[space]:
            continue
        for near, step in edges(space):
            total = cost + step
            if total < best.get(near, 1e18):
                best[near] = total
                heapq.heappush(queue, (total, near))
    return best


# ---------------------------------------------------------------------- the entry point


def choose(game: GreatRace, crew: Crew | None = None) -> str:
    """The computer's answer for ``crew`` (default: the crew that owes the pending decision).

    Always one of ``game.options(crew)``: should :func:`think` ever answer something else (a bug
    the tests look for), the last option (pass, stop, done, take...) is given instead.
    """
    name, options = _owed(game, crew)
    answer = _think(game, name, options) if len(options) > 1 else options[0]
    return answer if answer in options else options[-1]


def think(game: GreatRace, crew: Crew | None = None) -> str:
    """The strategy's answer, from what ``crew`` may see: its own view and the public log."""
    name, options = _owed(game, crew)
    return _think(game, name, options)


def _think(game: GreatRace, name: Crew, options: list[str]) -> str:
    if len(options) == 1:
        return options[0]
    # the log and the state are read, never changed, while the decision is worked out: no copy
    sight = Sight(name, sight_view(game.state, name, options), options, game.inputs)
    return DECIDERS[sight.pending["kind"]](sight)


def _owed(game: GreatRace, crew: Crew | None) -> tuple[Crew, list[str]]:
    seats = game.to_act()
    assert seats, "the race is over"
    name = crew if crew is not None else game.crew_of(seats[0])
    options = game.options(name)
    assert options, f"the {name} crew owes no decision"
    return name, options


def first_of(sight: Sight, *wanted: str) -> str | None:
    return next((w for w in wanted if w in sight.options), None)


# ---------------------------------------------------------------------- cards


def card_value(sight: Sight, card: Card) -> float:
    """What a card in hand is worth to the crew now."""
    me = sight.me
    value = CARD_BASE.get(card, 1.0)
    worn = MAX_ENGINE - me["engine"] + MAX_CHASSIS - me["chassis"]
    if card in ("spare-parts", "toolbox", "repairman"):
        value += min(worn, 3)
    elif card in ("jerrycan", "refueling-station"):
        value += 2.0 if me["petrol"] <= 4 else 0.0
    elif card == "transport":
        value += 3.0 if line_on_route(sight) else 0.0
    elif card == "saboteur":
        value += 1.0 if ahead_of_me(sight) else 0.0
    elif card == "militia":
        value += 1.0 if sight.danger_ahead() else 0.0
    return value


def line_on_route(sight: Sight) -> bool:
    """Whether our best route takes a transport line."""
    route = [sight.me["space"], *sight.route()]
    return any(line_to(a, b) is not None for a, b in pairwise(route))


def ahead_of_me(sight: Sight) -> Crew | None:
    """The rival furthest along the track, when it is at least as far as we are."""
    rivals = sight.rivals()
    if not rivals:
        return None
    leader = rivals[0]
    return leader if sight.view["crews"][leader]["progress"] >= sight.me["progress"] else None


def decide_take(sight: Sight) -> str:
    return max(sight.options, key=lambda o: (card_value(sight, o.split()[1]), o))


def decide_discard(sight: Sight) -> str:
    worst = min(set(sight.hand), key=lambda c: (card_value(sight, c), c))
    if worst == "jerrycan" and "play jerrycan" in sight.options:
        return "play jerrycan"
    return f"discard {worst}"


def decide_keep(sight: Sight) -> str:
    return max(sight.options,
               key=lambda o: (sum(card_value(sight, c) for c in o.split()[1:]), o))


# ---------------------------------------------------------------------- planning


def wanted_plan(sight: Sight) -> dict[Box, int]:
    """How the crew would place its five assistants now."""
    me = sight.me
    hand = sight.hand
    price = PETROL_PRICE["city" if sight.in_city else "wild"]
    fuel = me["petrol"] + me["money"] // price + hand.count("jerrycan")
    fuel += 5 * hand.count("refueling-station")
    mechanics = 3 if fuel >= 8 else 2 if fuel >= 3 else 1
    if needs_repair(sight) and not ("repairman" in hand or _leader_repairs(sight)):
        mechanics = min(mechanics + 1, 3)
    # Driving into the unknown places tiles too (and moves): a pathfinder only pays when the
    # crew can hardly drive this turn and no tile leads forward.
    pathfinders = 1 if mechanics <= 1 and not tiles_lead_forward(sight) else 0
    security = 1 if sight.danger_ahead() else 0
    funding = 5 - mechanics - pathfinders - security
    return {"P": pathfinders, "M": mechanics, "S": security, "F": funding}


def decide_plan(sight: Sight) -> str:
    wanted = wanted_plan(sight)
    return min(sight.options, key=lambda o: (plan_distance(plan_counts(o), wanted), o))


def plan_distance(plan: Mapping[Box, int], wanted: Mapping[Box, int]) -> int:
    return sum(abs(plan[box] - wanted[box]) for box in BOXES)


@cache
def plan_counts(option: str) -> Mapping[Box, int]:
    """The boxes of a canonical plan input, read once (the plans are asked for very often)."""
    return MappingProxyType(plan_of(option)[1])


def needs_repair(sight: Sight) -> bool:
    return int(sight.me["engine"]) <= 2


def _leader_repairs(sight: Sight) -> bool:
    return bool(sight.view["leaders"] and sight.crew == "italian")


def tiles_lead_forward(sight: Sight) -> bool:
    """Whether a tile or city lies on the first steps of our best route."""
    return any(s in sight.tiles or s in CITY_AT for s in sight.route()[:2])


# ---------------------------------------------------------------------- a convoy sequence


def decide_turn(sight: Sight) -> str:
    action = assistant_action(sight)
    if sight.options[0].startswith("buy "):
        bought = petrol_to_buy(sight, driving=action == "drive" or "play driver" in sight.options)
        if bought:
            return f"buy {bought}"
    return card_to_play(sight) or action


def petrol_to_buy(sight: Sight, driving: bool) -> int:
    """Petrol to buy before driving: a full tank in a city, enough to go on in the wilderness."""
    if not driving:
        return 0
    petrol: int = sight.me["petrol"]
    target = MAX_PETROL if sight.in_city else 6
    most = max((int(o.split()[1]) for o in sight.options if o.startswith("buy ")), default=0)
    return max(0, min(target - petrol, most))


def card_to_play(sight: Sight) -> str | None:
    me = sight.me
    hand = sight.hand
    if "play financial" in sight.options:
        return "play financial"
    if me["petrol"] <= 5 and "play refueling-station" in sight.options:
        return "play refueling-station"
    if needs_repair(sight) and can_mend(sight):
        found = first_of(sight, "play repairman", *(["leader"] if _leader_repairs(sight) else []))
        if found:
            return found
    if sight.view["bag"] and placing_helps(sight):
        found = first_of(sight, "play cartographer", "play topographer",
                         *(["leader"] if sight.crew == "french" else []))
        if found:
            return found
    if "play tracker" in sight.options and len(hand) < me["chassis"]:
        return "play tracker"
    target = ahead_of_me(sight)
    if target is not None:
        found = first_of(sight, f"play saboteur {target}")
        if found:
            return found
    best = best_tile_card(sight)
    if best is not None:
        return best
    if me["petrol"] <= 2 and "play jerrycan" in sight.options:
        return "play jerrycan"
    if "play driver" in sight.options and me["engine"] > 0 and can_set_off(sight):
        return "play driver"
    return None


def can_mend(sight: Sight) -> bool:
    hand = sight.hand
    return ("spare-parts" in hand or "toolbox" in hand
            or sight.me["money"] >= sight.price(PART_PRICE))


def placing_helps(sight: Sight) -> bool:
    return any(s not in sight.tiles and s in TERRAIN for s in sight.route()[:3])


def best_tile_card(sight: Sight) -> str | None:
    """A Trail Hunter or Con Artist that lowers our cost to go enough, if any."""
    best, gain = None, WORTH_A_CARD
    for option in sight.options:
        words = option.split()
        if words[0] != "play" or words[1] not in ("trail-hunter", "con-artist"):
            continue
        change = tile_card_change(sight, words[1], words[2:])
        if -change > gain:
            best, gain = option, -change
    return best


def tile_card_change(sight: Sight, card: Card, spaces: list[Space]) -> float:
    """How our cost to go changes if ``card`` hits ``spaces`` (negative: it helps us)."""
    tiles = sight.tiles
    if card == "trail-hunter":
        return sum(sight.tile_change(s, sight.enter_cost(s), sight.blank[s in RISK])
                   for s in spaces)
    a, b = spaces
    return (sight.tile_change(a, sight.enter_cost(a), tile_cost(tiles[b], a in RISK))
            + sight.tile_change(b, sight.enter_cost(b), tile_cost(tiles[a], b in RISK)))


def assistant_action(sight: Sight) -> str:
    """The assistant action that ends this sequence."""
    me = sight.me
    boxes = me["assistants"]
    if "fund" in sight.options:
        return "fund"
    if boxes["M"] and needs_repair(sight) and can_mend(sight):
        return "repair"
    if boxes["P"] and sight.view["bag"] and placing_helps(sight):
        return "scout"
    if boxes["M"] and me["engine"] > 0 and can_set_off(sight):
        return "drive"
    if boxes["P"]:
        return "draw"
    if boxes["M"] and can_mend(sight) and me["engine"] < MAX_ENGINE:
        return "repair"
    return best_guard(sight) or "pass"


def can_set_off(sight: Sight) -> bool:
    """Whether the first step of our route is within reach of the petrol we have or can buy."""
    me = sight.me
    route = sight.route()
    buyable = me["money"] // sight.price(PETROL_PRICE) if sight.options[0].startswith("buy") else 0
    fuel = me["petrol"] + buyable + sight.hand.count("jerrycan")
    return bool(route) and fuel >= petrol_needed(sight, route[0])


def best_guard(sight: Sight) -> str | None:
    best, gain = None, 0.0
    for option in sight.options:
        if option.startswith("guard "):
            space = option.split()[1]
            change = sight.tile_change(space, sight.enter_cost(space), sight.blank[space in RISK])
            if -change > gain:
                best, gain = option, -change
    return best


# ---------------------------------------------------------------------- placing and driving


def decide_place(sight: Sight) -> str:
    def change(option: str) -> tuple[float, float, str]:
        _, tile, space = option.split()
        risk = space in RISK
        return (sight.tile_change(space, sight.blank[risk], tile_cost(tile, risk)),
                sight.to_go.get(space, 1e9), option)

    return min(sight.options, key=change)


def decide_drive(sight: Sight) -> str:
    """Follow the best route: first play what its next step needs (petrol, a Guide for a STOP,
    a fare saving for a line), else take the best legal step that lowers the cost to go."""
    route = sight.route()
    if route:
        wanted = route[0]
        helper = drive_helper(sight, wanted)
        if helper is not None:
            return helper
        if f"go {wanted}" in sight.options:
            return f"go {wanted}"
    step = best_step(sight)
    return "stop" if step is None else f"go {step}"


def best_step(sight: Sight) -> Space | None:
    """The legal step that lowers our cost to go most, if any does."""
    here = sight.me["space"]
    to_go = sight.to_go
    steps = [o.split()[1] for o in sight.options if o.startswith("go ")]
    better = [s for s in steps if to_go.get(s, 1e9) < to_go[here]]
    if not better:
        return None
    return min(better, key=lambda s: (step_cost(sight, here, s) + to_go[s], s))


def step_cost(sight: Sight, here: Space, space: Space) -> float:
    """The cost of entering ``space`` from ``here``, by a neighbour or by a transport line."""
    if space in NEIGHBOURS[here]:
        return sight.enter_cost(space)
    fare = next((fare for end, fare in sight.line_fares(here) if end == space), None)
    return 1e9 if fare is None else sight.enter_cost(space) + fare * FRANC_WEIGHT


def petrol_needed(sight: Sight, space: Space) -> int:
    if space in CITY_AT:
        return 1
    risk = 1 if space in RISK else 0
    tile = sight.tiles.get(space)
    if tile is not None:
        return TILE[tile].petrol + risk
    return 1 + risk if sight.view["bag"] else 2 + risk


def drive_helper(sight: Sight, space: Space) -> str | None:
    """A card or power to play before entering ``space``, if that step needs one."""
    here = sight.me["space"]
    if sight.me["petrol"] < petrol_needed(sight, space):
        return first_of(sight, "play jerrycan")
    tile = sight.tiles.get(space)
    allowance = sight.pending.get("allowance", 0) - sight.pending.get("entered", 0)
    if (tile is not None and TILE[tile].stop and allowance > 1 and "play guide" in sight.options
            and sight.played.count("play guide") <= _stops_crossed(sight)):
        return "play guide"
    line = line_to(here, space)
    if line is None or sight.me["money"] >= fare_now(sight, line):
        return None
    if line.kind == "sea" and "leader" in sight.options:
        return "leader"
    return first_of(sight, "play transport")


def line_to(here: Space, space: Space) -> Line | None:
    """The transport line from the city on ``here`` to the city on ``space``, if one joins them
    and they are not neighbours (then the step is a plain one)."""
    if here not in CITY_AT or space not in CITY_AT or space in NEIGHBOURS[here]:
        return None
    slug = CITY_AT[here].slug
    return next((ln for ln in lines_from(slug) if CITY[ln.other(slug)].space == space), None)


def fare_now(sight: Sight, line: Line) -> int:
    """The line's fare with what this drive has already played against it."""
    saving = TRANSPORT_SAVING * sight.played.count("play transport")
    if line.kind == "sea" and "leader" in sight.played:
        saving += TRANSPORT_SAVING
    return max(0, line.cost - saving)


def drive_so_far(inputs: list[str]) -> list[str]:
    """The inputs since the last drive began (the drive being answered, during one)."""
    for at in range(len(inputs) - 1, -1, -1):
        if inputs[at] in DRIVE_STARTS:
            return inputs[at + 1:]
    return []


def _stops_crossed(sight: Sight) -> int:
    entered = [w.split()[1] for w in sight.played if w.startswith("go ")]
    return sum(1 for s in entered if s in sight.tiles and TILE[sight.tiles[s]].stop)


# ---------------------------------------------------------------------- repairs and damage


def decide_repair(sight: Sight) -> str:
    me = sight.me
    engine, chassis = me["engine"], me["chassis"]
    if engine < MAX_ENGINE and "play spare-parts E" in sight.options:
        return "play spare-parts E"
    missing = MAX_ENGINE - engine + MAX_CHASSIS - chassis
    if missing >= 2 or engine <= 2:
        to_engine = min(3, MAX_ENGINE - engine)
        found = first_of(sight, f"play toolbox {_parts(to_engine, 3 - to_engine)}")
        if found:
            return found
    if chassis < MAX_CHASSIS and "play spare-parts C" in sight.options:
        return "play spare-parts C"
    price = sight.price(PART_PRICE)
    spare = me["money"] - price
    if "buy E" in sight.options and (engine <= 2 or (sight.in_city and engine < 4 and spare >= 40)):
        return "buy E"
    if "buy C" in sight.options and chassis <= 1 and spare >= 30:
        return "buy C"
    return "done"


def _parts(engine: int, chassis: int) -> str:
    return " ".join(f"{g}{n}" for g, n in (("E", engine), ("C", chassis)) if n)


def gauge_value(engine: int, chassis: int, hand: int) -> float:
    return ENGINE_VALUE[engine] + CHASSIS_VALUE[chassis] - LOST_CARD * max(0, hand - chassis)


def decide_damage(sight: Sight) -> str:
    target_name = sight.pending.get("target", sight.crew)
    target = sight.view["crews"][target_name]
    hand = target["hand"] if isinstance(target["hand"], int) else len(target["hand"])
    sign = 1.0 if target_name == sight.crew else -1.0

    def value(option: str) -> tuple[float, float]:
        parts = {w[0]: int(w[1:]) for w in option.split()[1:]}
        engine = parts.get("E", 0)
        after = gauge_value(target["engine"] - engine, target["chassis"] - parts.get("C", 0), hand)
        return sign * after, -sign * engine

    return max(sight.options, key=value)


def decide_avoid(sight: Sight) -> str:
    danger = sight.pending.get("danger")
    if danger in ("trail-hunter", "con-artist") and not danger_card_hurts(sight, danger):
        return "take"
    return first_of(sight, "guard", "play militia") or "take"


def danger_card_hurts(sight: Sight, card: Card) -> bool:
    """Whether the Trail Hunter or Con Artist being played would raise our cost to go."""
    played = next((i for i in reversed(sight.inputs) if i.startswith(f"play {card} ")), None)
    if played is None:
        return False
    spaces = [s for s in played.split()[2:] if s in sight.tiles]
    if card == "con-artist" and len(spaces) != 2:
        return False
    return tile_card_change(sight, card, spaces) > 0


DECIDERS: Final[dict[str, Callable[[Sight], str]]] = {
    "take": decide_take,
    "discard": decide_discard,
    "keep": decide_keep,
    "plan": decide_plan,
    "turn": decide_turn,
    "place": decide_place,
    "drive": decide_drive,
    "repair": decide_repair,
    "damage": decide_damage,
    "avoid": decide_avoid,
}
