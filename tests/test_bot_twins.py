"""Every computer level decides from its seat's view (issue 36): twin positions that differ only
in what the deciding seat cannot see get the same answer, at every level of both games.

The positions come from seeded games played by a quick player that mixes random inputs with the
one-step model of Titan Race (or The Great Race's easy player), so that every kind of decision
turns up: picks, starts, turns, reaction windows and pirate attacks in Titan Race; takes, plans
(with the other crews' plans sealed), turns, drives, placements, repairs, damage, discards,
kept cards and avoided dangers in The Great Race. Each position gets one twin per kind of hidden
change that applies to it: an opponent's card swapped with a deck card or with another
opponent's (in Titan Race also for one that answers otherwise: a card that may be played out of
turn for one that may not), the deck (or the bag) in another order, another random source
(other dice, tiles and cards to come), another sealed plan. A decision that waits inside a
suspended input is changed in the state before that input, and the input is run again to the
same decision: a twin is kept only when the seat's view of it is exactly the position's (a real
twin, not a position the seat could tell apart).

The searching levels search by small iteration budgets here, without a time cap, so that their
answer is a function of what they are given (how well they play is measured by bench/bots.py).
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import replace
from functools import cache
from itertools import product
from typing import Any, TypeVar

import pytest

from app.games.base import BOT_LEVELS, BotLevel
from app.games.errors import EngineError
from app.games.greatrace.engine import search as great_search
from app.games.greatrace.engine.bot import choose as great_choose
from app.games.greatrace.engine.game import GreatRace
from app.games.greatrace.engine.notation import all_plans, plan_of
from app.games.greatrace.engine.rules import Rules
from app.games.greatrace.engine.state import PLANNING, GreatRaceState
from app.games.greatrace.ruleset import GreatRaceRuleset
from app.games.logged import run_again
from app.games.rng import KeyedRng
from app.games.titanrace.engine import Race, new_game
from app.games.titanrace.engine import search as titan_search
from app.games.titanrace.engine.bot import model
from app.games.titanrace.engine.cards import CARD_TIMING
from app.games.titanrace.engine.race import state_view as titan_view
from app.games.titanrace.engine.rules import Resolver
from app.games.titanrace.engine.state import RaceState
from app.games.titanrace.ruleset import TitanRaceRuleset

TRIES = 12
"""Changes of one kind tried on a position before it is given no twin of that kind (a change
inside a suspended input may lead elsewhere)."""
RANDOM_SHARE = 0.35
"""How often the quick player that makes the positions plays a random option."""
STEP_CAP = 3000

Change = Callable[[Any, int, random.Random], bool]
"""Changes, in place, something seat ``int`` cannot see; False when there is nothing to change."""


PER_KIND: dict[BotLevel, dict[str, int | None]] = {
    "easy": {"titan-race": None, "great-race": None},
    "normal": {"titan-race": 16, "great-race": 6},
    "strong": {"titan-race": 10, "great-race": 5},
}
"""The most positions of each kind of decision a level is asked about, by game (None: all of
them; a search costs a few tens of milliseconds even on a small budget)."""
T = TypeVar("T")


@pytest.fixture
def small_searches(monkeypatch: pytest.MonkeyPatch) -> None:
    """The searching levels on a few iterations and no time cap (their budgets otherwise)."""
    for level in ("normal", "strong"):
        monkeypatch.setitem(titan_search.BUDGETS, level, replace(
            titan_search.BUDGETS[level], iterations=8, seconds=None))
        monkeypatch.setitem(great_search.BUDGETS, level, replace(
            great_search.BUDGETS[level], iterations=8, seconds=None))


def differs(twin: Any, truth: Any) -> bool:
    return bool(twin.to_json() != truth.to_json())


def spread(positions: Sequence[T], kind_of: Callable[[T], str], most: int | None) -> list[T]:
    """At most ``most`` positions of each kind, spread evenly over the games."""
    by_kind: dict[str, list[T]] = {}
    for position in positions:
        by_kind.setdefault(kind_of(position), []).append(position)
    chosen: list[T] = []
    for group in by_kind.values():
        count = len(group) if most is None else min(most, len(group))
        chosen += [group[i * len(group) // count] for i in range(count)]
    return chosen


# ---------------------------------------------------------------------- Titan Race


TITAN_GAMES = [
    ("standard", ["grinder", "craken", "slaugg", "rassik"], ["dead-mans-lagoon"], (), 1),
    ("standard", ["ragnarok", "chtoolhoo", "craken", "slaugg", "grinder"], ["kaldheira"],
     ("craken", "slaugg", "grinder"), 2),
    ("two-player", ["chtoolhoo", "ragnarok", "grinder", "rassik"], ["anglieh"], (), 3),
    ("teams", ["grinder", "craken", "slaugg", "rassik"], ["ban-kog"], ("rassik",), 4),
    ("standard", ["craken", "grinder", "rassik"], ["moltenchest"], ("grinder",), 5),
    ("standard", ["rassik", "ragnarok", "chtoolhoo", "craken", "slaugg", "grinder"],
     ["estenggaard"], ("ragnarok", "chtoolhoo"), 6),
    ("teams", ["slaugg", "chtoolhoo", "craken", "ragnarok", "grinder", "rassik"],
     ["dead-mans-lagoon"], ("craken",), 7),
    ("two-player", ["craken", "slaugg", "ragnarok", "grinder"], ["kaldheira"], ("slaugg",), 8),
    ("grand-slam", ["chtoolhoo", "slaugg", "ragnarok"],
     ["anglieh", "dead-mans-lagoon", "moltenchest"], (), 9),
    ("standard", ["grinder", "ragnarok", "rassik", "craken"], ["ban-kog"], ("craken",), 10),
]
"""Seeded games of every variant (teams of 2 and of 3), some players asking for the any-time
windows at other players' turn starts (variant, Titans, circuits, any-time windows, seed); each
is played under every rules version (a race keeps the rules it was set up under)."""
TITAN_VERSIONS = (1, 2)
"""Version 1 opened a window only for the holder of a fitting card (what the easy player,
looking ahead on the true state, read); version 2 opens one for any card."""
TITAN_KINDS = {"pick", "start", "turn", "react", "pirates"}
ANSWERING = {card for card, timing in CARD_TIMING.items() if timing != "turn"}


def swap_with_deck(others: list[Any], deck: list[str], rnd: random.Random) -> bool:
    """A card of another seat's hand swapped with one of the face-down deck (False: none to
    swap)."""
    holders = [piece for piece in others if piece.hand]
    if not holders or not deck:
        return False
    piece = rnd.choice(holders)
    i, j = rnd.randrange(len(piece.hand)), rnd.randrange(len(deck))
    piece.hand[i], deck[j] = deck[j], piece.hand[i]
    return True


def swap_hands(others: list[Any], rnd: random.Random) -> bool:
    """A card of one other seat's hand swapped with one of another's (False: fewer than two
    hold cards)."""
    holders = [piece for piece in others if piece.hand]
    if len(holders) < 2:
        return False
    a, b = rnd.sample(holders, 2)
    i, j = rnd.randrange(len(a.hand)), rnd.randrange(len(b.hand))
    a.hand[i], b.hand[j] = b.hand[j], a.hand[i]
    return True


def titan_others(st: RaceState, seat: int) -> list[Any]:
    return [t for t in st.titans.values() if t.seat != seat]


def titan_swap_with_deck(st: RaceState, seat: int, rnd: random.Random) -> bool:
    return swap_with_deck(titan_others(st, seat), st.deck, rnd)


def titan_swap_hands(st: RaceState, seat: int, rnd: random.Random) -> bool:
    return swap_hands(titan_others(st, seat), rnd)


def titan_swap_answer(st: RaceState, seat: int, rnd: random.Random) -> bool:
    """An opponent's card swapped with an unseen one (in the deck or another opponent's hand)
    that answers otherwise: a card playable out of turn (Dispel, Last Shield, Repulse,
    Thunderbolt, Healing Potion) for one that is not, or the other way round."""
    hands = [t.hand for t in titan_others(st, seat)]
    swaps = [(mine, i, theirs, j) for mine in hands for theirs in [*hands, st.deck]
             if theirs is not mine for i in range(len(mine)) for j in range(len(theirs))
             if (mine[i] in ANSWERING) != (theirs[j] in ANSWERING)]
    if not swaps:
        return False
    mine, i, theirs, j = rnd.choice(swaps)
    mine[i], theirs[j] = theirs[j], mine[i]
    return True


def titan_reorder_deck(st: RaceState, seat: int, rnd: random.Random) -> bool:
    if len(st.deck) < 2:
        return False
    before = list(st.deck)
    while st.deck == before:
        rnd.shuffle(st.deck)
    return True


def titan_other_dice(st: RaceState, seat: int, rnd: random.Random) -> bool:
    st.rng = KeyedRng(rnd.randbytes(32))
    return True


TITAN_CHANGES: dict[str, Change] = {
    "a card swapped with the deck": titan_swap_with_deck,
    "a card swapped between hands": titan_swap_hands,
    "an answering card swapped": titan_swap_answer,
    "the deck reordered": titan_reorder_deck,
    "other dice to come": titan_other_dice,
}


def titan_twin(truth: RaceState, seat: int, change: Change, rnd: random.Random
               ) -> RaceState | None:
    """``truth`` with ``change`` made where the seat cannot see it (before a suspended input,
    which is run again), or None when no such twin was found."""
    seen = titan_view(truth, seat=seat)
    for _ in range(TRIES):
        sus = truth.suspended
        if sus is None:
            twin = truth.copy()
            if not change(twin, seat, rnd):
                return None
        else:
            base = sus.base.copy()
            if not change(base, seat, rnd):
                return None
            try:
                twin = run_again(sus, Resolver, base)[0]
            except (EngineError, ValueError, AssertionError):
                continue
        if differs(twin, truth) and titan_view(twin, seat=seat) == seen:
            return twin
    return None


def titan_player(st: RaceState, options: list[str], rnd: random.Random) -> str:
    """The quick player that makes the positions: the one-step model on the whole state (it is
    not under test here), or now and then any option."""
    if rnd.random() < RANDOM_SHARE:
        return rnd.choice(options)
    return model(st, options)


def titan_teams(variant: str, titans: list[str]) -> list[list[str]] | None:
    """Teams of 2 (of 3 with four Titans: 2 teams of 2) seated apart."""
    if variant != "teams":
        return None
    size = 2 if len(titans) == 4 else 3
    count = len(titans) // size
    return [titans[i::count] for i in range(count)]


@cache
def titan_positions() -> tuple[tuple[RaceState, int], ...]:
    """Positions of seeded Titan Race games (a decision with a choice), each with its seat:
    every window, every turn that may play a card or an Ability (where the others' hidden
    cards may answer), a few of the other decisions."""
    found: list[tuple[RaceState, int]] = []
    for (variant, titans, circuits, anytime, seed), version in product(TITAN_GAMES,
                                                                         TITAN_VERSIONS):
        rnd = random.Random(seed)
        race = new_game(titans, circuits=circuits, variant=variant, seed=seed, version=version,
                        teams=titan_teams(variant, titans), anytime_windows=anytime)
        for _ in range(STEP_CAP):
            if race.is_over:
                break
            options = race.options()
            seat = race.seat_to_act()
            assert seat is not None
            window = race.state.window is not None
            aimed = any(option.startswith(("ability", "play")) for option in options)
            if len(options) > 1 and (window or aimed or rnd.random() < 0.08):
                found.append((race.state.copy(), seat))
            race.apply(titan_player(race.state, options, rnd))
    return tuple(found)


def titan_kind(position: tuple[RaceState, int]) -> str:
    st = position[0]
    return str(st.window["kind"]) if st.window is not None else st.phase


@pytest.mark.usefixtures("small_searches")
@pytest.mark.parametrize("level", BOT_LEVELS)
def test_titan_race_twins_get_the_same_answer(level: BotLevel) -> None:
    rules = TitanRaceRuleset()
    rnd = random.Random(36)
    kinds: Counter[str] = Counter()
    changes: Counter[str] = Counter()
    different = []
    for truth, seat in spread(titan_positions(), titan_kind, PER_KIND[level]["titan-race"]):
        answer = rules.bot_move(Race(truth.copy(), initial={}), seat, level)
        assert answer in Race(truth, initial={}).options()
        for name, change in TITAN_CHANGES.items():
            twin = titan_twin(truth, seat, change, rnd)
            if twin is None:
                continue
            changes[name] += 1
            other = rules.bot_move(Race(twin, initial={}), seat, level)
            if other != answer:
                different.append(f"{titan_kind((truth, seat))} ({name}): {answer!r} / {other!r}")
        kinds[titan_kind((truth, seat))] += 1
    assert not different, f"{len(different)} twins answered otherwise at {level}: {different}"
    assert set(kinds) == TITAN_KINDS, kinds
    assert kinds["react"] >= 10 and kinds["pirates"] >= 3, kinds
    assert set(changes) == set(TITAN_CHANGES) and min(changes.values()) >= 10, changes


# ---------------------------------------------------------------------- The Great Race


GREAT_GAMES = [
    (["french", "belgian"], True, 11),
    (["french", "belgian", "italian"], False, 12),
    (["french", "belgian", "italian", "english"], True, 13),
    (["italian", "english", "french"], True, 14),
]
GREAT_VERSIONS = (1, 2, 3)
"""Every rules version a race may still be played under (version 3 asks each decision on public
facts alone; the two before it asked some, such as an avoid, of a crew for its hidden cards)."""
GREAT_KINDS = {"take", "plan", "turn", "drive", "place", "repair", "damage", "avoid"}
"""The kinds of decision the positions must include (discards and kept cards when they come)."""


def great_others(st: GreatRaceState, seat: int) -> list[Any]:
    return [c for c in st.crews.values() if c.seat != seat]


def great_swap_with_deck(st: GreatRaceState, seat: int, rnd: random.Random) -> bool:
    return swap_with_deck(great_others(st, seat), st.deck, rnd)


def great_swap_hands(st: GreatRaceState, seat: int, rnd: random.Random) -> bool:
    return swap_hands(great_others(st, seat), rnd)


def great_reorder(field: str) -> Change:
    def reorder(st: GreatRaceState, seat: int, rnd: random.Random) -> bool:
        items = getattr(st, field)
        if len(set(items)) < 2:
            return False
        before = list(items)
        while items == before:
            rnd.shuffle(items)
        return True
    return reorder


def great_other_plan(st: GreatRaceState, seat: int, rnd: random.Random) -> bool:
    sealed = [c for c in great_others(st, seat) if c.plan is not None]
    if st.phase != PLANNING or not sealed:
        return False
    c = rnd.choice(sealed)
    plans = [plan_of(text)[1] for text in all_plans(c.crew)]
    c.plan = rnd.choice([plan for plan in plans if plan != c.plan])
    return True


def great_other_dice(st: GreatRaceState, seat: int, rnd: random.Random) -> bool:
    st.rng = KeyedRng(rnd.randbytes(32))
    return True


GREAT_CHANGES: dict[str, Change] = {
    "a card swapped with the deck": great_swap_with_deck,
    "a card swapped between hands": great_swap_hands,
    "the deck reordered": great_reorder("deck"),
    "the bag reordered": great_reorder("bag"),
    "another sealed plan": great_other_plan,
    "another random source": great_other_dice,
}


def great_twin(truth: GreatRace, seat: int, change: Change, rnd: random.Random
               ) -> GreatRace | None:
    """``truth`` with ``change`` made where the seat cannot see it (before a suspended input,
    which is run again), or None when no such twin was found."""
    seen = truth.view(seat)
    for _ in range(TRIES):
        twin = truth.copy()
        sus = truth.state.suspended
        if sus is None:
            if not change(twin.state, seat, rnd):
                return None
        else:
            base = sus.base.copy()
            if not change(base, seat, rnd):
                return None
            try:
                twin.state = run_again(sus, Rules, base)[0]
            except (EngineError, ValueError, KeyError, IndexError, AssertionError):
                continue
        if differs(twin.state, truth.state) and twin.view(seat) == seen:
            return twin
    return None


def great_player(game: GreatRace, crew: str, rnd: random.Random) -> str:
    options = game.options(crew)
    if rnd.random() < RANDOM_SHARE:
        return rnd.choice(options)
    return great_choose(game, crew)


@cache
def great_positions() -> tuple[tuple[GreatRace, int], ...]:
    """Positions of seeded Great Race games (a decision with a choice), each with a seat that
    owes it; the crews of a planning plan one by one, so the later ones see sealed plans."""
    found: list[tuple[GreatRace, int]] = []
    for (crews, leaders, seed), version in product(GREAT_GAMES, GREAT_VERSIONS):
        rnd = random.Random(seed)
        game = GreatRace.new(crews, leaders=leaders, seed=seed, version=version)
        for _ in range(STEP_CAP):
            if game.is_over:
                break
            seat = game.to_act()[-1]
            crew = game.crew_of(seat)
            options = game.options(crew)
            sealed = any(c.plan is not None for c in game.state.crews.values())
            window = game.state.window is not None
            if len(options) > 1 and (window or sealed or rnd.random() < 0.05):
                found.append((game.copy(), seat))
            game.apply(great_player(game, crew, rnd))
    return tuple(found)


def great_kind(position: tuple[GreatRace, int]) -> str:
    pending = position[0].pending()
    assert pending is not None
    return str(pending["kind"])


@pytest.mark.usefixtures("small_searches")
@pytest.mark.parametrize("level", BOT_LEVELS)
def test_great_race_twins_get_the_same_answer(level: BotLevel) -> None:
    rules = GreatRaceRuleset()
    rnd = random.Random(36)
    kinds: Counter[str] = Counter()
    changes: Counter[str] = Counter()
    different = []
    for truth, seat in spread(great_positions(), great_kind, PER_KIND[level]["great-race"]):
        answer = rules.bot_move(truth.copy(), seat, level)
        assert answer in truth.options(truth.crew_of(seat))
        for name, change in GREAT_CHANGES.items():
            twin = great_twin(truth, seat, change, rnd)
            if twin is None:
                continue
            changes[name] += 1
            other = rules.bot_move(twin, seat, level)
            if other != answer:
                different.append(f"{great_kind((truth, seat))} ({name}): {answer!r} / {other!r}")
        kinds[great_kind((truth, seat))] += 1
    assert not different, f"{len(different)} twins answered otherwise at {level}: {different}"
    assert set(kinds) >= GREAT_KINDS, kinds
    assert set(changes) == set(GREAT_CHANGES) and min(changes.values()) >= 5, changes


def test_the_positions_are_many_and_their_twins_real() -> None:
    """Many positions of every kind, and twins that differ from them where the seat cannot
    look and nowhere it can (as the engine's own views show them)."""
    titan, great = titan_positions(), great_positions()
    assert len(titan) >= 300 and len(great) >= 300
    rnd = random.Random(1)
    for truth, seat in spread(titan, titan_kind, 10):
        for change in TITAN_CHANGES.values():
            twin = titan_twin(truth, seat, change, rnd)
            if twin is not None:
                assert differs(twin, truth)
                assert Race(twin, initial={}).view(seat=seat) == Race(
                    truth, initial={}).view(seat=seat)
    for game, seat in spread(great, great_kind, 10):
        for change in GREAT_CHANGES.values():
            twin = great_twin(game, seat, change, rnd)
            if twin is not None:
                assert differs(twin.state, game.state)
                assert twin.view(seat) == game.view(seat)
