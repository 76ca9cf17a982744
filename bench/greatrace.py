"""The Great Race engine and computer player, measured beside Titan Race's in the same run.

    python3 bench/greatrace.py [--games 20] [--seed 0]

Prints figures; it asserts nothing (the tests check behaviour, this measures speed): inputs
applied per second in random and in computer play, the time of options(), view() (full and per
seat), a to_json()/from_json() round trip and the computer's choice per decision kind, and the
length of a computer game.

The Great Race has no turn limit (a race goes on until a vehicle finishes) and random play seldom
reaches the finish, so the bench stops a Great Race game of its own accord once game turn
``STOP_AFTER_TURN`` is over, and says how many games it stopped.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from abc import ABC, abstractmethod
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.games.greatrace.engine import CREWS, GreatRace
from app.games.greatrace.engine.bot import choose as great_race_choose
from app.games.titanrace.engine import BUILT_IN, TITANS, Race, new_game
from app.games.titanrace.engine.bot import choose as titan_choose

STOP_AFTER_TURN = 30
"""The bench's own guard for The Great Race: a game not over when this game turn is over is
stopped there (where the first rules called the race off, so the figures stay comparable)."""


class Engine(ABC):
    """What the bench needs from a game engine."""

    name = ""
    turn_word = "turns"

    @abstractmethod
    def new(self, seed: int) -> Any:
        """Each engine says."""

    def owner(self, game: Any) -> str | None:
        """Who the options and the choice are asked for (None: the engine's default)."""
        return None

    @abstractmethod
    def options(self, game: Any) -> list[str]:
        """Each engine says."""

    @abstractmethod
    def choose(self, game: Any) -> str:
        """Each engine says."""

    def kind(self, game: Any) -> str:
        pending = game.pending()
        return str(pending["kind"]) if pending else "over"

    @abstractmethod
    def seats(self, game: Any) -> list[int]:
        """Each engine says."""

    @abstractmethod
    def turns(self, game: Any) -> int:
        """Each engine says."""

    @abstractmethod
    def from_json(self, data: dict[str, Any]) -> Any:
        """Each engine says."""

    def stopped(self, game: Any) -> bool:
        """Whether the bench stops playing ``game`` before its end (its own guard)."""
        return False


class GreatRaceEngine(Engine):
    name = "The Great Race"
    turn_word = "game turns"

    def new(self, seed: int) -> GreatRace:
        crews = list(CREWS[: 2 + seed % 3])
        start = "alger" if seed % 4 < 2 else "le-cap"
        return GreatRace.new(crews, start=start, leaders=seed % 2 == 1, seed=seed)

    def owner(self, game: GreatRace) -> str | None:
        seats = game.to_act()
        return game.crew_of(seats[0]) if seats else None

    def options(self, game: GreatRace) -> list[str]:
        return game.options(self.owner(game))

    def choose(self, game: GreatRace) -> str:
        return great_race_choose(game, self.owner(game))

    def seats(self, game: GreatRace) -> list[int]:
        return [crew.seat for crew in game.state.crews.values()]

    def turns(self, game: GreatRace) -> int:
        return game.state.turn

    def from_json(self, data: dict[str, Any]) -> GreatRace:
        return GreatRace.from_json(data)

    def stopped(self, game: GreatRace) -> bool:
        return game.state.turn > STOP_AFTER_TURN


class TitanRaceEngine(Engine):
    name = "Titan Race"
    turn_word = "rounds"

    def new(self, seed: int) -> Race:
        rnd = random.Random(seed)
        titans = rnd.sample(TITANS, rnd.randint(3, 6))
        return new_game(titans, circuits=[BUILT_IN[seed % len(BUILT_IN)]], seed=seed)

    def options(self, game: Race) -> list[str]:
        return game.options()

    def choose(self, game: Race) -> str:
        return titan_choose(game)

    def seats(self, game: Race) -> list[int]:
        return sorted({titan.seat for titan in game.state.titans.values()})

    def turns(self, game: Race) -> int:
        return game.state.round

    def from_json(self, data: dict[str, Any]) -> Race:
        return Race.from_json(data)


@dataclass
class Figures:
    """Times in seconds, by what was timed."""

    inputs: int = 0
    apply: float = 0.0
    wall: float = 0.0
    calls: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    lengths: list[tuple[int, int]] = field(default_factory=list)
    """(turns, inputs) of each game played to its end."""
    stopped: int = 0
    """Games the bench stopped before their end (:meth:`Engine.stopped`)."""

    def time(self, what: str, call: Callable[[], object]) -> None:
        t0 = time.perf_counter()
        call()
        self.calls[what].append(time.perf_counter() - t0)


def play(engine: Engine, games: int, seed: int, bot: bool, probe: bool) -> Figures:
    """Play ``games`` games to their end, randomly or with the computer at every seat; time apply
    alone, and with ``probe`` also the queries on every position reached."""
    figures = Figures()
    start = time.perf_counter()
    for number in range(seed, seed + games):
        game = engine.new(number)
        rnd = random.Random(number)
        while not game.is_over and not engine.stopped(game):
            if probe:
                probe_queries(engine, game, figures)
            if bot:
                kind = engine.kind(game)
                t0 = time.perf_counter()
                choice = engine.choose(game)
                figures.calls[f"choose {kind}"].append(time.perf_counter() - t0)
            else:
                choice = rnd.choice(engine.options(game))
            t0 = time.perf_counter()
            game.apply(choice)
            figures.apply += time.perf_counter() - t0
            figures.inputs += 1
        if game.is_over:
            figures.lengths.append((engine.turns(game), len(game.inputs)))
        else:
            figures.stopped += 1
    figures.wall = time.perf_counter() - start
    return figures


def probe_queries(engine: Engine, game: Any, figures: Figures) -> None:
    figures.time("options()", lambda: engine.options(game))
    figures.time("view() full", lambda: game.view())
    for seat in engine.seats(game):
        figures.time("view(seat)", partial(game.view, seat))
    figures.time("to_json/from_json", lambda: engine.from_json(game.to_json()))


def microseconds(times: list[float]) -> str:
    return (f"median {statistics.median(times) * 1e6:8.1f} µs, mean "
            f"{statistics.fmean(times) * 1e6:8.1f} µs, worst {max(times) * 1e3:6.2f} ms"
            f"  ({len(times)} calls)")


def report(engine: Engine, random_play: Figures, bot_play: Figures) -> dict[str, float]:
    print(f"\n== {engine.name}")
    print(f"random play: {played(random_play)}, {random_play.inputs} inputs, "
          f"{random_play.inputs / random_play.apply:,.0f} inputs/s (apply only)")
    print(f"computer play: {played(bot_play)}, {bot_play.inputs} inputs, "
          f"{bot_play.inputs / bot_play.apply:,.0f} inputs/s (apply only), "
          f"{bot_play.inputs / bot_play.wall:,.0f} inputs/s with the computer's choice")
    for what in ("options()", "view() full", "view(seat)", "to_json/from_json"):
        print(f"  {what:22} {microseconds(random_play.calls[what])}")
    for what in sorted(k for k in bot_play.calls if k.startswith("choose")):
        print(f"  {what:22} {microseconds(bot_play.calls[what])}")
    turns = [t for t, _ in bot_play.lengths]
    inputs = [n for _, n in bot_play.lengths]
    if turns:
        print(f"computer game length: {engine.turn_word} median {statistics.median(turns):g} "
              f"(min {min(turns)}, max {max(turns)}); inputs median "
              f"{statistics.median(inputs):g} (min {min(inputs)}, max {max(inputs)})")
    return {
        "random": random_play.inputs / random_play.apply,
        "bot": bot_play.inputs / bot_play.wall,
        "options()": statistics.fmean(random_play.calls["options()"]),
        "view() full": statistics.fmean(random_play.calls["view() full"]),
        "to_json/from_json": statistics.fmean(random_play.calls["to_json/from_json"]),
        "choose": sum(sum(v) for k, v in bot_play.calls.items() if k.startswith("choose"))
        / bot_play.inputs,
    }


def played(figures: Figures) -> str:
    """``20 games`` or ``20 games (14 stopped after game turn 30)``."""
    games = len(figures.lengths) + figures.stopped
    if not figures.stopped:
        return f"{games} games"
    return f"{games} games ({figures.stopped} stopped after game turn {STOP_AFTER_TURN})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=20, help="games per engine and kind of play")
    parser.add_argument("--seed", type=int, default=0, help="the first game's seed")
    args = parser.parse_args()

    results = {}
    for engine in (GreatRaceEngine(), TitanRaceEngine()):
        random_play = play(engine, args.games, args.seed, bot=False, probe=True)
        bot_play = play(engine, args.games, args.seed, bot=True, probe=False)
        results[engine.name] = report(engine, random_play, bot_play)

    great, titan = results["The Great Race"], results["Titan Race"]
    print("\n== The Great Race / Titan Race")
    print(f"  random play inputs/s    {great['random'] / titan['random']:.2f}")
    print(f"  computer play inputs/s  {great['bot'] / titan['bot']:.2f}")
    for what in ("options()", "view() full", "to_json/from_json", "choose"):
        print(f"  {what:23} {great[what] / titan[what]:.2f} (mean time per call)")


if __name__ == "__main__":
    main()
