"""CPU per ``POST /moves``, in-process: the move path alone, without HTTP or other clients.

    python3 bench/move_cpu.py [--database sqlite|postgres] [--moves 400] [--profile 30]
                              [--statements]
                              [--pg postgresql://postgres@127.0.0.1:5432/postgres]

Games are set up through Flask's test client on a scratch database (a temporary SQLite file or
a scratch PostgreSQL database), each game's moves worked out beforehand from the service's
export as ``bench/posts_only.py`` does, then only the ``POST /api/games/<id>/moves`` are timed:
CPU time of this process (``time.process_time``) per move, its median, mean and tenth
percentile (the least disturbed by other work on a shared machine). The machine
being shared, CPU time is steadier than wall time; compare two versions by alternating runs.
``--profile N`` runs the timed part under cProfile and prints its N costliest functions
(cumulative and own time); ``--statements`` counts the SQL statements a move sends.
``--parts`` then plays as many moves again under cProfile and splits a move's CPU into its
parts (Flask around the view, the game read, the rules, the log entry, the clock, the mail, the
commit, the answer): each part's share of the profiled move, and that share of the unprofiled
median (cProfile slows Python code more than the drivers' C code, so the milliseconds are
estimates; the shares say where the time goes).

Prints figures; it asserts nothing.
"""

from __future__ import annotations

import argparse
import cProfile
import logging
import pstats
import random
import secrets
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from statistics import mean, median
from types import CodeType
from typing import Any

from sqlalchemy import event

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app import create_app
from app.core.config import Settings
from app.core.migrate import upgrade
from bench.api import _test_client_game, postgres_database
from bench.posts_only import Script, script_export


@contextmanager
def scratch(kind: str, pg: str) -> Iterator[str]:
    """A migrated scratch database's URL."""
    if kind == "postgres":
        with postgres_database(pg) as (url, _raw):
            upgrade(url)
            yield url
        return
    with tempfile.TemporaryDirectory() as folder:
        url = f"sqlite:///{folder}/bench.db"
        upgrade(url)
        yield url


def scripts(client: Any, service: Any, moves: int, rnd: random.Random) -> list[Script]:
    """Games enough for ``moves`` moves, set up and played out locally (not timed)."""
    made: list[Script] = []
    number = 0
    while sum(len(s.moves) for s in made) < moves:
        number += 1
        uid, tokens = _test_client_game(client, rnd, number)
        made.append(script_export(service.export(uid), uid, tokens, rnd))
    return made


def post_all(client: Any, made: list[Script], moves: int,
             profile_after: tuple[int, cProfile.Profile] | None = None) -> list[float]:
    """POST the scripted moves, game after game; the CPU seconds of each. ``profile_after``:
    (N, profiler) to profile the moves after the first N (timed all the same)."""
    costs: list[float] = []
    for script in made:
        seq = script.start_seq
        for seat, text in script.moves:
            if len(costs) >= moves:
                return costs
            if profile_after is not None and len(costs) == profile_after[0]:
                profile_after[1].enable()
            c0 = time.process_time()
            answer = client.post(f"/api/games/{script.uid}/moves",
                                 json={"expected_seq": seq, "input": text},
                                 headers={"Authorization": f"Bearer {script.tokens[seat]}"})
            costs.append(time.process_time() - c0)
            if answer.status_code != 200:
                raise SystemExit(f"move refused: {answer.status_code} {answer.text[:300]}")
            seq = int(answer.json["seq"])
    return costs


PARTS: tuple[tuple[str, str, str], ...] = (
    ("the game read: token, game row, seats and clock rows, state", "app/service/base.py",
     "_load_as"),
    ("  of which the seats with the clock's rows", "app/features/clock/rows.py", "read_ahead"),
    ("the rules: the input applied", "app/games/base.py", "apply"),
    ("the log entry: hash chain, INSERT, snapshot", "app/service/writing.py", "_append"),
    ("the clock: deadlines worked out and upserted", "app/features/clock/listener.py",
     "__call__"),
    ("the mail: outbox rows", "app/mail/notify.py", "__call__"),
    ("the commit", "sqlalchemy/orm/session.py", "commit"),
    ("the answer: summary and the seat's view", "app/service/base.py", "_state_body"),
)
"""A move's parts: (label, the end of its function's file name, the function's name)."""


def print_parts(profiler: cProfile.Profile, moves: int, median_ms: float) -> None:
    """Each part's cumulative time as a share of the profiled move (see the docstring)."""
    entries = profiler.getstats()
    total = sum(entry.inlinetime for entry in entries)
    functions = [(entry.code, entry.totaltime) for entry in entries
                 if isinstance(entry.code, CodeType)]  # (not the built-ins)

    def spent(file_end: str, name: str) -> float:
        """The function's cumulative time (of several of that name in the file, which may
        call one another, the largest)."""
        return max((cumulative for code, cumulative in functions
                    if code.co_name == name and code.co_filename.endswith(file_end)),
                   default=0.0)

    view = spent("app/web/api/games.py", "submit_move")
    rows = [("the request around the view: test client, WSGI, Flask, hooks, auth, JSON",
             total - view)]
    rows += [(label, spent(file_end, name)) for label, file_end, name in PARTS]
    counted = sum(seconds for label, seconds in rows[1:] if not label.startswith(" "))
    rows.append(("the rest of the view: checks, seats, events, bots", view - counted))
    print(f"a move's parts ({moves} moves profiled; ms: the share of the unprofiled median)")
    for label, seconds in rows:
        share = seconds / total if total else 0.0
        print(f"  {label:<72} {share:6.1%} {share * median_ms:6.3f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--database", choices=("sqlite", "postgres"), default="sqlite")
    parser.add_argument("--moves", type=int, default=400)
    parser.add_argument("--profile", type=int, default=0,
                        help="print the N costliest functions (cProfile)")
    parser.add_argument("--statements", action="store_true",
                        help="count the SQL statements per move (the counting costs CPU too)")
    parser.add_argument("--parts", action="store_true",
                        help="then split a move's CPU into its parts (as many moves again, "
                        "profiled)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--pg", default="postgresql://postgres@127.0.0.1:5432/postgres")
    args = parser.parse_args()
    if args.parts and args.profile:
        parser.error("--parts and --profile each run a profiler: give one of them")
    logging.getLogger("titanpost.access").disabled = True
    with scratch(args.database, args.pg) as url:
        settings = Settings.from_env({"TITANPOST_DATABASE_URL": url,
                                      "TITANPOST_ENV": "production",
                                      "TITANPOST_SECRET_KEY": secrets.token_hex(32)})
        app = create_app(settings)
        service = app.extensions["titanpost.service"]
        client = app.test_client()
        wanted = args.moves * 2 if args.parts else args.moves
        made = scripts(client, service, wanted, random.Random(args.seed))
        seen: list[str] = []
        if args.statements:
            event.listen(service.engine, "before_cursor_execute",
                         lambda _c, _k, statement, *_a: seen.append(statement))
        profiler = cProfile.Profile() if args.profile else None
        if profiler is not None:
            profiler.enable()
        parted = cProfile.Profile() if args.parts else None
        costs = post_all(client, made, wanted,
                         (args.moves, parted) if parted is not None else None)
        if profiler is not None:
            profiler.disable()
        if parted is not None:
            parted.disable()
        costs = costs[:args.moves]
        service.engine.dispose()
    ms = [c * 1000 for c in costs]
    tenth = sorted(ms)[len(ms) // 10]
    print(f"{args.database}: {len(ms)} POST /moves, CPU per move median {median(ms):.2f} ms, "
          f"mean {mean(ms):.2f} ms, tenth percentile {tenth:.2f} ms")
    if args.statements:
        begins = sum(1 for s in seen if s.lstrip().upper().startswith("BEGIN"))
        print(f"SQL statements per move: {(len(seen) - begins) / len(ms):.2f} "
              f"(and {begins / len(ms):.2f} BEGIN sent as a statement)")
    if parted is not None:
        print_parts(parted, args.moves, median(ms))
    if profiler is not None:
        stats = pstats.Stats(profiler)
        stats.sort_stats("cumulative").print_stats(args.profile)
        stats.sort_stats("tottime").print_stats(args.profile)


if __name__ == "__main__":
    main()
