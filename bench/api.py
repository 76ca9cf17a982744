"""HTTP API benchmark: complete games through the JSON API with concurrent clients.

    python3 bench/api.py [--backends postgres,sqlite] [--games 20] [--clients 4]
                         [--workers 2] [--threads 4] [--seconds 40]

For each backend (PostgreSQL in a fresh scratch database, then the embedded SQLite mode in a
temporary file) the database is migrated, gunicorn is started on 127.0.0.1 and concurrent
clients create and play whole three-seat games: read the state, list the options of the seat
to act, submit one of them at random with ``expected_seq``. It prints moves/s, the p50/p99
latency of ``POST /moves``, 409 answers and errors, then the machine's raw rate of single-row
INSERT + COMMIT on the same database over one connection, and the ratio of the two.

Prints figures; it asserts nothing (the tests check behaviour, this measures speed).
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import secrets
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psycopg
import requests
from psycopg.conninfo import make_conninfo
from sqlalchemy.engine import make_url

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.engine import BUILT_IN
from app.migrate import upgrade

ROOT = Path(__file__).resolve().parent.parent
SEATS = 3
PAYLOAD = "x" * 64  # about the size of a move row's hash


@dataclass
class Stats:
    """One client's counts and timings (merged after the run; no locking while playing)."""

    games_started: int = 0
    games_finished: int = 0
    moves: int = 0
    conflicts: int = 0
    errors: int = 0
    error_samples: list[str] = field(default_factory=list)
    post_ms: list[float] = field(default_factory=list)
    state_ms: list[float] = field(default_factory=list)
    options_ms: list[float] = field(default_factory=list)

    def error(self, what: str) -> None:
        self.errors += 1
        if len(self.error_samples) < 5:
            self.error_samples.append(what[:300])

    def merge(self, other: Stats) -> None:
        for name in ("games_started", "games_finished", "moves", "conflicts", "errors"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.error_samples.extend(other.error_samples[: max(0, 5 - len(self.error_samples))])
        self.post_ms += other.post_ms
        self.state_ms += other.state_ms
        self.options_ms += other.options_ms


class ClientError(Exception):
    """An unexpected answer: the game is given up and the error counted."""


def percentile(values: list[float], pct: float) -> float:
    """Nearest-rank percentile (0 for no values)."""
    if not values:
        return 0.0
    ordered = sorted(values)
    rank = max(1, -(-len(ordered) * pct // 100))
    return ordered[int(rank) - 1]


# ---------------------------------------------------------------------- databases


@contextmanager
def postgres_database(admin: str) -> Iterator[tuple[str, str]]:
    """A fresh database ``titanpost_bench_<random>``; yields (SQLAlchemy URL, psycopg conninfo)
    and drops it afterwards."""
    name = f"titanpost_bench_{secrets.token_hex(4)}"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        url = make_url(admin).set(drivername="postgresql+psycopg", database=name)
        yield url.render_as_string(hide_password=False), make_conninfo(admin, dbname=name)
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@contextmanager
def sqlite_database() -> Iterator[tuple[str, str]]:
    """A temporary SQLite file; yields (SQLAlchemy URL, file path)."""
    with tempfile.TemporaryDirectory(prefix="titanpost-bench-") as folder:
        path = str(Path(folder) / "titanpost.db")
        yield f"sqlite:///{path}", path


def raw_commits_postgres(conninfo: str, count: int, seconds: float) -> tuple[int, float]:
    """Single-row INSERT + COMMIT over one connection: (rows, elapsed seconds)."""
    with psycopg.connect(conninfo) as conn:
        conn.execute("CREATE TABLE bench_raw (id bigserial PRIMARY KEY, payload text NOT NULL)")
        conn.commit()
        return _insert_loop(
            lambda: conn.execute("INSERT INTO bench_raw (payload) VALUES (%s)", (PAYLOAD,)),
            conn.commit,
            count,
            seconds,
        )


def raw_commits_sqlite(path: str, count: int, seconds: float) -> tuple[int, float]:
    """The same on SQLite, with app/db.py's pragmas and its BEGIN IMMEDIATE."""
    conn = sqlite3.connect(path, isolation_level=None, timeout=30)
    try:
        for pragma in ("journal_mode=WAL", "synchronous=NORMAL", "foreign_keys=ON",
                       "busy_timeout=30000"):
            conn.execute(f"PRAGMA {pragma}")
        conn.execute("CREATE TABLE bench_raw (id INTEGER PRIMARY KEY, payload TEXT NOT NULL)")

        def insert() -> None:
            conn.execute("BEGIN IMMEDIATE")
            conn.execute("INSERT INTO bench_raw (payload) VALUES (?)", (PAYLOAD,))

        return _insert_loop(insert, lambda: conn.execute("COMMIT"), count, seconds)
    finally:
        conn.close()


def _insert_loop(insert: Any, commit: Any, count: int, seconds: float) -> tuple[int, float]:
    start = time.perf_counter()
    deadline = start + seconds
    done = 0
    while done < count and time.perf_counter() < deadline:
        insert()
        commit()
        done += 1
    return done, time.perf_counter() - start


# ---------------------------------------------------------------------- server


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@contextmanager
def gunicorn(database_url: str, workers: int, threads: int, snapshot_every: int | None
             ) -> Iterator[str]:
    """Run gunicorn on 127.0.0.1 until the block ends (also on Ctrl-C or an error); yields the
    base URL once the server answers."""
    port = free_port()
    env = dict(os.environ)
    env.update(
        TITANPOST_DATABASE_URL=database_url,
        TITANPOST_ENV="production",
        TITANPOST_SECRET_KEY=secrets.token_hex(32),
        TITANPOST_BASE_URL=f"http://127.0.0.1:{port}",
        PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")])),
    )
    if snapshot_every is not None:
        env["TITANPOST_SNAPSHOT_EVERY"] = str(snapshot_every)
    command = [
        sys.executable, "-m", "gunicorn",
        "-w", str(workers), "-k", "gthread", "--threads", str(threads),
        "-b", f"127.0.0.1:{port}", "--log-level", "warning", "app.wsgi:app",
    ]
    with tempfile.TemporaryFile(mode="w+") as log:
        proc = subprocess.Popen(command, cwd=ROOT, env=env, stdout=log, stderr=log,
                                start_new_session=True)
        try:
            base = f"http://127.0.0.1:{port}"
            _wait_until_up(proc, base, log)
            yield base
        finally:
            _stop(proc)


def _wait_until_up(proc: subprocess.Popen[Any], base: str, log: Any, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            log.seek(0)
            raise RuntimeError(f"gunicorn exited with {proc.returncode}:\n{log.read()[-3000:]}")
        try:
            # An unknown game: 404 proves the app is loaded and reaches its database.
            if requests.get(f"{base}/api/games/{'0' * 32}", timeout=2).status_code == 404:
                return
        except requests.RequestException:
            pass
        time.sleep(0.2)
    log.seek(0)
    raise RuntimeError(f"gunicorn did not answer within {timeout:.0f} s:\n{log.read()[-3000:]}")


def _stop(proc: subprocess.Popen[Any]) -> None:
    """SIGTERM (gunicorn stops its workers gracefully), then SIGKILL to its process group."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    else:
        with suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)  # orphaned workers, if any


# ---------------------------------------------------------------------- clients


def _json(response: requests.Response, *expected: int) -> dict[str, Any]:
    if response.status_code not in expected:
        raise ClientError(f"{response.request.method} {response.request.path_url} -> "
                          f"{response.status_code} {response.text[:200]}")
    body: dict[str, Any] = response.json()
    return body


def new_game(http: requests.Session, base: str, rnd: random.Random, number: int
             ) -> tuple[str, list[str]]:
    """Create a three-seat game, accept every invitation and start; (uid, seat tokens)."""
    created = _json(http.post(f"{base}/api/games", json={
        "seats": [{"email": f"p{i}.{number}@bench.example"} for i in range(SEATS)],
        "seed": rnd.randrange(2**31),
        "circuits": [BUILT_IN[number % len(BUILT_IN)]],
    }), 201)
    uid = created["game"]
    tokens = [""] * SEATS
    for invitation in created["invitations"]:
        accepted = _json(http.post(f"{base}/api/invitations/accept",
                                   json={"invite_token": invitation["invite_token"]}), 201)
        tokens[accepted["position"]] = accepted["api_token"]
    _json(http.post(f"{base}/api/games/{uid}/start", json={},
                    headers={"X-Creator-Token": created["creator_token"]}), 200)
    return uid, tokens


def play(http: requests.Session, base: str, uid: str, tokens: list[str], rnd: random.Random,
         stats: Stats, deadline: float, stop: threading.Event) -> bool:
    """Play the game to its end (True) or until the deadline (False).

    Like a real client, it reads the next decision from each POST's answer (status, who acts,
    and that seat's options when the same seat acts again) and asks for the options only when
    another seat is to act.
    """
    bearer = [{"Authorization": f"Bearer {token}"} for token in tokens]
    game_url = f"{base}/api/games/{uid}"
    t0 = time.perf_counter()
    body = _json(http.get(game_url, headers=bearer[0]), 200)
    stats.state_ms.append((time.perf_counter() - t0) * 1000)
    while not stop.is_set() and time.monotonic() < deadline:
        if body["game"]["status"] != "active":
            return True
        seat = body["game"]["to_act"][0]
        pending = (body.get("view") or {}).get("pending") or {}
        if body.get("you") == seat and pending.get("options"):
            seq, choices = body["seq"], pending["options"]
        else:
            t0 = time.perf_counter()
            options = _json(http.get(f"{game_url}/options", headers=bearer[seat]), 200)
            stats.options_ms.append((time.perf_counter() - t0) * 1000)
            seq, choices = options["seq"], options["options"]
        move = {"expected_seq": seq, "input": rnd.choice(choices)}
        t0 = time.perf_counter()
        answer = http.post(f"{game_url}/moves", json=move, headers=bearer[seat])
        elapsed = (time.perf_counter() - t0) * 1000
        if answer.status_code == 409:
            stats.conflicts += 1
            body = answer.json()
            continue
        body = _json(answer, 200)
        stats.post_ms.append(elapsed)
        stats.moves += 1
    return False


def client(base: str, seed: int, claim: Any, stats: Stats, deadline: float,
           stop: threading.Event) -> None:
    rnd = random.Random(seed)
    with requests.Session() as http:
        while not stop.is_set() and time.monotonic() < deadline:
            number = claim()
            if number is None:
                return
            try:
                uid, tokens = new_game(http, base, rnd, number)
                stats.games_started += 1
                if play(http, base, uid, tokens, rnd, stats, deadline, stop):
                    stats.games_finished += 1
            except (ClientError, requests.RequestException, ValueError, KeyError) as exc:
                stats.error(f"{type(exc).__name__}: {exc}")


def run_clients(base: str, games: int, clients: int, seconds: float, seed: int
                ) -> tuple[Stats, float, float]:
    """Play ``games`` games with ``clients`` threads, for at most ``seconds``; returns the merged
    stats, the wall time and this process's CPU time."""
    lock = threading.Lock()
    handed = 0

    def claim() -> int | None:
        nonlocal handed
        with lock:
            if handed >= games:
                return None
            handed += 1
            return handed - 1

    stop = threading.Event()
    per_client = [Stats() for _ in range(clients)]
    cpu0 = time.process_time()
    start = time.perf_counter()
    deadline = time.monotonic() + seconds
    threads = [
        threading.Thread(target=client, args=(base, seed + i, claim, per_client[i], deadline, stop),
                         daemon=True, name=f"client-{i}")
        for i in range(clients)
    ]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            while thread.is_alive():
                thread.join(0.5)
    finally:
        stop.set()
        for thread in threads:
            thread.join(10)
    wall = time.perf_counter() - start
    total = Stats()
    for stats in per_client:
        total.merge(stats)
    return total, wall, time.process_time() - cpu0


# ---------------------------------------------------------------------- driver


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def bench_backend(kind: str, args: argparse.Namespace) -> None:
    workers = args.workers if kind == "postgres" else 1  # the embedded mode is one process
    database = postgres_database(args.pg) if kind == "postgres" else sqlite_database()
    with database as (url, raw_target):
        upgrade(url)
        server_cpu0 = children_cpu()
        with gunicorn(url, workers, args.threads, args.snapshot_every) as base:
            stats, wall, client_cpu = run_clients(
                base, args.games, args.clients, args.seconds, args.seed
            )
        server_cpu = children_cpu() - server_cpu0
        count = max(stats.moves, 100)
        if kind == "postgres":
            rows, raw_time = raw_commits_postgres(raw_target, count, max(wall, 1.0))
        else:
            rows, raw_time = raw_commits_sqlite(raw_target, count, max(wall, 1.0))

    moves_rate = stats.moves / wall if wall else 0.0
    raw_rate = rows / raw_time if raw_time else 0.0
    unfinished = stats.games_started - stats.games_finished
    print(f"{kind}: gunicorn {workers} worker(s) x {args.threads} threads (gthread), "
          f"{args.clients} clients, {os.cpu_count()} CPUs")
    print(f"  games:             {stats.games_finished} finished, {unfinished} cut short; "
          f"{stats.moves:,} moves in {wall:.1f} s")
    print(f"  moves/s:           {moves_rate:,.1f}")
    print(f"  POST /moves:       p50 {percentile(stats.post_ms, 50):.1f} ms, "
          f"p99 {percentile(stats.post_ms, 99):.1f} ms")
    print(f"  GET state:         p50 {percentile(stats.state_ms, 50):.1f} ms, "
          f"p99 {percentile(stats.state_ms, 99):.1f} ms")
    print(f"  GET options:       p50 {percentile(stats.options_ms, 50):.1f} ms, "
          f"p99 {percentile(stats.options_ms, 99):.1f} ms")
    print(f"  409 retries:       {stats.conflicts}")
    print(f"  errors:            {stats.errors}")
    for sample in stats.error_samples:
        print(f"    {sample}")
    print(f"  CPU:               clients {client_cpu:.1f} s, server {server_cpu:.1f} s "
          f"(with start-up) of {wall * (os.cpu_count() or 1):.1f} s available")
    print(f"  raw INSERT+COMMIT: {rows:,} rows in {raw_time:.2f} s = {raw_rate:,.0f} commits/s "
          f"(one connection)")
    ratio = moves_rate / raw_rate if raw_rate else 0.0
    print(f"  ratio:             {ratio:.3f} (moves/s / raw commits/s; the aim is 0.333 or more)")
    sys.stdout.flush()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backends", default="postgres,sqlite",
                        help="comma-separated: postgres, sqlite")
    parser.add_argument("--games", type=int, default=20, help="games per backend")
    parser.add_argument("--clients", type=int, default=4, help="concurrent client threads")
    parser.add_argument("--workers", type=int, default=2,
                        help="gunicorn workers for PostgreSQL (SQLite always uses 1)")
    parser.add_argument("--threads", type=int, default=4, help="gunicorn threads per worker")
    parser.add_argument("--seconds", type=float, default=40,
                        help="stop each backend's games after this long")
    parser.add_argument("--snapshot-every", type=int, default=None,
                        help="TITANPOST_SNAPSHOT_EVERY for the server (default: the app's)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--pg", default="postgresql://postgres@127.0.0.1:5432/postgres",
                        help="PostgreSQL admin database (a scratch database is made beside it)")
    args = parser.parse_args()
    backends = [b.strip() for b in args.backends.split(",") if b.strip()]
    unknown = set(backends) - {"postgres", "sqlite"}
    if unknown:
        parser.error(f"unknown backend(s): {', '.join(sorted(unknown))}")

    def terminate(_signum: int, _frame: Any) -> None:
        raise SystemExit(143)  # unwinds through the finally blocks that stop gunicorn

    signal.signal(signal.SIGTERM, terminate)
    try:
        for kind in backends:
            bench_backend(kind, args)
    except KeyboardInterrupt:
        print("interrupted: gunicorn stopped, scratch database removed", file=sys.stderr)
        sys.exit(130)


if __name__ == "__main__":
    main()
