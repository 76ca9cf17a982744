"""HTTP API benchmark: complete games through the JSON API with concurrent clients.

    python3 bench/api.py [--backends postgres,sqlite] [--games 20] [--clients 4]
                         [--workers 2] [--threads 4] [--seconds 40] [--instances 1]
    python3 bench/api.py --url http://127.0.0.1:8000 [--url http://127.0.0.1:8001] ...

For each backend (PostgreSQL in a fresh scratch database, then the embedded SQLite mode in a
temporary file) the database is migrated, gunicorn is started on 127.0.0.1 and concurrent
clients create and play whole three-seat games: read the state, list the options of the seat
to act, submit one of them at random with ``expected_seq``. It prints moves/s, the p50/p99
latency of ``POST /moves``, 409 answers and errors, then the machine's raw rate of single-row
INSERT + COMMIT on the same database over one connection, and the ratio of the two. Then the
same clients send nothing but ``POST /moves`` (``--posts-only-games`` games whose moves were
worked out beforehand, bench/posts_only.py) and it prints ``POST /moves alone: N/s = R of the
ceiling``, the ceiling being ``bench/ceiling_app.py`` (one INSERT + COMMIT per request on the
same gunicorn), with the SQL statements per move counted in-process.

With ``--instances N`` (PostgreSQL only) N gunicorn instances run on one database and the
clients spread their requests over them; ``--url`` (repeatable) plays against servers that are
already running instead. With several base URLs a request that cannot reach one instance is
sent again to another (see :class:`Backends`); the requests that set a game up (create,
accept, start) carry an ``Idempotency-Key``, so that one whose answer was lost is sent again
and answered with the first answer instead of being done twice. ``deploy/scaleout.py`` imports
this module to drive its multi-process deployment (``run_clients`` with several base URLs).

Prints figures; it asserts nothing (the tests check behaviour, this measures speed).
"""

from __future__ import annotations

import argparse
import itertools
import logging
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
import uuid
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from statistics import mean
from typing import Any, NamedTuple

import psycopg
import requests
import urllib3
from psycopg.conninfo import make_conninfo
from sqlalchemy.engine import make_url

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.core.migrate import upgrade
from app.games.titanrace.engine import BUILT_IN
from bench import floor_tables, posts_only

ROOT = Path(__file__).resolve().parent.parent
SEATS = 3
PAYLOAD = "x" * 64  # about the size of a move row's hash


@dataclass(frozen=True)
class Applied:
    """A move the server said it applied (``already``: it said so for a repeated request)."""

    game: str
    expected_seq: int
    seat: int
    input: str
    already: bool = False


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
    # what a run over several instances needs to check afterwards (deploy/scaleout.py)
    already_applied: int = 0
    failovers: Counter[str] = field(default_factory=Counter)
    """Requests sent again to another instance, by what went wrong."""
    lost: Counter[str] = field(default_factory=Counter)
    """Set-up requests given up (their Idempotency-Key stayed busy, see
    :meth:`Backends.keyed`): the client set that game up again."""
    replayed: Counter[str] = field(default_factory=Counter)
    """Set-up requests sent again and answered with their first answer (Idempotent-Replayed),
    by kind."""
    error_kinds: Counter[str] = field(default_factory=Counter)
    by_base: Counter[str] = field(default_factory=Counter)
    applied: list[Applied] = field(default_factory=list)
    uncertain: list[Applied] = field(default_factory=list)
    """Moves sent whose outcome the client never learnt (every instance failed)."""
    games: dict[str, int] = field(default_factory=dict)
    """Every game started: its uid and the log length the client last saw."""
    abandoned: list[str] = field(default_factory=list)
    # what bench/load.py adds: moves by the way they were made, latencies by kind of request
    moves_by: Counter[str] = field(default_factory=Counter)
    """Moves applied, by channel ("api"; bench/load.py adds "link" and "page")."""
    timings: dict[str, list[float]] = field(default_factory=dict)
    """Milliseconds per kind of request that has no list of its own above."""

    def time(self, kind: str, ms: float) -> None:
        self.timings.setdefault(kind, []).append(ms)

    def error(self, what: str, kind: str = "error") -> None:
        self.errors += 1
        self.error_kinds[kind] += 1
        if len(self.error_samples) < 5:
            self.error_samples.append(what[:300])

    def merge(self, other: Stats) -> None:
        for name in ("games_started", "games_finished", "moves", "conflicts", "errors",
                     "already_applied"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.error_samples.extend(other.error_samples[: max(0, 5 - len(self.error_samples))])
        self.post_ms += other.post_ms
        self.state_ms += other.state_ms
        self.options_ms += other.options_ms
        for name in ("failovers", "lost", "replayed", "error_kinds", "by_base", "moves_by"):
            getattr(self, name).update(getattr(other, name))
        for kind, values in other.timings.items():
            self.timings.setdefault(kind, []).extend(values)
        self.applied += other.applied
        self.uncertain += other.uncertain
        self.games.update(other.games)
        self.abandoned += other.abandoned


class Progress:
    """Moves and finished games so far, over every client (read by a watcher thread)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.moves = 0
        self.finished = 0

    def move(self) -> None:
        with self._lock:
            self.moves += 1

    def game_over(self) -> None:
        with self._lock:
            self.finished += 1


class ClientError(Exception):
    """An unexpected answer: the game is given up and the error counted."""


class AnswerLost(ClientError):
    """A request that must not be repeated blindly (it creates something, and carries no
    Idempotency-Key) reached an instance that failed before answering: whether it took effect
    is unknown. Or a keyed one whose first try stayed "still being processed" (409) for the
    whole patience: its instance died in the middle, and the server frees the key only after
    its lease."""


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
    """The same on SQLite, with app/core/db.py's pragmas and its BEGIN IMMEDIATE."""
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
def gunicorn(database_url: str, workers: int, threads: int, snapshot_every: int | None,
             *, secret: str | None = None, wsgi: str = "app.wsgi:app",
             admin_token: str | None = None) -> Iterator[str]:
    """Run gunicorn on 127.0.0.1 until the block ends (also on Ctrl-C or an error); yields the
    base URL once the server answers. Instances of one server share ``secret``; with
    ``admin_token`` the admin API is open to that bearer token."""
    port = free_port()
    env = dict(os.environ)
    env.update(
        TITANPOST_DATABASE_URL=database_url,
        TITANPOST_ENV="production",
        TITANPOST_SECRET_KEY=secret or secrets.token_hex(32),
        TITANPOST_BASE_URL=f"http://127.0.0.1:{port}",
        PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")])),
    )
    if snapshot_every is not None:
        env["TITANPOST_SNAPSHOT_EVERY"] = str(snapshot_every)
    if admin_token is not None:
        env["TITANPOST_ADMIN_TOKEN"] = admin_token
    command = [
        sys.executable, "-m", "gunicorn",
        "-w", str(workers), "-k", "gthread", "--threads", str(threads),
        "-b", f"127.0.0.1:{port}", "--log-level", "warning", wsgi,
    ]
    with tempfile.TemporaryFile(mode="w+") as log:
        proc = subprocess.Popen(command, cwd=ROOT, env=env, stdout=log, stderr=log,
                                start_new_session=True)
        try:
            base = f"http://127.0.0.1:{port}"
            _wait_until_up(proc, base, log)
            SERVERS[base] = proc.pid
            yield base
        finally:
            SERVERS.pop(f"http://127.0.0.1:{port}", None)
            _stop(proc)


SERVERS: dict[str, int] = {}
"""The process group (gunicorn's master) of each running server, by its base URL."""


def server_cpu(base: str) -> float:
    """CPU seconds used so far by the processes of the server at ``base`` (gunicorn's master
    and workers: its process group), read from /proc (0.0 where there is none)."""
    group, total = SERVERS.get(base), 0.0
    ticks = os.sysconf("SC_CLK_TCK")
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if group is not None and int(fields[2]) == group:  # (pgrp; utime, stime follow)
            total += (int(fields[11]) + int(fields[12])) / ticks
    return total


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


RETRY_STATUS = frozenset({502, 503, 504})
"""Answers of a proxy or of an instance going down: the request is sent to another one."""


def _chain(exc: BaseException) -> list[BaseException]:
    """``exc`` and what it wraps, outermost first (requests -> urllib3 -> the socket error)."""
    chain = [exc]
    while len(chain) < 10:
        seen = chain[-1]
        reason = getattr(seen, "reason", None)
        inner = reason if isinstance(reason, BaseException) else next(
            (arg for arg in seen.args if isinstance(arg, BaseException)), seen.__cause__)
        if inner is None or any(inner is known for known in chain):
            break
        chain.append(inner)
    return chain


def _not_sent(exc: BaseException) -> bool:
    """True when the request surely never reached a server (the connection was refused or
    could not be made), so that even a request that creates something may be sent again."""
    return any(isinstance(link, requests.ConnectTimeout | urllib3.exceptions.NewConnectionError
                          | ConnectionRefusedError) for link in _chain(exc))


class Backends:
    """The base URLs of one server's instances (one or several).

    Requests go round-robin over the instances. With one base URL a failed request is an error,
    as it always was here. With several (``failover``), a request that cannot reach an instance
    (refused, reset, timed out, or a 502/503/504) marks that instance down for ``down_seconds``
    and is sent to the next one, for up to ``patience`` seconds. Reads and moves are safe to
    repeat: a move carries ``expected_seq``, so the server answers a repeated one with
    ``already_applied`` (or 409), never with a second move. A request that creates something
    is sent with an ``Idempotency-Key`` (:meth:`keyed`), which makes it repeatable too: the
    server answers a repeat with the first answer. Without a key (``repeatable=False``) it is
    repeated only when it surely never reached the failed instance; otherwise
    :class:`AnswerLost` is raised.
    """

    def __init__(self, urls: str | Sequence[str], *, failover: bool | None = None,
                 down_seconds: float = 1.0, patience: float = 30.0,
                 timeout: float = 30.0) -> None:
        self.urls = [urls] if isinstance(urls, str) else list(urls)
        if not self.urls:
            raise ValueError("no base URL")
        self.urls = [url.rstrip("/") for url in self.urls]
        self.failover = len(self.urls) > 1 if failover is None else failover
        self.down_seconds = down_seconds
        self.patience = patience
        self.timeout = timeout
        self._turn = itertools.count()
        self._down: dict[str, float] = {}
        self._lock = threading.Lock()
        self._flying: dict[int, tuple[str, str, float, str, Any]] = {}
        self._ids = itertools.count()

    def in_flight(self, url: str, what: str = "POST moves") -> list[tuple[float, str, Any]]:
        """The requests of kind ``what`` sent to ``url`` that wait for their answer: (seconds
        waited, path, JSON body) of each (requests over several instances only)."""
        now = time.monotonic()
        with self._lock:
            return [(now - start, path, body)
                    for base, kind, start, path, body in self._flying.values()
                    if base == url.rstrip("/") and kind == what]

    @classmethod
    def of(cls, base: str | Sequence[str] | Backends) -> Backends:
        return base if isinstance(base, Backends) else cls(base)

    def _order(self) -> list[str]:
        start = next(self._turn) % len(self.urls)
        ordered = self.urls[start:] + self.urls[:start]
        now = time.monotonic()
        with self._lock:
            up = [url for url in ordered if self._down.get(url, 0.0) <= now]
        return up + [url for url in ordered if url not in up]

    def _mark_down(self, url: str) -> None:
        with self._lock:
            self._down[url] = time.monotonic() + self.down_seconds

    def request(self, http: requests.Session, method: str, path: str, stats: Stats, *,
                repeatable: bool = True, **kwargs: Any) -> requests.Response:
        if not self.failover:
            url = self.urls[0]
            stats.by_base[url] += 1
            return http.request(method, url + path, **kwargs)
        kwargs.setdefault("timeout", self.timeout)
        give_up = time.monotonic() + self.patience
        while True:
            last: requests.RequestException | None = None
            for url in self._order():
                ticket = next(self._ids)
                with self._lock:
                    self._flying[ticket] = (url, _what(method, path), time.monotonic(), path,
                                            kwargs.get("json"))
                try:
                    response = http.request(method, url + path, **kwargs)
                except requests.RequestException as exc:
                    self._mark_down(url)
                    unsent = _not_sent(exc)
                    stats.failovers[f"{'not sent' if unsent else 'answer lost'} "
                                    f"({_what(method, path)}): {_root_name(exc)}"] += 1
                    if not unsent and not repeatable:
                        raise AnswerLost(f"{method} {path} on {url}: {exc}") from exc
                    last = exc
                    continue
                finally:
                    with self._lock:
                        del self._flying[ticket]
                if response.status_code in RETRY_STATUS:
                    self._mark_down(url)
                    stats.failovers[f"HTTP {response.status_code} ({_what(method, path)})"] += 1
                    if not repeatable:
                        raise AnswerLost(f"{method} {path} on {url}: {response.status_code}")
                    continue
                stats.by_base[url] += 1
                return response
            if time.monotonic() >= give_up:
                raise last or requests.ConnectionError(f"{method} {path}: no instance answers")
            time.sleep(0.2)


    def keyed(self, http: requests.Session, path: str, stats: Stats, body: dict[str, Any],
              headers: dict[str, str] | None = None) -> requests.Response:
        """POST ``body`` with a new ``Idempotency-Key``, sent again with the same key whatever
        becomes of the answer. A 409 saying the first try is still being processed is waited
        out for up to ``patience`` seconds, then :class:`AnswerLost` is raised."""
        sent = {IDEMPOTENCY_KEY: str(uuid.uuid4()), **(headers or {})}
        give_up = time.monotonic() + self.patience
        while True:
            answer = self.request(http, "POST", path, stats, json=body, headers=sent)
            if answer.headers.get(REPLAYED) == "true":
                stats.replayed[_what("POST", path)] += 1
            if not _key_busy(answer):
                return answer
            if time.monotonic() >= give_up:
                raise AnswerLost(f"POST {path}: its first try is still being processed")
            time.sleep(0.2)


IDEMPOTENCY_KEY = "Idempotency-Key"
REPLAYED = "Idempotent-Replayed"


def _key_busy(answer: requests.Response) -> bool:
    """A 409 for a key whose first request is still being processed (not a refusal of the
    request itself)."""
    if answer.status_code != 409:
        return False
    with suppress(ValueError):
        return IDEMPOTENCY_KEY in str(answer.json().get("error", ""))
    return False


def _what(method: str, path: str) -> str:
    """A request's kind for the counts: "POST moves", "GET options", "GET game", "GET link"
    (a mail's signed link, ``/l/<token>``)..."""
    if path.startswith("/l/"):
        return f"{method} link"
    last = path.rstrip("/").rsplit("/", 1)[-1]
    return f"{method} {'game' if len(last) == 32 else last}"


def _root_name(exc: BaseException) -> str:
    """The name of the innermost cause (ConnectionRefusedError, RemoteDisconnected...)."""
    return type(_chain(exc)[-1]).__name__


def _json(response: requests.Response, *expected: int) -> dict[str, Any]:
    if response.status_code not in expected:
        raise ClientError(f"{response.request.method} {response.request.path_url} -> "
                          f"{response.status_code} {response.text[:200]}")
    body: dict[str, Any] = response.json()
    return body


def new_game(http: requests.Session, base: str | Sequence[str] | Backends, rnd: random.Random,
             number: int, stats: Stats | None = None,
             settings: dict[str, Any] | None = None) -> tuple[str, list[str]]:
    """Create a three-seat game, accept every invitation and start; (uid, seat tokens).

    ``settings`` are the game's settings (its clock; the server's defaults when None). Each
    of the three requests carries an ``Idempotency-Key`` (:meth:`Backends.keyed`): over
    several instances, one whose answer was lost is sent again and answered with the first
    answer (the same game, the same seat token), never done twice. Only when a key stays
    busy (its instance died mid-request) is that game left behind, abandoned when possible,
    and another one set up.
    """
    backends = Backends.of(base)
    stats = stats if stats is not None else Stats()
    request: dict[str, Any] = {
        "seats": [{"email": f"p{i}.{number}@bench.example"} for i in range(SEATS)],
        "circuits": [BUILT_IN[number % len(BUILT_IN)]],
    }
    if settings is not None:
        request["settings"] = settings
    for _attempt in range(5):
        try:
            created = _json(backends.keyed(http, "/api/games", stats, request), 201)
        except AnswerLost:
            stats.lost["create game"] += 1
            continue
        uid = created["game"]
        creator = {"X-Creator-Token": created["creator_token"]}
        tokens = [""] * SEATS
        try:
            for invitation in created["invitations"]:
                accepted = _json(backends.keyed(http, "/api/invitations/accept", stats,
                                                {"invite_token": invitation["invite_token"]}),
                                 201)
                tokens[accepted["position"]] = accepted["api_token"]
            _json(backends.keyed(http, f"/api/games/{uid}/start", stats, {}, creator), 200)
        except AnswerLost:
            stats.lost["accept invitation or start"] += 1
            with suppress(requests.RequestException):
                backends.request(http, "POST", f"/api/games/{uid}/abandon", stats,
                                 headers=creator)
            stats.abandoned.append(uid)
            continue
        return uid, tokens
    raise ClientError("five games in a row lost while being set up")


def play(http: requests.Session, base: str | Sequence[str] | Backends, uid: str,
         tokens: list[str], rnd: random.Random, stats: Stats, deadline: float,
         stop: threading.Event, progress: Progress | None = None) -> bool:
    """Play the game to its end (True) or until the deadline (False).

    Like a real client, it reads the next decision from each POST's answer (status, who acts,
    and that seat's options when the same seat acts again) and asks for the options only when
    another seat is to act. Every applied move is kept in ``stats.applied``.
    """
    backends = Backends.of(base)
    bearer = [{"Authorization": f"Bearer {token}"} for token in tokens]
    body = read_state(http, backends, uid, bearer[0], stats)
    while not stop.is_set() and time.monotonic() < deadline:
        if body["game"]["status"] != "active":
            return True
        body = api_move(http, backends, uid, body["game"]["to_act"][0], bearer, body, rnd,
                        stats, progress)
    return False


def read_state(http: requests.Session, backends: Backends, uid: str,
               headers: dict[str, str] | None, stats: Stats) -> dict[str, Any]:
    """``GET /api/games/<uid>`` (a seat's view with its bearer header, else a spectator's)."""
    t0 = time.perf_counter()
    body = _json(backends.request(http, "GET", f"/api/games/{uid}", stats,
                                  headers=headers or {}), 200)
    stats.state_ms.append((time.perf_counter() - t0) * 1000)
    stats.games[uid] = body["seq"]
    return body


def api_move(http: requests.Session, backends: Backends, uid: str, seat: int,
             bearer: list[dict[str, str]], body: dict[str, Any], rnd: random.Random,
             stats: Stats, progress: Progress | None = None) -> dict[str, Any]:
    """Seat ``seat`` answers its decision with a random legal option through the API; the
    game's body afterwards (the POST's answer, or the current state after a 409).

    Like a real client, it takes the options from ``body`` when they are the same seat's (the
    previous POST's answer) and asks for them otherwise."""
    game_path = f"/api/games/{uid}"
    pending = (body.get("view") or {}).get("pending") or {}
    if body.get("you") == seat and pending.get("options"):
        seq, choices = body["seq"], pending["options"]
    else:
        t0 = time.perf_counter()
        options = _json(backends.request(http, "GET", f"{game_path}/options", stats,
                                         headers=bearer[seat]), 200)
        stats.options_ms.append((time.perf_counter() - t0) * 1000)
        seq, choices = options["seq"], options["options"]
    move = {"expected_seq": seq, "input": rnd.choice(choices)}
    t0 = time.perf_counter()
    try:
        answer = backends.request(http, "POST", f"{game_path}/moves", stats, json=move,
                                  headers=bearer[seat])
    except requests.RequestException:
        stats.uncertain.append(Applied(uid, seq, seat, move["input"]))
        raise
    elapsed = (time.perf_counter() - t0) * 1000
    if answer.status_code == 409:
        stats.conflicts += 1
        body = answer.json()
        stats.games[uid] = body.get("seq", stats.games[uid])
        return body
    body = _json(answer, 200)
    already = bool(body.get("already_applied"))
    stats.applied.append(Applied(uid, seq, seat, move["input"], already))
    stats.games[uid] = body["seq"]
    stats.already_applied += already
    stats.post_ms.append(elapsed)
    stats.moves += 1
    stats.moves_by["api"] += 1
    if progress is not None:
        progress.move()
    return body


def client(base: str | Sequence[str] | Backends, seed: int, claim: Any, stats: Stats,
           deadline: float, stop: threading.Event, progress: Progress | None = None) -> None:
    backends = Backends.of(base)
    rnd = random.Random(seed)
    with requests.Session() as http:
        while not stop.is_set() and time.monotonic() < deadline:
            number = claim()
            if number is None:
                return
            try:
                uid, tokens = new_game(http, backends, rnd, number, stats)
                stats.games_started += 1
                if play(http, backends, uid, tokens, rnd, stats, deadline, stop, progress):
                    stats.games_finished += 1
                    if progress is not None:
                        progress.game_over()
            except (ClientError, requests.RequestException, ValueError, KeyError) as exc:
                stats.error(f"{type(exc).__name__}: {exc}", type(exc).__name__)


def run_clients(base: str | Sequence[str] | Backends, games: int, clients: int, seconds: float,
                seed: int, *, progress: Progress | None = None,
                stop: threading.Event | None = None) -> tuple[Stats, float, float]:
    """Play ``games`` games with ``clients`` threads, for at most ``seconds`` (or until ``stop``
    is set); returns the merged stats, the wall time and this process's CPU time. ``base`` may
    name several instances of one server: requests are spread over them (:class:`Backends`)."""
    backends = Backends.of(base)
    lock = threading.Lock()
    handed = 0

    def claim() -> int | None:
        nonlocal handed
        with lock:
            if handed >= games:
                return None
            handed += 1
            return handed - 1

    stop = stop or threading.Event()
    per_client = [Stats() for _ in range(clients)]
    cpu0 = time.process_time()
    start = time.perf_counter()
    deadline = time.monotonic() + seconds
    threads = [
        threading.Thread(target=client, args=(backends, seed + i, claim, per_client[i], deadline,
                                              stop, progress),
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


class Ceiling(NamedTuple):
    """What :func:`ceiling` measured: requests, seconds, and the server's CPU seconds."""

    writes: int
    seconds: float
    server_cpu: float = 0.0


def ceiling(database_url: str, raw_target: str, kind: str, workers: int, threads: int,
            clients: int, seconds: float,
            floor_seconds: float = 0.0) -> tuple[Ceiling, Ceiling | None]:
    """The same gunicorn and as many clients, on ``bench/ceiling_app.py``: every request
    inserts one row and commits, and does nothing else (the ceiling); then, for
    ``floor_seconds``, its ``POST /floor``: a move's statements and answer, nothing else."""
    schema = [floor_tables.CEILING_SCHEMA, *floor_tables.FLOOR_SCHEMA.values()]
    serial = "bigserial" if kind == "postgres" else "INTEGER"
    games = [floor_tables.floor_rows(game) for game in range(1, floor_tables.FLOOR_GAMES + 1)]
    style = "%({})s" if kind == "postgres" else ":{}"
    with (psycopg.connect(raw_target) if kind == "postgres"
          else sqlite3.connect(raw_target)) as db:
        for create in schema:
            db.execute(create.format(serial=serial))
        for row, seats in games:
            _insert_rows(db, style, "bench_floor_games", [row])
            _insert_rows(db, style, "bench_floor_seats", seats)
    with gunicorn(database_url, workers, threads, None, wsgi="bench.ceiling_app:app") as base:
        top = _hammer(base, lambda _rnd: "/write", clients, seconds)
        if floor_seconds <= 0:
            return top, None
        return top, _hammer(
            base, lambda rnd: f"/floor/{rnd.randint(1, floor_tables.FLOOR_GAMES)}", clients,
            floor_seconds)


def _insert_rows(db: Any, style: str, table: str, rows: list[dict[str, Any]]) -> None:
    names = list(rows[0])
    values = ", ".join(style.format(name) for name in names)
    db.cursor().executemany(f"INSERT INTO {table} ({', '.join(names)}) VALUES ({values})", rows)


def _hammer(base: str, path: Callable[[random.Random], str], clients: int,
            seconds: float) -> Ceiling:
    """``clients`` threads POSTing to ``path`` (drawn per request) for ``seconds``."""
    stop = time.monotonic() + seconds
    done = [0] * clients

    def post(index: int) -> None:
        rnd = random.Random(index)
        with requests.Session() as http:
            while time.monotonic() < stop:
                http.post(f"{base}{path(rnd)}", timeout=30).raise_for_status()
                done[index] += 1

    started, cpu = time.perf_counter(), server_cpu(base)
    threads_ = [threading.Thread(target=post, args=(i,)) for i in range(clients)]
    for thread in threads_:
        thread.start()
    for thread in threads_:
        thread.join()
    return Ceiling(sum(done), time.perf_counter() - started, server_cpu(base) - cpu)


@dataclass
class StatementCounts:
    """SQL statements the API ran per request, counted in-process (Flask's test client on the
    same database and settings as the server: the same code path, without the HTTP)."""

    moves: int = 0
    per_move: list[int] = field(default_factory=list)
    per_options: list[int] = field(default_factory=list)
    in_move_transaction: list[int] = field(default_factory=list)


def statement_counts(url: str, moves: int = 200, seed: int = 1) -> StatementCounts:
    """Play ``moves`` moves through the API in-process and count the SQL statements of each
    ``POST /moves`` (all of them, and those inside the move's write transaction: from its
    BEGIN to its COMMIT) and of each ``GET /options``."""
    from sqlalchemy import event

    from app import create_app
    from app.core.config import Settings

    settings = Settings.from_env({"TITANPOST_DATABASE_URL": url, "TITANPOST_ENV": "production",
                                  "TITANPOST_SECRET_KEY": secrets.token_hex(32)})
    flask_app = create_app(settings)
    engine = flask_app.extensions["titanpost.service"].engine
    logging.getLogger("titanpost.access").disabled = True  # one line per request otherwise
    seen: list[str] = []

    def count(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        if not statement.lstrip().upper().startswith("BEGIN"):  # SQLite's own, below
            seen.append(statement)

    def begin(_conn: Any) -> None:
        seen.append(BEGIN_MARK)

    event.listen(engine, "before_cursor_execute", count)
    event.listen(engine, "begin", begin)
    counts = StatementCounts()
    rnd = random.Random(seed)
    client = flask_app.test_client()
    try:
        number = 0
        while counts.moves < moves:
            number += 1
            uid, tokens = _test_client_game(client, rnd, number)
            counts.moves += _count_game(client, uid, tokens, rnd, seen, counts,
                                        moves - counts.moves)
    finally:
        event.remove(engine, "before_cursor_execute", count)
        event.remove(engine, "begin", begin)
        engine.dispose()
    return counts


def _test_client_game(client: Any, rnd: random.Random, number: int) -> tuple[str, list[str]]:
    created = client.post("/api/games", json={
        "seats": [{"email": f"s{i}.{number}@bench.example"} for i in range(SEATS)],
        "circuits": [BUILT_IN[number % len(BUILT_IN)]]}).json
    tokens = [""] * SEATS
    for invitation in created["invitations"]:
        accepted = client.post("/api/invitations/accept",
                               json={"invite_token": invitation["invite_token"]}).json
        tokens[accepted["position"]] = accepted["api_token"]
    client.post(f"/api/games/{created['game']}/start", json={},
                headers={"X-Creator-Token": created["creator_token"]})
    return str(created["game"]), tokens


def _count_game(client: Any, uid: str, tokens: list[str], rnd: random.Random, seen: list[str],
                counts: StatementCounts, most: int) -> int:
    body = client.get(f"/api/games/{uid}").json
    played = 0
    while body["game"]["status"] == "active" and played < most:
        seat = body["game"]["to_act"][0]
        bearer = {"Authorization": f"Bearer {tokens[seat]}"}
        seen.clear()
        options = client.get(f"/api/games/{uid}/options", headers=bearer).json
        counts.per_options.append(_statements(seen))
        seen.clear()
        answer = client.post(f"/api/games/{uid}/moves", headers=bearer, json={
            "expected_seq": options["seq"], "input": rnd.choice(options["options"])})
        if answer.status_code != 200:
            raise ClientError(f"in-process move refused: {answer.status_code} {answer.text}")
        counts.per_move.append(_statements(seen))
        counts.in_move_transaction.append(_in_transaction(seen))
        body = answer.json
        played += 1
    return played


BEGIN_MARK = "<begin>"


def _statements(seen: list[str]) -> int:
    return sum(1 for statement in seen if statement != BEGIN_MARK)


def _in_transaction(seen: list[str]) -> int:
    """Statements in the request's last transaction: the move's (a move's token is checked in
    it; a move sent with an Idempotency-Key has its token looked up in a transaction of its
    own before)."""
    last = len(seen) - 1 - seen[::-1].index(BEGIN_MARK) if BEGIN_MARK in seen else -1
    return len(seen) - last - 1


def _spread(counts: list[int]) -> str:
    """How many requests ran each number of statements: "5 x180, 6 x19, 9 x1"."""
    return ", ".join(f"{statements} x{requests}"
                     for statements, requests in sorted(Counter(counts).items()))


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def bench_backend(kind: str, args: argparse.Namespace) -> None:
    workers = args.workers if kind == "postgres" else 1  # the embedded mode is one process
    instances = args.instances if kind == "postgres" else 1  # SQLite: one process in all
    database = postgres_database(args.pg) if kind == "postgres" else sqlite_database()
    with database as (url, raw_target):
        upgrade(url)
        server_cpu0 = children_cpu()
        secret = secrets.token_hex(32)
        with ExitStack() as servers:
            bases = [servers.enter_context(gunicorn(url, workers, args.threads,
                                                    args.snapshot_every, secret=secret))
                     for _ in range(instances)]
            stats, wall, client_cpu = run_clients(
                bases, args.games, args.clients, args.seconds, args.seed
            )
        server_cpu = children_cpu() - server_cpu0
        count = max(stats.moves, 100)
        if kind == "postgres":
            rows, raw_time = raw_commits_postgres(raw_target, count, max(wall, 1.0))
        else:
            rows, raw_time = raw_commits_sqlite(raw_target, count, max(wall, 1.0))

        posts = (posts_alone(url, workers, args) if args.posts_only_games > 0 else None)
        counted = statement_counts(url, seed=args.seed)
        floor, least = (ceiling(url, raw_target, kind, workers, args.threads, args.clients,
                                args.ceiling_seconds, args.floor_seconds)
                        if args.ceiling_seconds > 0 else (None, None))

    moves_rate = stats.moves / wall if wall else 0.0
    raw_rate = rows / raw_time if raw_time else 0.0
    several = f"{instances} instances x " if instances > 1 else ""
    print(f"{kind}: {several}gunicorn {workers} worker(s) x {args.threads} threads (gthread), "
          f"{args.clients} clients, {os.cpu_count()} CPUs")
    print_play_figures(stats, wall)
    print(f"  CPU:               clients {client_cpu:.1f} s, server {server_cpu:.1f} s "
          f"(with start-up) of {wall * (os.cpu_count() or 1):.1f} s available")
    print(f"  raw INSERT+COMMIT: {rows:,} rows in {raw_time:.2f} s = {raw_rate:,.0f} commits/s "
          f"(one connection)")
    print(f"  SQL per move:      POST /moves {mean(counted.per_move):.1f} statements "
          f"({mean(counted.in_move_transaction):.1f} in its transaction; moves by statements: "
          f"{_spread(counted.per_move)}), GET options {mean(counted.per_options):.1f}; "
          f"in-process over {counted.moves} moves")
    if floor is not None:
        writes, took, cpu = floor
        print(f"  ceiling:           {writes / took:,.0f} requests/s = "
              f"{writes / took / raw_rate if raw_rate else 0.0:.3f} of the raw commit rate "
              f"(bench/ceiling_app.py: the same server and clients, each request one INSERT + "
              f"COMMIT and nothing else; server CPU {_per_request(cpu, writes)} a request, "
              f"{cpu / took if took else 0.0:.2f} CPUs busy); the moves above reach "
              f"{moves_rate * took / writes if writes else 0.0:.2f} of it")
    if floor is not None and least is not None and least.writes:
        print(f"  a move's floor:    {least.writes / least.seconds:,.0f} requests/s = "
              f"{least.writes / least.seconds / (floor.writes / floor.seconds):.2f} of the "
              f"ceiling (bench/ceiling_app.py /floor: a move's five statements and answer, "
              f"nothing else; server CPU {_per_request(least.server_cpu, least.writes)} a "
              f"request, {least.server_cpu / least.seconds:.2f} CPUs busy)")
    if posts is not None:
        print_posts_alone(posts, floor)
    ratio = moves_rate / raw_rate if raw_rate else 0.0
    aim = 1 / 3 if kind == "postgres" else 1 / 10
    print(f"  ratio:             {ratio:.3f} (moves/s / raw commits/s; the aim is {aim:.3f} "
          f"or more: {'met' if ratio >= aim else 'NOT met'})")
    sys.stdout.flush()


def posts_alone(url: str, workers: int, args: argparse.Namespace) -> posts_only.Figures:
    """The same server and clients sending nothing but ``POST /moves`` (bench/posts_only.py):
    games set up and their moves worked out first, then only the moves timed."""
    admin = secrets.token_urlsafe(24)
    with gunicorn(url, workers, args.threads, args.snapshot_every, admin_token=admin) as base:
        scripts = posts_only.prepare(base, admin, args.posts_only_games, args.seed + 7,
                                     new_game)
        before = server_cpu(base)
        figures = posts_only.run(base, scripts, args.clients, args.seconds)
        figures.server_cpu = server_cpu(base) - before
        return figures


def print_posts_alone(posts: posts_only.Figures, floor: Ceiling | None) -> None:
    rate = posts.moves / posts.wall if posts.wall else 0.0
    of_ceiling = ""
    if floor is not None and floor[0]:
        of_ceiling = f" = {rate / (floor[0] / floor[1]):.2f} of the ceiling"
    print(f"  POST /moves alone: {rate:,.1f}/s{of_ceiling} ({posts.moves:,} moves in "
          f"{posts.wall:.1f} s; p50 {percentile(posts.latencies_ms, 50):.1f} ms, "
          f"p99 {percentile(posts.latencies_ms, 99):.1f} ms; refused {posts.refused}; "
          f"server CPU {_per_request(posts.server_cpu, posts.moves)} a move, "
          f"{posts.server_cpu / posts.wall if posts.wall else 0.0:.2f} CPUs busy)")
    for sample in posts.samples:
        print(f"    {sample}")


def _per_request(cpu: float, requests: int) -> str:
    return f"{cpu * 1000 / requests:.2f} ms" if requests else "-"


def print_play_figures(stats: Stats, wall: float) -> None:
    """The client's figures of one run (games, moves/s, latencies, retries, errors)."""
    moves_rate = stats.moves / wall if wall else 0.0
    unfinished = stats.games_started - stats.games_finished
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
    if len(stats.by_base) > 1 or stats.failovers or stats.lost:
        spread = ", ".join(f"{url} {count:,}" for url, count in sorted(stats.by_base.items()))
        print(f"  requests:          {spread}")
        failovers = ", ".join(f"{kind} {n}" for kind, n in stats.failovers.most_common())
        print(f"  sent again:        {sum(stats.failovers.values())} ({failovers or 'none'}); "
              f"{stats.already_applied} moves answered as already applied")
        if stats.replayed:
            print("  answers replayed:  " + ", ".join(
                f"{what} {n}" for what, n in stats.replayed.most_common())
                + " (sent again with their Idempotency-Key)")
        if stats.lost:
            print("  answers lost:      " + ", ".join(
                f"{what} {n}" for what, n in stats.lost.most_common()) + " (game set up again)")
    print(f"  errors:            {stats.errors}")
    for sample in stats.error_samples:
        print(f"    {sample}")


def bench_urls(args: argparse.Namespace) -> None:
    """Play against servers that are already running (``--url``, one or several instances)."""
    stats, wall, client_cpu = run_clients(args.url, args.games, args.clients, args.seconds,
                                          args.seed)
    print(f"{', '.join(args.url)}: {args.clients} clients, {os.cpu_count()} CPUs here")
    print_play_figures(stats, wall)
    print(f"  CPU:               clients {client_cpu:.1f} s")
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
    parser.add_argument("--instances", type=int, default=1,
                        help="gunicorn instances on the PostgreSQL database, each on its own "
                             "port; the clients spread their requests over them")
    parser.add_argument("--url", action="append", default=[], metavar="BASE_URL",
                        help="play against this running server instead of starting one "
                             "(repeat for several instances of one server)")
    parser.add_argument("--ceiling-seconds", type=float, default=10,
                        help="how long to run bench/ceiling_app.py (0: not at all)")
    parser.add_argument("--floor-seconds", type=float, default=10,
                        help="how long to run bench/ceiling_app.py's move floor (0: not at all)")
    parser.add_argument("--posts-only-games", type=int, default=12,
                        help="games whose moves are then sent as POSTs alone, nothing read "
                             "between them (bench/posts_only.py; 0: not at all)")
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
    if args.instances < 1:
        parser.error("--instances must be 1 or more")
    try:
        if args.url:
            bench_urls(args)
            return
        for kind in backends:
            bench_backend(kind, args)
    except KeyboardInterrupt:
        print("interrupted: gunicorn stopped, scratch database removed", file=sys.stderr)
        sys.exit(130)


if __name__ == "__main__":
    main()
