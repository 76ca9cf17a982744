"""Clock benchmark: the time of one scheduler tick, against how many games are active.

    python3 bench/clock.py [--sizes 10000:100,100:100] [--ticks 5] [--explain]
                           [--database-url postgresql+psycopg://postgres@127.0.0.1:5432/postgres]

For each size ``N:D`` the script builds a database with ``N`` active three-seat games, ``D`` of
them with a deadline due, and times :meth:`Timekeeper.process_due` for one tick, ``--ticks``
times over. The cost of a tick should follow the due rows, not the games: the two default sizes
have the same 100 due games among 10,000 and among 100 active ones.

How the database is built:

- One game is created and started through the game service (seed 5, ``deadline_hours`` 24,
  the default reminders at 50% and 2h before): a real game, waiting for its first decision, with
  its three deadline rows (the timeout and two reminders).
- The other ``N - 1`` games are copies of it inserted directly (the ``games``, ``seats`` and
  ``deadlines`` rows): real, playable games too, since a started game with no moves yet is its
  ``initial_state`` and its seats. ``D`` of them (the original included) are due one day after
  the opening; the others' rows are moved four weeks later.
- Each repetition is two ticks. The "reminder tick", 22 hours into the decision, sends the
  two reminders of every due game (``2 D`` rows). The "timeout tick", when the ``D`` deadlines
  pass, times every due game out: the computer plays the late seat's whole turn
  (``GameService.act_for``, with the outbox and deadline listeners), which opens the next
  player's decision, due a day later. The next repetition ticks then, so every repetition has
  fresh due rows in the same games. Both ticks are timed, and so are the claim statements
  within the timeout tick.
- Printed per size: the median time of a timeout tick and per due row, the time of its claims,
  the median reminder tick; then the ratio of the first size's times to the second's (about 1
  when the cost follows the due rows). ``--explain`` adds the plan of the first claim of a tick
  (``EXPLAIN (ANALYZE, BUFFERS)`` in a rolled-back savepoint on PostgreSQL, ``EXPLAIN QUERY
  PLAN`` on SQLite).

SQLite runs in a temporary file; with ``--database-url`` (a PostgreSQL database on the server
to use, reachable without a password prompt) a scratch database is created next to it for each
size and dropped afterwards. Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import event, insert, select, text

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.core.config import Settings
from app.core.migrate import upgrade
from app.core.models import Deadline, Game, Seat
from app.features.clock.arithmetic import aware
from app.features.clock.timekeeper import Timekeeper, install
from app.listeners import build_service
from app.service import GameService

DAY = timedelta(days=1)
SECOND = timedelta(seconds=1)
LATER = timedelta(days=28)
"""How far the rows of the games that are not due are moved."""
CHUNK = 1000


@contextmanager
def database(server: str | None, label: str) -> Iterator[str]:
    """A fresh, empty database: a temporary SQLite file, or a scratch PostgreSQL database."""
    if server is None:
        folder = tempfile.mkdtemp(prefix="titanpost-clock-bench-")
        try:
            yield f"sqlite:///{folder}/bench.db"
        finally:
            shutil.rmtree(folder, ignore_errors=True)
        return
    import psycopg

    name = f"titanpost_bench_clock_{label}_{uuid.uuid4().hex[:8]}"
    admin = server.replace("postgresql+psycopg://", "postgresql://")
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    base = server.rsplit("/", 1)[0]
    if base.startswith("postgresql://"):
        base = base.replace("postgresql://", "postgresql+psycopg://", 1)
    try:
        yield f"{base}/{name}"
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def make_service(url: str) -> GameService:
    upgrade(url)
    return build_service(Settings.from_env({"TITANPOST_DATABASE_URL": url,
                                            "TITANPOST_ENV": "test"}))


def populate(service: GameService, games: int, due: int) -> datetime:
    """``games`` active games, ``due`` of them due one day after the returned opening time."""
    created = service.create_game(seats=[{"email": f"t{i}@bench.example"} for i in range(3)],
                                  seed=5, settings={"deadline_hours": 24})
    for invitation in created["invitations"]:
        service.accept(invitation["invite_token"])
    service.start(created["game"], created["creator_token"])
    games_t, seats_t, deadlines_t = (Game.__table__, Seat.__table__,  # type: ignore[attr-defined]
                                     Deadline.__table__)  # type: ignore[attr-defined]
    with service.engine.begin() as conn:
        game = dict(conn.execute(select(games_t).where(games_t.c.uid == created["game"]))
                    .mappings().one())
        seats = [dict(r) for r in conn.execute(
            select(seats_t).where(seats_t.c.game_id == game["id"])).mappings()]
        rows = [dict(r) for r in conn.execute(
            select(deadlines_t).where(deadlines_t.c.game_id == game["id"])).mappings()]
        opened = aware(rows[0]["opened_at"])
        for first in range(1, games, CHUNK):
            numbers = range(first, min(games, first + CHUNK))
            conn.execute(insert(games_t), [
                game | {"id": game["id"] + n, "uid": uuid.uuid4().hex, "name": f"bench {n}"}
                for n in numbers])
            conn.execute(insert(seats_t), [
                {k: v for k, v in seat.items() if k != "id"}
                | {"game_id": game["id"] + n, "email": f"n{n}p{seat['position']}@bench.example"}
                for n in numbers for seat in seats])
            conn.execute(insert(deadlines_t), [
                {k: v for k, v in row.items() if k != "id"} | {"game_id": game["id"] + n} | (
                    {} if n < due else {"due_at": aware(row["due_at"]) + LATER,
                                        "opened_at": aware(row["opened_at"]) + LATER})
                for n in numbers for row in rows])
        if conn.dialect.name == "postgresql":
            conn.execute(text("SELECT setval('games_id_seq', (SELECT max(id) FROM games))"))
            conn.execute(text("ANALYZE"))
        else:
            conn.execute(text("ANALYZE"))
    return opened


class Claims:
    """Times the claim statements of a tick; on request, explains the next one as it runs
    (the plan of a real claim of the due rows, in the tick's own transaction)."""

    def __init__(self, keeper: Timekeeper) -> None:
        self.seconds = 0.0
        self.explain_next = False
        self.plan: list[str] = []
        original = keeper._claim

        def timed(*args: Any, **kwargs: Any) -> list[int]:
            started = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                self.seconds += time.perf_counter() - started

        keeper._claim = timed  # type: ignore[method-assign]
        event.listen(keeper.service.engine, "before_cursor_execute", self._seen)

    def _seen(self, conn: Any, cursor: Any, statement: str, parameters: Any, _context: Any,
              _many: bool) -> None:
        if not self.explain_next or "claimed_by" not in statement:
            return
        if not statement.lstrip().upper().startswith(("WITH", "UPDATE")):
            return
        self.explain_next = False
        if conn.dialect.name == "postgresql":
            # EXPLAIN ANALYZE runs the UPDATE: inside a savepoint that is rolled back
            cursor.execute("SAVEPOINT bench_explain")
            cursor.execute("EXPLAIN (ANALYZE, BUFFERS) " + statement, parameters)
            self.plan = [row[0] for row in cursor.fetchall()]
            cursor.execute("ROLLBACK TO SAVEPOINT bench_explain")
        else:
            cursor.execute("EXPLAIN QUERY PLAN " + statement, parameters)
            self.plan = [row[-1] for row in cursor.fetchall()]


def bench_size(server: str | None, games: int, due: int, ticks: int,
               show_plan: bool) -> dict[str, float]:
    with database(server, f"{games}_{due}") as url:
        service = make_service(url)
        started = time.perf_counter()
        opened = populate(service, games, due)
        built = time.perf_counter() - started
        keeper = install(service)
        claims = Claims(keeper)
        keeper.process_due(opened, max_gap=None)  # connects, marks the first tick
        remind_times, tick_times, claim_times = [], [], []
        moment = opened
        for _ in range(ticks):
            started = time.perf_counter()
            report = keeper.process_due(moment + DAY - 2 * 3600 * SECOND + SECOND, max_gap=None)
            remind_times.append(time.perf_counter() - started)
            if report.reminders != 2 * due:
                print(f"    (expected {2 * due} reminders, the tick sent {report.reminders})")
            moment += DAY + SECOND
            claims.seconds = 0.0
            started = time.perf_counter()
            report = keeper.process_due(moment, max_gap=None)
            tick_times.append(time.perf_counter() - started)
            claim_times.append(claims.seconds)
            if report.timeouts != due or report.failed:
                print(f"    (expected {due} timeouts, the tick did {report.timeouts}, "
                      f"{report.failed} failed)")
        if show_plan:  # one more tick, not timed: its first claim, explained
            keeper.process_due(moment + DAY - 2 * 3600 * SECOND + SECOND, max_gap=None)
            claims.explain_next = True
            keeper.process_due(moment + DAY + SECOND, max_gap=None)
        tick = statistics.median(tick_times)
        remind = statistics.median(remind_times)
        claim = statistics.median(claim_times)
        print(f"  {games:>6} active games, {due} due: built in {built:5.1f}s; "
              f"timeout tick {tick * 1000:7.1f} ms median "
              f"({min(tick_times) * 1000:.0f}-{max(tick_times) * 1000:.0f}), "
              f"{tick * 1000 / due:5.2f} ms per due row, claims {claim * 1000:5.1f} ms; "
              f"reminder tick {remind * 1000:6.1f} ms ({remind * 1000 / (2 * due):.2f} ms per "
              f"row)")
        if show_plan:
            print("    plan of the first claim of a tick:")
            for line in claims.plan:
                print("      " + line)
        service.engine.dispose()
        return {"tick": tick, "remind": remind, "claim": claim}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000:100,100:100",
                        help="ACTIVE:DUE pairs, comma-separated (default 10000:100,100:100)")
    parser.add_argument("--ticks", type=int, default=5, help="timed ticks per size (median)")
    parser.add_argument("--database-url", default=None,
                        help="a PostgreSQL database on the server to use (scratch databases "
                             "are created next to it); default: SQLite in a temporary file")
    parser.add_argument("--explain", action="store_true",
                        help="print the plan of the claim statement for each size")
    args = parser.parse_args()
    sizes = [tuple(int(x) for x in pair.split(":")) for pair in args.sizes.split(",")]
    kind = "SQLite" if args.database_url is None else "PostgreSQL"
    print(f"{kind}: one tick of process_due, median of {args.ticks}")
    results = {}
    for games, due in sizes:
        results[(games, due)] = bench_size(args.database_url, games, due, args.ticks,
                                           args.explain)
    if len(sizes) >= 2:
        (big, small) = (sizes[0], sizes[1])
        for key, label in (("tick", "timeout tick"), ("claim", "claims"),
                           ("remind", "reminder tick")):
            ratio = results[big][key] / results[small][key]
            print(f"  {label}: {big[0]}:{big[1]} / {small[0]}:{small[1]} = {ratio:.2f}")


if __name__ == "__main__":
    main()
