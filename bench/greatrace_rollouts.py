"""How many rollouts The Great Race's searching players afford, per decision kind.

    python3 bench/greatrace_rollouts.py [--rounds 8] [--repeat 3] [--capped]

Sets up seeded 3-crew races played by the easy player and keeps a few positions of each kind
the search decides at the start of a game turn (``take``, ``plan``, ``place``) and later
(``turn``, ``drive``). For each kind it plays ``--rounds`` sampled worlds of the strong
player's candidates, as :func:`search` does, and prints the rollouts per second of process CPU
time (the best of ``--repeat`` runs: the machine may be shared). ``--capped`` also runs the
strong search itself with its time cap on a process-CPU clock and prints the rollouts it
affords per decision. It asserts nothing: the tests check behaviour, this measures speed.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.games.greatrace.engine import CREWS, GreatRace
from app.games.greatrace.engine.bot import choose
from app.games.greatrace.engine.search import (
    BUDGETS,
    STRONG,
    _fork,
    _rollout,
    candidates,
    sample_world,
    search,
)

KINDS = ("take", "plan", "place", "turn", "drive")
PER_KIND = 6
RACES = 40
Position = tuple[GreatRace, int]


def positions() -> dict[str, list[Position]]:
    """Up to ``PER_KIND`` positions of each kind (a copy of the game and the seat to move)."""
    found: dict[str, list[Position]] = {kind: [] for kind in KINDS}
    for number in range(RACES):
        game = GreatRace.new(list(CREWS[:3]), seed=500 + number, leaders=number % 2 == 1)
        step = 0
        while not game.is_over:
            seats = [s for s in game.to_act() if len(game.options(game.crew_of(s))) > 1]
            kind = (game.pending() or {}).get("kind")
            if seats and kind in found and len(found[kind]) < PER_KIND \
                    and step % 5 == number % 5:
                found[kind].append((game.copy(), seats[0]))
            game.apply("; ".join(choose(game, game.crew_of(s)) for s in game.to_act()))
            step += 1
        if all(len(kept) >= PER_KIND for kept in found.values()):
            break
    return found


def rollouts(kept: list[Position], rounds: int) -> tuple[int, float]:
    """The rollouts played and the CPU seconds they took, over ``rounds`` worlds a position."""
    budget = BUDGETS[STRONG]
    played = 0
    began = time.process_time()
    for index, (game, seat) in enumerate(kept):
        crew = game.crew_of(seat)
        rnd = random.Random(index)
        options = game.options(crew)
        kind = (game.pending(crew) or {}).get("kind")
        most = budget.plans if kind == "plan" else budget.most
        answers = candidates(game, crew, options, choose(game, crew), rnd, most)
        for _ in range(rounds):
            world = sample_world(game, seat, rnd)
            if world is None:
                break
            for answer in answers:
                _rollout(_fork(world), crew, answer, budget.depth,
                         budget.turns if budget.turn_end else None)
                played += 1
    return played, time.process_time() - began


def capped(kept: list[Position]) -> float:
    """The mean rollouts of the strong search per decision, its time cap on CPU time."""
    done = [search(game, seat, BUDGETS[STRONG], seed=i, clock=time.process_time).iterations
            for i, (game, seat) in enumerate(kept)]
    return sum(done) / len(done)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=8, help="worlds per position")
    parser.add_argument("--repeat", type=int, default=3, help="runs, the best one kept")
    parser.add_argument("--capped", action="store_true",
                        help="also the strong search's rollouts per decision within its cap")
    args = parser.parse_args()
    found = positions()
    for kind in KINDS:
        runs = [rollouts(found[kind], args.rounds) for _ in range(args.repeat)]
        played, seconds = min(runs, key=lambda run: run[1])
        line = (f"{kind:6} {played / seconds:6.1f} rollouts/s ({1000 * seconds / played:.2f} ms "
                f"each, {played} rollouts, {len(found[kind])} positions)")
        if args.capped:
            line += f"; strong searches {capped(found[kind]):.0f} a decision"
        print(line, flush=True)


if __name__ == "__main__":
    main()
