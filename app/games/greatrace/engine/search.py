"""The Great Race's normal and strong computer players: information-set Monte Carlo search over
the decision at hand, with the easy player (:mod:`.bot`) as the model of every crew afterwards.

Each round samples a **world** from what the deciding crew may see (:func:`sample_world`): the
other crews' hands dealt again from the cards it cannot see, the bag and the deck shuffled, the
other crews' sealed plans guessed (mostly as the easy player would plan in that world), and a
fresh random source from the search's own generator (never the game's: that would tell future
tiles and cards). Every candidate answer is then played in that same world and the easy player
carries on for every crew to the end of the game turn (when each crew has had its convoy, a
fair point to compare them); what the rollout reaches is valued for the deciding crew in
[0, 1] (:func:`evaluate`): whether it won when the race ended in that turn, else its chance to
win as the model of :mod:`.outlook` (fitted to races between easy players) sees it. Stopping
at the turn's end halves a rollout, and the model's smooth chance tells the candidates apart in
far fewer worlds than a win or a loss at the end of the race: at the same 120 rollouts a
decision, strong won 73% of 60 games against two easy players this way, about half when its
rollouts played to the end of the race. Sharing the worlds between the candidates makes their
differences far less noisy than their values. The easy player's own answer is left only for a
candidate that beats it over the worlds beyond a reasonable doubt (:func:`_pick`); a candidate
surely worse than it is dropped after a few worlds (:func:`survivors`), so the rest of the
budget sharpens the comparisons that may still change the answer. Where damage goes, which card
is discarded or kept are left to the easy player unsearched: they seldom change a race.

The tree is one level deep (the decision at hand), searched flat: a Great Race turn is dozens
of decisions, and a turn played by the easy player costs several milliseconds, so the budget
buys about a hundred rollouts; they go where the choice is made, and to a few candidates (the
easy answer and a sample of the others), the easy player being a sound model of what follows.
The time cap stops the search between rollouts (an injectable clock); the iteration cap counts
rollouts, in whole rounds.

Fairness: a world depends only on the crew's view of the game and the search's generator, and
the generator is seeded from that view alone (unless a test gives a seed), so changing what the
crew cannot see changes neither the worlds nor the answer (the tests check). Only the time cap
may make two searches of one view differ: on a busy machine it stops a search sooner.
"""

from __future__ import annotations

import math
import random
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final

from app.games.errors import EngineError
from app.games.logged import Suspended, answer_input, run_again, run_input
from app.games.rng import Rng, view_seed

from .bot import Sight, choose, decide_plan, plan_distance
from .game import GreatRace, state_view
from .notation import all_plans, plan_of
from .outlook import win_chances
from .pieces import TILES, Card, Crew, deck_cards
from .rules import Rules
from .state import CONVOY, PLANNING, GreatRaceState

NORMAL: Final = "normal"
STRONG: Final = "strong"


@dataclass(frozen=True)
class Budget:
    """How much a decision may search: a time cap (seconds, None: none), an iteration cap
    (rollouts), the rollouts' depth cut-off (inputs played after the candidate, when the game
    turn has not ended before) and how many candidate answers are compared."""

    seconds: float | None
    iterations: int
    depth: int
    most: int = 14
    """The most candidate answers searched (the easy one and a sample of the others)."""
    turn_end: bool = True
    """Rollouts stop at the end of a game turn (else they play on to the end of the race)."""
    turns: int = 1
    """With ``turn_end``: the game turns a rollout plays to the end of, the one it starts in
    counting as the first."""
    plans: int = 6
    """The most candidate plans searched (a plan shapes the crew's whole game turn)."""


BUDGETS: Final[dict[str, Budget]] = {
    NORMAL: Budget(seconds=0.25, iterations=300, depth=400, most=3, plans=4),
    STRONG: Budget(seconds=0.75, iterations=4000, depth=400, most=4, plans=6, turns=2),
}
"""What each level may spend on a decision: the strong one as many rollouts to the end of the
next game turn as its time allows (``bench/greatrace_rollouts.py --capped`` counts them); a
rollout already begun may end past the cap, so a decision stays well under a second. Two
turns, not one: on the same 120 deals against two easy players strong won 63% with rollouts
two game turns long and 55% with one (bench/README.md)."""
UNSEARCHED: Final = frozenset({"damage", "discard", "keep"})
"""Decisions left to the easy player at once: where damage goes and which card is given up
seldom change the race (searching them left the easy answer nearly always)."""
WON: Final = 0.9
"""The share of a finished race's value that is the win itself; the rest is the final margin
of prestige, which tells apart worlds that the win alone does not."""
MARGIN: Final = 0.01
CONFIDENCE: Final = 1.5
FEWEST_WORLDS: Final = 3
"""The search leaves the easy player's answer only for one that scores better over the same
sampled worlds (at least this many) by ``MARGIN`` after ``CONFIDENCE`` standard errors are
taken off the mean difference: with few worlds, a difference is mostly luck."""
DROP_AFTER: Final = 6
DROP_ERRORS: Final = 2.0
"""After ``DROP_AFTER`` worlds, a candidate worse than the easy answer by more than
``DROP_ERRORS`` standard errors of the mean difference is played no more."""
WORLD_TRIES: Final = 6
"""Sampled worlds that do not replay to what the crew sees (rare, e.g. a deck shuffled in the
middle of an action) are drawn again this many times before the search gives up."""
TEMPERATURE: Final = 3.0
"""Points of prestige between two crews that move the margin's logistic from 0.5 to about
0.73."""
UNFINISHED: Final = -10.0
"""What not finishing costs in prestige when the race ends (only finishers score)."""
PLAN_GUESS: Final = 0.75
"""How often another crew's sealed plan is guessed as the easy player would plan in the sampled
world (otherwise uniformly among its plans)."""


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
        state, _ = run_again(sus, Rules, base)
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
    lost = _others_lost(sus.base, st, crew, cards)
    if lost is None:
        return None
    for name, other in base.crews.items():
        if name != crew:
            other.hand = [*lost.get(name, []), *world.crews[name].hand]
    base.bag = [*tiles, *world.bag]
    base.deck = [*cards, *world.deck]
    base.rng = world.rng.copy()
    if len(base.bag) != len(sus.base.bag) or len(base.deck) != len(sus.base.deck):
        return None
    return base


def _others_lost(
    base: GreatRaceState, st: GreatRaceState, crew: Crew, cards: list[Card]
) -> dict[Crew, list[Card]] | None:
    """The cards the other crews gave up during the action (played or discarded: face up on
    the discard pile), given to the one crew whose hand shrank; None when that is not clear."""
    thrown = Counter(st.discard)
    thrown.subtract(base.discard)
    mine = Counter(base.crews[crew].hand)
    mine.update(cards)
    mine.subtract(st.crews[crew].hand)
    thrown.subtract(mine)
    if any(n < 0 for n in thrown.values()):
        return None
    given = sorted(thrown.elements())
    shrank = [name for name in base.crews if name != crew
              and len(base.crews[name].hand) > len(st.crews[name].hand)]
    if not given:
        return {}
    if len(shrank) != 1:
        return None
    return {shrank[0]: given}


def _action_draws(
    sus: Suspended[GreatRaceState], crew: Crew
) -> tuple[list[str], list[Card]] | None:
    """The tiles and cards the suspended action has drawn so far, in order, when the crew has
    seen them all: tiles are shown to everyone, cards only to whoever draws them (the market's
    are dealt face up). None when it has not (another crew's drawn cards, a reshuffle)."""
    outcomes = run_input(sus.base, sus.input, list(sus.answers), Rules).outcomes
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
    it won (a little of the final margin of prestige breaks the ties between worlds); before
    it, its chance to win as the model of :mod:`.outlook` sees it."""
    st = world.state
    if world.is_over:
        winners = world.winners
        won = 1.0 / len(winners) if crew in winners else 0.0
        return WON * won + (1 - WON) * _logistic(_margin(st, crew))
    return win_chances(st).get(crew, 0.0)


def _margin(st: GreatRaceState, crew: Crew) -> float:
    mine = _final_score(st, crew)
    rivals = [_final_score(st, name) for name in st.crews if name != crew]
    return mine - max(rivals)


def _logistic(margin: float) -> float:
    return 1.0 / (1.0 + math.exp(-margin / TEMPERATURE))


def _final_score(st: GreatRaceState, crew: Crew) -> float:
    if st.scores is not None and crew in st.scores:
        return float(st.scores[crew]["total"])
    c = st.crews[crew]
    return UNFINISHED + c.engine + c.chassis + c.money // 50


# ---------------------------------------------------------------------- the search


@dataclass
class Arm:
    """One candidate answer at the root: its value in each sampled world, in order."""

    answer: str
    values: list[float] = field(default_factory=list)

    @property
    def visits(self) -> int:
        return len(self.values)

    @property
    def mean(self) -> float:
        return sum(self.values) / len(self.values) if self.values else 0.0

    def gain_over(self, other: Arm) -> float:
        """How much better than ``other`` this answer is, to a reasonable doubt: the mean of
        the differences over the same worlds less ``CONFIDENCE`` standard errors."""
        return self.bound_over(other, -CONFIDENCE, -1.0)

    def bound_over(self, other: Arm, errors: float, unknown: float) -> float:
        """The mean difference from ``other`` over the worlds both were played in, plus
        ``errors`` standard errors (``unknown`` with fewer than ``FEWEST_WORLDS`` worlds)."""
        n = min(self.visits, other.visits)
        diffs = [mine - theirs for mine, theirs in zip(self.values[:n], other.values[:n],
                                                       strict=True)]
        if n < FEWEST_WORLDS:
            return unknown
        mean = sum(diffs) / n
        spread = math.sqrt(sum((d - mean) ** 2 for d in diffs) / (n - 1) / n)
        return mean + errors * spread


@dataclass
class Report:
    """What a search did (for tests and the bench): its answer, iterations and worlds."""

    answer: str
    iterations: int
    worlds: list[str]
    """A fingerprint of each sampled world (its hidden parts), in order."""
    arms: list[Arm]


def new_random(game: GreatRace, crew: Crew, seed: int | None) -> random.Random:
    """The search's generator: from ``seed`` in tests, in play from ``crew``'s view of ``game``
    alone (two games the crew cannot tell apart are searched alike)."""
    if seed is None:
        seed = view_seed(state_view(game.state, viewer=crew, full=False))
    return random.Random(seed)


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
    started = clock()
    seats = game.to_act()
    assert seats, "the race is over"
    seat = seats[0] if seat is None else seat
    crew = game.crew_of(seat)
    options = game.options(crew)
    easy = choose(game, crew)
    if len(options) == 1:
        return Report(options[0], 0, [], [])
    kind = (game.pending(crew) or {}).get("kind")
    if kind in UNSEARCHED:
        return Report(easy, 0, [], [])
    rnd = new_random(game, crew, seed)
    most = budget.plans if kind == "plan" else budget.most
    arms = [Arm(answer) for answer in candidates(game, crew, options, easy, rnd, most)]
    deadline = None if budget.seconds is None else started + budget.seconds
    worlds: list[str] = []
    done = 0
    longest = 0.0
    playing = arms
    slowest = [0.0]
    while done + len(playing) <= budget.iterations:
        began = clock()
        if deadline is not None and began + longest > deadline:
            break
        world = sample_world(game, seat, rnd)
        if world is None:
            break
        if record:
            worlds.append(fingerprint(world.state))
        values = _round(world, crew, playing, budget, clock, deadline, slowest)
        if values is None:
            break
        for arm, value in zip(playing, values, strict=True):
            arm.values.append(value)
        done += len(playing)
        longest = max(longest, clock() - began)
        playing = survivors(playing, easy)
        if len(playing) < 2:
            break
    return Report(_pick(arms, easy, options), done, worlds, arms)


def survivors(arms: list[Arm], easy: str) -> list[Arm]:
    """The candidates still worth playing: those not yet surely worse than the easy answer
    (the worlds saved go to the others, so their comparison with it gets sharper)."""
    mine = next((arm for arm in arms if arm.answer == easy), None)
    if mine is None or mine.visits < DROP_AFTER:
        return arms
    return [arm for arm in arms
            if arm is mine or arm.bound_over(mine, DROP_ERRORS, 0.0) >= 0.0]


def _round(
    world: GreatRace, crew: Crew, arms: list[Arm], budget: Budget, clock: Callable[[], float],
    deadline: float | None, slowest: list[float],
) -> list[float] | None:
    """Every candidate played out in one world (the same world for all: a fair comparison);
    None when the clock would run out before the round is complete (``slowest`` holds the
    longest rollout so far: one is not begun that may end after the deadline)."""
    values = []
    for arm in arms:
        began = clock()
        if deadline is not None and began + slowest[0] > deadline:
            return None
        values.append(_rollout(_fork(world), crew, arm.answer, budget.depth,
                               budget.turns if budget.turn_end else None))
        slowest[0] = max(slowest[0], clock() - began)
    return values


def _pick(arms: list[Arm], easy: str, options: list[str]) -> str:
    """The candidate that beats the easy answer most surely over the same worlds, when it
    does so by more than ``MARGIN``; else the easy answer."""
    mine = next((arm for arm in arms if arm.answer == easy), None)
    if mine is None or mine.visits == 0:
        return easy
    gains = [(arm.gain_over(mine), arm.answer) for arm in arms if arm is not mine]
    gain, best = max(gains, default=(0.0, easy))
    return best if gain > MARGIN and best in options else easy


def _fork(world: GreatRace) -> GreatRace:
    fork = GreatRace(world.state.copy(), world.initial)
    fork.inputs = list(world.inputs)
    return fork


def _rollout(world: GreatRace, crew: Crew, answer: str, depth: int, turns: int | None) -> float:
    """Play ``answer`` in ``world``, then the easy player for everyone to the end of this game
    turn (every crew has then had its convoy: a fair point to compare crews) or of the
    ``turns``-th from this one, the end of the race (``turns`` None), or ``depth`` inputs."""
    last = None if turns is None else world.state.turn + turns - 1
    world.state = _step(world, answer)
    for _ in range(depth):
        if world.is_over or (last is not None and world.state.turn > last):
            break
        world.state = _step(world, choose(world))
    return evaluate(world, crew)


def _step(world: GreatRace, text: str) -> GreatRaceState:
    """``world`` after ``text``, one of its options (the rollouts answer nothing else, so it is
    not checked against them again: they are worked out once a step, by the player)."""
    st = world.state
    state, _ = answer_input(st, text, Rules)
    world.inputs.append(text)
    return state


def candidates(
    game: GreatRace, crew: Crew, options: list[str], easy: str, rnd: random.Random, most: int
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
    if len(found) > most:
        rest = [o for o in found if o != easy]
        found = [easy, *rnd.sample(rest, most - 1)]
    return found


def fingerprint(st: GreatRaceState) -> str:
    """The hidden parts of a world, to compare sampled worlds in the tests."""
    hands = ";".join(f"{name}:{','.join(c.hand)}:{c.plan}" for name, c in st.crews.items())
    return f"{','.join(st.bag)}|{','.join(st.deck)}|{hands}|{st.rng.to_json()}"
