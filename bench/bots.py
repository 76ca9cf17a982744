"""Strength of the computer players: whole 3-seat games between the levels, per game.

    python3 bench/bots.py [--games 30] [--jobs 2] [--game titan-race] [--pair strong]
                          [--no-time-cap] [--budget seconds=0.9] [--start 0]

For each game (Titan Race, The Great Race) and each pairing (one ``strong`` seat against two
``easy`` ones, then one ``normal`` seat against two ``easy`` ones) it plays ``--games`` races
through the rulesets alone (no server, no database), the stronger seat moving round the table
from game to game (seat 1, 2, 3, 1...), each game dealt from its own fixed key. It prints a line
per pairing::

    titan-race: strong wins 67% of 30 games (95% interval 49-81%; a fair share is 33%)

A win shared by k seats counts 1/k. The interval is Wilson's score interval. It also prints how
long the stronger seat took per decision (mean and worst), since a strong decision must answer
within a second. It asserts nothing: tests check behaviour, this measures strength.

``--pair easy`` plays one ``easy`` seat against two *full-sight* players: Titan Race's one-step
model reading the whole true state (every hand, the deck's order, the dice to come), which is
what its easy player was before it decided from its seat's view (issue 36); a fair share says
the seat's view costs the easy player nothing. The Great Race's easy player never read more
than its view, so it has no such pairing.

``--budget FIELD=VALUE`` (repeatable) plays a variant of the paired levels' search budgets
without editing them (e.g. ``--budget seconds=0.9``, in every game whose budget has that field);
``--start N`` numbers the games from N, so a second run with ``--start 120`` plays 120 other
deals to add to a first run's 120.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import importlib
import math
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.games import GAMES as GAMES_BY_NAME
from app.games import ruleset
from app.games.base import EASY, NORMAL, STRONG, BotLevel, SeatSetup
from app.games.rng import Dealing

GAMES = tuple(GAMES_BY_NAME)
SEATS = 3
STEP_CAP = 5000
"""A game not over after this many inputs is counted as nobody's win (and reported)."""
Z95 = 1.959964
SEARCHES = ("app.games.titanrace.engine.search", "app.games.greatrace.engine.search")
"""The modules whose ``BUDGETS`` (level -> a dataclass with ``seconds``) ``--no-time-cap`` lifts."""
FULL_SIGHT = "full-sight"
"""The opponents of ``--pair easy``: Titan Race's one-step model on the whole true state."""
FULL_SIGHT_GAMES = ("titan-race",)


@dataclass
class Outcome:
    """One game's result for the stronger seat, and its thinking times."""

    share: float
    finished: bool
    times: list[float]


def full_sight(match: object) -> str:
    """Titan Race's one-step model on the whole true state of ``match`` (a Race)."""
    from app.games.titanrace.engine.bot import model
    from app.games.titanrace.engine.race import Race

    assert isinstance(match, Race)
    return model(match.state, match.options())


def play(game: str, number: int, level: BotLevel) -> Outcome:
    """Game ``number`` of ``game``: ``level`` at seat ``number % 3``, easy at the others (or
    full-sight players when ``level`` is easy)."""
    rules = ruleset(game)
    hero = number % SEATS
    others = FULL_SIGHT if level == EASY else EASY
    levels = [level if seat == hero else others for seat in range(SEATS)]
    dealing = Dealing(key=hashlib.sha256(f"bench bots {game} {number}".encode()).digest())
    state, pieces = rules.start(variant="standard", setup=rules.default_setup("standard"),
                                seats=[SeatSetup(i) for i in range(SEATS)], dealing=dealing)
    owner = {name: seat for seat, given in enumerate(pieces)
             for name in rules.piece_names(given)}
    match = rules.load(state)
    times: list[float] = []

    def answer(seat: int) -> str:
        started = time.perf_counter()
        seat_level = levels[seat]
        if seat_level == FULL_SIGHT:
            return full_sight(match)
        assert seat_level in (EASY, NORMAL, STRONG)
        choice = rules.bot_move(match, seat, seat_level)
        if seat == hero:
            times.append(time.perf_counter() - started)
        return choice

    for _ in range(STEP_CAP):
        to_act = rules.to_act(match)
        if not to_act:
            break
        if rules.simultaneous(match):
            rules.apply(match, "; ".join(rules.own_input(match, seat, answer(seat))
                                         for seat in to_act))
        else:
            rules.apply(match, answer(to_act[0]))
    winners = rules.winners(match)
    if not winners:
        return Outcome(0.0, False, times)
    seats = {owner[name] for name in winners}
    return Outcome(1.0 / len(seats) if hero in seats else 0.0, True, times)


def set_budgets(no_time_cap: bool, changes: dict[str, str]) -> None:
    """Each game process's budgets: ``--no-time-cap`` lets every level search by its
    iteration budget alone, so that variants compare fairly on a busy machine (the time cap
    binds sooner there); ``changes`` (``--budget``) set fields of every level's budget that
    has them, each value read as the field's present value's type."""
    for name in SEARCHES:
        budgets = getattr(importlib.import_module(name), "BUDGETS", {})
        for level, budget in budgets.items():
            fields = {f.name for f in dataclasses.fields(budget)}
            values = {key: _typed(getattr(budget, key), text)
                      for key, text in changes.items() if key in fields}
            if no_time_cap:
                values["seconds"] = None
            budgets[level] = dataclasses.replace(budget, **values)


def _typed(present: object, text: str) -> object:
    """``text`` as a value of ``present``'s type (a float for a time cap, which may be None)."""
    if text.lower() == "none":
        return None
    if isinstance(present, bool):
        return text.lower() in ("1", "true", "yes")
    if isinstance(present, int):
        return int(text)
    return float(text)


def budget_changes(given: list[str]) -> dict[str, str]:
    """``--budget`` values as field -> text."""
    changes = {}
    for item in given:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise SystemExit(f"--budget takes FIELD=VALUE, not {item!r}")
        changes[key.strip()] = value.strip()
    return changes


def wilson(wins: float, n: int) -> tuple[float, float]:
    """The 95% Wilson score interval of a win rate of ``wins`` out of ``n``."""
    if n == 0:
        return 0.0, 1.0
    p = wins / n
    centre = p + Z95 * Z95 / (2 * n)
    spread = Z95 * math.sqrt(p * (1 - p) / n + Z95 * Z95 / (4 * n * n))
    scale = 1 + Z95 * Z95 / n
    return (centre - spread) / scale, (centre + spread) / scale


def pairing(pool: ProcessPoolExecutor, game: str, level: BotLevel, games: int,
            start: int = 0) -> None:
    if level == EASY and game not in FULL_SIGHT_GAMES:
        print(f"{game}: no full-sight player to pair easy with", flush=True)
        return
    started = time.perf_counter()
    outcomes = list(pool.map(play, [game] * games, range(start, start + games),
                             [level] * games))
    wins = sum(o.share for o in outcomes)
    low, high = wilson(wins, games)
    times = [t for o in outcomes for t in o.times]
    unfinished = sum(1 for o in outcomes if not o.finished)
    against = "two full-sight players, " if level == EASY else ""
    print(f"{game}: {level} wins {wins / games:.0%} of {games} games ({against}"
          f"95% interval {low:.0%}-{high:.0%}; a fair share is {1 / SEATS:.0%})", flush=True)
    mean = sum(times) / len(times) if times else 0.0
    print(f"  {level} thought {len(times)} times: mean {mean * 1000:.0f} ms, worst "
          f"{max(times, default=0.0) * 1000:.0f} ms; {unfinished} games unfinished; "
          f"{time.perf_counter() - started:.0f} s", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=30, help="games per pairing")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1,
                        help="games played at once (processes)")
    parser.add_argument("--game", choices=GAMES, action="append",
                        help="only this game (repeatable)")
    parser.add_argument("--pair", choices=(STRONG, NORMAL, EASY), action="append",
                        help="only this level against two easy (repeatable); easy: against "
                             "two full-sight players")
    parser.add_argument("--no-time-cap", action="store_true",
                        help="search by the iteration budgets alone (for tuning on a busy machine)")
    parser.add_argument("--budget", action="append", default=[], metavar="FIELD=VALUE",
                        help="a budget field for every level that has it, e.g. seconds=0.9")
    parser.add_argument("--start", type=int, default=0,
                        help="the first game's number (other deals than a run from 0)")
    args = parser.parse_args()
    changes = budget_changes(args.budget)
    with ProcessPoolExecutor(max_workers=args.jobs, initializer=set_budgets,
                             initargs=(args.no_time_cap, changes)) as pool:
        for game in args.game or GAMES:
            for level in args.pair or (STRONG, NORMAL):
                pairing(pool, game, level, args.games, args.start)


if __name__ == "__main__":
    main()
