"""The Great Race's normal and strong computer players: information-set Monte Carlo search over
the decision at hand, with the easy player (:mod:`.bot`) as the model of every crew afterwards.

Each iteration samples a **world** from what the deciding crew may see (:func:`sample_world`):
the other crews' hands dealt again from the cards it cannot see, the bag and the deck shuffled,
the other crews' sealed plans guessed, and a fresh random source from the search's own
generator (never the game's: that would tell future tiles and cards). It then picks one of the
decision's candidate answers by UCB1, plays it in that world, lets the easy player carry on for
every crew up to a depth cut-off (or the end of the race) and scores the result for the deciding
crew in [0, 1] (:func:`evaluate`). The answer is the candidate most visited. The tree is one
level deep (the decision at hand): the easy player, a cost-to-go heuristic, is a sound model of
what follows, and the race's decisions come thick (a turn is dozens of them), so the iterations
are spent where the choice is made.

Fairness: a world depends only on the crew's view of the game and the search's generator, so
changing what the crew cannot see changes neither the worlds nor the answer (the tests check).
"""

from __future__ import annotations

import math
import os
import random
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

from app.games.errors import EngineError
from app.games.logged import Suspended
from app.games.rng import Rng

from .bot import Sight, choose, decide_plan, plan_distance
from .game import GreatRace, _execute, state_view, step_state
from .notation import all_plans, plan_of
from .pieces import PLACE_PRESTIGE, TILES, Card, Crew, deck_cards
from .state import CONVOY, PLANNING, GreatRaceState

NORMAL: Final = "normal"
STRONG: Final = "strong"


@dataclass(frozen=True)
class Budget:
    """How much a decision may search: a time cap (seconds, None: none) and an iteration cap,
    with the rollout's depth cut-off (inputs played after the candidate)."""

    seconds: float | None
    iterations: int
    depth: int
    explore: float = 0.35
    """The UCB1 exploration constant (values lie in [0, 1])."""


BUDGETS: Final[dict[str, Budget]] = {
    NORMAL: Budget(seconds=0.15, iterations=300, depth=24),
    STRONG: Budget(seconds=0.8, iterations=4000, depth=40),
}
PRIOR_VISITS: Final = 2
"""The easy player's own answer starts with this many visits at an even score: the search
leaves it only for an answer that proves better."""
WORLD_TRIES: Final = 6
"""Sampled worlds that do not replay to what the crew sees (rare, e.g. a deck shuffled in the
middle of an action) are drawn again this many times before the search gives up."""
TO_GO_WEIGHT: Final = 0.45
"""Prestige points one unit of cost to go is worth in the evaluation (a turn's drive covers
some twenty units, and a crew a turn behind usually does not finish at all)."""
CARD_POINTS: Final = 0.3
TEMPERATURE: Final = 3.0
"""Prestige points between two crews that make the evaluation's logistic move from 0.5 to
about 0.73."""
UNFINISHED: Final = -10.0
"""What not finishing costs in prestige when the race ends (only finishers score)."""
PLAN_GUESS: Final = 0.75
"""How often another crew's sealed plan is guessed as the easy player would plan in the sampled
world (otherwise uniformly among its plans)."""
MOST_CANDIDATES: Final = 14


# ---------------------------------------------------------------------- worlds


def sample_world(game: GreatRace, seat: int, rnd: random.Random) -> GreatRace | None:
    """A world ``seat``'s crew cannot tell from the true game, drawn with ``rnd``: every hidden
    part replaced from what the crew sees. None when no consistent world was found."""
    crew = game.crew_of(seat)
    seen = state_view(game.state, viewer=crew, full=False)
    for _ in range(WORLD_TRIES):
        state = _sample_state(game.state, crew, rnd)
        if state is not None and state_view(state, viewer=crew, full=False) == seen:
            world = GreatRace(state, game.initial)
            world.inputs = list(game.inputs)
            return world
    return None


def _sample_state(st: GreatRaceState, crew: Crew, rnd: random.Random) -> GreatRaceState | None:
    """The state dealt again, or None when the pending action cannot be replayed fairly."""
    world = _redeal(st, crew, rnd)
    sus = st.suspended
    if world is None or sus is None:
        return world
    base = _base_of(sus, st, world, crew)
    if base is None:
        return None
    try:
        state, _ = _execute(base, sus.input, list(sus.answers), sus.reported)
    except (ValueError, KeyError, AssertionError, IndexError, EngineError):
        return None
    return state


def _base_of(
    sus: Suspended[GreatRaceState], st: GreatRaceState, world: GreatRaceState, crew: Crew
) -> GreatRaceState | None:
    """The state the suspended action began from, as it must have been in ``world``: the tiles
    and cards it drew (seen by the crew) on top of the world's bag and deck, the cards the other
    crews gave up during it (discarded face up) back in their hands."""
    drawn = _action_draws(sus, crew)
    if drawn is None:
        return None
    tiles, cards = drawn
    base = sus.base.copy()
    for name, other in base.crews.items():
        if name == crew:
            continue
        lost = Counter(other.hand)
        lost.subtract(st.crews[name].hand)
        if any(n < 0 for n in lost.values()):
            return None
        other.hand = [*sorted(lost.elements()), *world.crews[name].hand]
    base.bag = [*tiles, *world.bag]
    base.deck = [*cards, *world.deck]
    base.rng = world.rng.copy()
    if len(base.bag) != len(sus.base.bag) or len(base.deck) != len(sus.base.deck):
        return None
    return base


def _action_draws(
    sus: Suspended[GreatRaceState], crew: Crew
) -> tuple[list[str], list[Card]] | None:
    """The tiles and cards the suspended action has drawn so far, in order, when the crew has
    seen them all: tiles are shown to everyone, cards only to whoever draws them (the market's
    are dealt face up). None when it has not (another crew's drawn cards, a reshuffle)."""
    _, outcomes = _execute(sus.base, sus.input, list(sus.answers), 0)
    owner = sus.base.active if sus.base.phase == CONVOY else None
    tiles: list[str] = []
    cards: list[Card] = []
    for outcome in outcomes:
        word, _, what = outcome.partition(" ")
        if word == "tile":
            tiles.append(what)
        elif word == "deal" or (word == "card" and owner == crew):
            cards.append(what)
        else:
            return None
    return tiles, cards


def _redeal(st: GreatRaceState, crew: Crew, rnd: random.Random) -> GreatRaceState | None:
    """``st`` with what ``crew`` cannot see dealt again: the bag and the deck shuffled, the
    other hands dealt from the cards unseen, the other sealed plans guessed, a fresh random
    source. Only public counts and the crew's own cards are read."""
    if st.tracker and (st.window or {}).get("crew") != crew:
        return None
    world = st.copy()
    bag = Counter(TILES)
    bag.subtract(st.tiles.values())
    bag.subtract(st.removed)
    bag.subtract(st.drawn)
    pool = Counter(deck_cards(st.leaders))
    for seen in (st.discard, st.market, st.crews[crew].hand, st.tracker):
        pool.subtract(seen)
    if any(n < 0 for n in (*bag.values(), *pool.values())):
        return None
    tiles = sorted(bag.elements())
    rnd.shuffle(tiles)
    world.bag = tiles
    unseen = sorted(pool.elements())
    rnd.shuffle(unseen)
    others = [c for name, c in world.crews.items() if name != crew]
    if len(unseen) != len(st.deck) + sum(len(c.hand) for c in others) or len(tiles) != len(
            st.bag):
        return None
    for other in others:
        other.hand, unseen = unseen[: len(other.hand)], unseen[len(other.hand):]
    world.deck = unseen
    world.rng = Rng(rnd.getrandbits(64))
    if st.phase == PLANNING:
        _guess_plans(world, crew, rnd)
    return world


def _guess_plans(world: GreatRaceState, crew: Crew, rnd: random.Random) -> None:
    """Replace the other crews' sealed plans with guesses made in the sampled world."""
    for other in world.crews.values():
        if other.crew == crew or other.plan is None:
            continue
        options = all_plans(other.crew)
        if rnd.random() < PLAN_GUESS:
            plan = _easy_plan(world, other.crew, options)
        else:
            plan = rnd.choice(options)
        other.plan = plan_of(plan)[1]


def _easy_plan(world: GreatRaceState, crew: Crew, options: list[str]) -> str:
    """The easy player's plan for ``crew`` in ``world`` (its own plan is not yet given)."""
    probe = world.copy()
    probe.crews[crew].plan = None
    view = state_view(probe, viewer=crew, full=False)
    return decide_plan(Sight(crew, view, options, []))


# ---------------------------------------------------------------------- evaluation


def evaluate(world: GreatRace, crew: Crew) -> float:
    """How good ``world`` looks for ``crew``, in [0, 1]: at the end of the race, mostly whether
    it won; before it, a logistic of its estimated prestige against the best rival's, where the
    cost to go (the easy player's measure) counts against a crew and its gauges, money and
    cards for it."""
    st = world.state
    if world.is_over:
        won = 1.0 if world.winner == crew else 0.0
        return 0.8 * won + 0.2 * _logistic(_margin(st, crew, _final_score))
    return _logistic(_margin(st, crew, _estimate))


def _margin(st: GreatRaceState, crew: Crew,
            score: Callable[[GreatRaceState, Crew], float]) -> float:
    mine = score(st, crew)
    rivals = [score(st, name) for name in st.crews if name != crew]
    return mine - max(rivals)


def _logistic(margin: float) -> float:
    return 1.0 / (1.0 + math.exp(-margin / TEMPERATURE))


def _final_score(st: GreatRaceState, crew: Crew) -> float:
    if st.scores is not None and crew in st.scores:
        return float(st.scores[crew]["total"])
    c = st.crews[crew]
    return UNFINISHED + c.engine + c.chassis + c.money // 50


def _estimate(st: GreatRaceState, crew: Crew) -> float:
    c = st.crews[crew]
    gauges = c.engine + c.chassis + c.money / 50 + CARD_POINTS * len(c.hand)
    if c.finished is not None:
        return PLACE_PRESTIGE[min(c.finished, len(PLACE_PRESTIGE)) - 1] + gauges
    return gauges - TO_GO_WEIGHT * _to_go(st, crew)


def _to_go(st: GreatRaceState, crew: Crew) -> float:
    """The easy player's cost to go for ``crew``, from a minimal view of the state."""
    c = st.crews[crew]
    view: dict[str, Any] = {
        "start": st.start,
        "leaders": st.leaders,
        "tiles": st.tiles,
        "removed": st.removed,
        "drawn": st.drawn,
        "bag": len(st.bag),
        "crews": {crew: {"space": c.space, "hand": c.hand, "money": c.money,
                         "leader_used": c.leader_used}},
        "pending": {"kind": "none"},
    }
    sight = Sight(crew, view, [], [])
    return sight.to_go.get(c.space, 60.0)


# ---------------------------------------------------------------------- the search


@dataclass
class Arm:
    """One candidate answer at the root: its visits and summed value."""

    answer: str
    visits: float = 0.0
    total: float = 0.0

    @property
    def mean(self) -> float:
        return self.total / self.visits if self.visits else 0.0


@dataclass
class Report:
    """What a search did (for tests and the bench): its answer, iterations and worlds."""

    answer: str
    iterations: int
    worlds: list[str]
    """A fingerprint of each sampled world (its hidden parts), in order."""
    arms: list[Arm]


def new_random(seed: int | None) -> random.Random:
    """The search's generator: from ``seed`` in tests, from the system's entropy in play."""
    return random.Random(seed if seed is not None else int.from_bytes(os.urandom(16), "big"))


def search_move(
    game: GreatRace,
    seat: int | None = None,
    level: str = STRONG,
    *,
    seed: int | None = None,
    budget: Budget | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> str:
    """The ``level`` player's answer for ``seat`` (default: the first seat owing a decision)."""
    return search(game, seat, budget or BUDGETS[level], seed=seed, clock=clock).answer


def search(
    game: GreatRace,
    seat: int | None,
    budget: Budget,
    *,
    seed: int | None = None,
    clock: Callable[[], float] = time.monotonic,
    record: bool = False,
) -> Report:
    """Search the decision ``seat`` owes within ``budget``; ``record`` keeps world fingerprints."""
    seats = game.to_act()
    assert seats, "the race is over"
    seat = seats[0] if seat is None else seat
    crew = game.crew_of(seat)
    options = game.options(crew)
    easy = choose(game, crew)
    if len(options) == 1:
        return Report(options[0], 0, [], [])
    rnd = new_random(seed)
    arms = [Arm(answer) for answer in candidates(game, crew, options, easy, rnd)]
    for arm in arms:
        if arm.answer == easy:
            arm.visits, arm.total = PRIOR_VISITS, PRIOR_VISITS * 0.5
    deadline = None if budget.seconds is None else clock() + budget.seconds
    worlds: list[str] = []
    done = 0
    longest = 0.0
    while done < budget.iterations:
        began = clock()
        if deadline is not None and began + longest > deadline:
            break
        world = sample_world(game, seat, rnd)
        if world is None:
            break
        if record:
            worlds.append(fingerprint(world.state))
        arm = _select(arms, done, budget.explore)
        arm.visits += 1
        arm.total += _rollout(world, crew, arm.answer, budget.depth)
        done += 1
        longest = max(longest, clock() - began)
    best = max(arms, key=lambda a: (a.visits, a.mean, a.answer == easy))
    answer = best.answer if best.answer in options else easy
    return Report(answer, done, worlds, arms)


def _select(arms: list[Arm], done: int, explore: float) -> Arm:
    """UCB1; an arm never tried goes first."""
    for arm in arms:
        if arm.visits == 0:
            return arm
    log_n = math.log(done + sum(a.visits for a in arms) + 1)
    return max(arms, key=lambda a: a.mean + explore * math.sqrt(log_n / a.visits))


def _rollout(world: GreatRace, crew: Crew, answer: str, depth: int) -> float:
    """Play ``answer`` in ``world``, then the easy player for everyone for ``depth`` inputs."""
    world.state = _step(world, answer)
    for _ in range(depth):
        if world.is_over:
            break
        world.state = _step(world, choose(world))
    return evaluate(world, crew)


def _step(world: GreatRace, text: str) -> GreatRaceState:
    state, _ = step_state(world.state, text)
    world.inputs.append(text)
    return state


def candidates(
    game: GreatRace, crew: Crew, options: list[str], easy: str, rnd: random.Random
) -> list[str]:
    """The answers worth searching: for a plan, the easy plan and those one assistant away;
    petrol bought as the easy player would or to the full; otherwise every option, or the
    easy answer and a sample of the rest when there are too many."""
    pending = game.pending(crew) or {}
    kind = pending.get("kind")
    if kind == "plan":
        wanted = plan_of(easy)[1]
        found = [o for o in options if plan_distance(plan_of(o)[1], wanted) <= 2]
    elif kind == "turn":
        buys = [o for o in options if o.startswith("buy ")]
        keep = {easy, buys[-1]} if buys else {easy}
        found = [o for o in options if not o.startswith("buy ") or o in keep]
    else:
        found = list(options)
    if easy not in found:
        found.insert(0, easy)
    if len(found) > MOST_CANDIDATES:
        rest = [o for o in found if o != easy]
        found = [easy, *rnd.sample(rest, MOST_CANDIDATES - 1)]
    return found


def fingerprint(st: GreatRaceState) -> str:
    """The hidden parts of a world, to compare sampled worlds in the tests."""
    hands = ";".join(f"{name}:{','.join(c.hand)}:{c.plan}" for name, c in st.crews.items())
    return f"{','.join(st.bag)}|{','.join(st.deck)}|{hands}|{st.rng.to_json()}"
