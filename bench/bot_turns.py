"""The worker's computer players: what a move costs the request that hands the turn to a strong
seat, and how soon the worker plays that seat.

    python3 bench/bot_turns.py [--games 4] [--decisions 30] [--database-url URL]

Plays ``--games`` games of one human (answering its first option) against a strong and an easy
computer seat, on a fresh SQLite file unless a database is given. The human's moves go through
the service as a web request's would; the worker runs in a thread as ``titanpost serve`` runs
it (every second). Prints the p50/p99 time of the human's move when it hands the turn to the
strong seat, the p50/p99 wait until the worker has played the strong seat's whole turn (every
decision of it, each search included, and the easy seat's moves after it), and the search
times. Prints figures; it asserts nothing.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import threading
import time
from pathlib import Path
from statistics import median

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.core.config import Settings
from app.core.migrate import upgrade
from app.features.clock import botturns
from app.listeners import build_service
from app.service import GameService


def p99(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))] if ordered else 0.0


def worker_loop(service: GameService, stop: threading.Event, searches: list[float]) -> None:
    while not stop.is_set():
        searches.extend(botturns.run_due(service, "bench-worker").seconds)
        stop.wait(botturns.INTERVAL_SECONDS)


def play(service: GameService, decisions: int, moves: list[float], waits: list[float]) -> None:
    created = service.create_game(seats=[{"email": "ann@example.org"},
                                         {"bot": True, "level": "strong"}, {"bot": True}])
    service.accept(created["invitations"][0]["invite_token"])
    uid = created["game"]
    service.start(uid, created["creator_token"])
    for _ in range(decisions):
        game = service.state(uid, None)["game"]
        if game["status"] != "active":
            return
        if 0 not in game["to_act"]:
            time.sleep(0.01)
            continue
        options = service.options(uid, 0)
        started = time.perf_counter()
        after = service.submit(uid, 0, options["seq"], options["options"][0])["game"]
        took = time.perf_counter() - started
        if 1 in after["to_act"]:
            moves.append(took)
            while 1 in service.state(uid, None)["game"]["to_act"]:
                time.sleep(0.005)
            waits.append(time.perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=4)
    parser.add_argument("--decisions", type=int, default=30)
    parser.add_argument("--database-url", default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        url = args.database_url or f"sqlite:///{Path(folder) / 'bench.db'}"
        upgrade(url)
        service = build_service(Settings.from_env({"TITANPOST_DATABASE_URL": url,
                                                   "TITANPOST_ENV": "test"}))
        moves: list[float] = []
        waits: list[float] = []
        searches: list[float] = []
        stop = threading.Event()
        worker = threading.Thread(target=worker_loop, args=(service, stop, searches))
        worker.start()
        try:
            for _ in range(args.games):
                play(service, args.decisions, moves, waits)
        finally:
            stop.set()
            worker.join()
            service.engine.dispose()
    print(f"human move handing the turn to a strong seat: {len(moves)} moves, "
          f"p50 {median(moves) * 1000:.1f} ms, p99 {p99(moves) * 1000:.1f} ms")
    print(f"until the worker has played its turn: p50 {median(waits) * 1000:.0f} ms, "
          f"p99 {p99(waits) * 1000:.0f} ms (the worker looks every "
          f"{botturns.INTERVAL_SECONDS:g} s)")
    if searches:
        print(f"strong searches: {len(searches)}, p50 {median(searches) * 1000:.1f} ms, "
              f"max {max(searches) * 1000:.1f} ms")


if __name__ == "__main__":
    main()
