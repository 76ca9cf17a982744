"""Engine benchmark: inputs applied per second in random full games, and log replay time.

    python3 bench/engine.py [--games 200] [--replays 50]

Prints figures; it asserts nothing (the tests check behaviour, this measures speed).
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.games.titanrace.engine import BUILT_IN, TITANS, Race, new_game


def random_game(seed: int) -> Race:
    rnd = random.Random(seed)
    titans = rnd.sample(TITANS, rnd.randint(3, 6))
    return new_game(titans, circuits=[BUILT_IN[seed % len(BUILT_IN)]], seed=seed)


def bench_apply(games: int) -> tuple[int, float, float]:
    """Play random games; time only ``apply`` and, separately, the whole loop with options."""
    applied = 0
    apply_time = 0.0
    start = time.perf_counter()
    for seed in range(games):
        race = random_game(seed)
        rnd = random.Random(seed)
        while not race.is_over:
            choice = rnd.choice(race.options())
            t0 = time.perf_counter()
            race.apply(choice)
            apply_time += time.perf_counter() - t0
            applied += 1
    return applied, apply_time, time.perf_counter() - start


def logs_totalling(length: int) -> list[Race]:
    """Finished random six-Titan games whose logs add up to exactly ``length`` inputs.

    A real race ends long before 1,000 inputs (every turn must move forward), so the
    1,000-input log is made of consecutive whole games, the last one cut short.
    """
    logs: list[Race] = []
    total, seed = 0, 0
    while total < length:
        race = new_game(list(TITANS), circuits=[BUILT_IN[seed % len(BUILT_IN)]], seed=seed)
        rnd = random.Random(seed)
        while not race.is_over and total + len(race.inputs) < length:
            race.apply(rnd.choice(race.options()))
        total += len(race.inputs)
        logs.append(race)
        seed += 1
    return logs


def bench_replay(length: int, repeats: int) -> tuple[list[float], int]:
    logs = logs_totalling(length)
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for race in logs:
            again = race.replay()
            assert again.state.turn_index == race.state.turn_index
        times.append(time.perf_counter() - t0)
    return times, max(len(race.inputs) for race in logs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=200)
    parser.add_argument("--replays", type=int, default=30)
    parser.add_argument("--log", type=int, default=1000, help="inputs in the replayed log")
    args = parser.parse_args()

    applied, apply_time, wall = bench_apply(args.games)
    print(f"random full games:   {args.games} games, {applied} inputs")
    print(f"  apply only:        {applied / apply_time:,.0f} inputs/s")
    print(f"  with options:      {applied / wall:,.0f} inputs/s (listing options + apply)")
    times, longest = bench_replay(args.log, args.replays)
    print(f"replay {args.log} inputs from scratch (whole games, longest {longest} inputs):")
    print(f"  median {statistics.median(times) * 1000:.1f} ms, "
          f"best {min(times) * 1000:.1f} ms, worst {max(times) * 1000:.1f} ms "
          f"over {len(times)} runs")


if __name__ == "__main__":
    main()
