"""Scale-out on one machine: several gunicorn instances and several workers on one PostgreSQL
database, one instance and one worker killed mid-run, and proof that no move and no mail was
lost or doubled.

    python3 deploy/scaleout.py [--games 40] [--clients 4] [--seconds 60] [--instances 2]
                               [--web-workers 2] [--threads 4] [--workers 2] [--mail-seconds 10]
                               [--kill-web-at 0.3] [--kill-worker-at 0.5] [--no-kill]
                               [--kill-worker-in-smtp] [--wait-leases]
                               [--database-url URL | --pg ADMIN_URL] [--keep-logs]

Everything runs on 127.0.0.1:

1. a fresh PostgreSQL database (next to ``--pg``; dropped at the end) or ``--database-url``,
   migrated with ``titanpost db upgrade``;
2. an SMTP sink (aiosmtpd, in this process, on a free port) that records the Message-ID and
   the recipients of every message it accepts;
3. ``--instances`` gunicorn instances (``gunicorn -c deploy/gunicorn.conf.py app.wsgi:app``,
   ``GUNICORN_BIND`` on free ports) and ``--workers`` ``titanpost worker --no-migrate``
   processes, each in a session (process group) of its own, all with the same database, secret
   key, ``TITANPOST_SMTP_URL`` (the sink) and ``TITANPOST_TICK_SECONDS=1`` (the outbox sent
   every ``--mail-seconds``, the server's 10 by default);
4. bench/api.py's clients play three-seat games (every seat a player with an address, so moves
   write mail) through all the instances at once, round-robin per request;
5. at ``--kill-web-at`` of the run (a share of ``--seconds``, of ``--games`` finished or of the
   expected moves, whichever comes first) the process group of one instance gets SIGKILL,
   aimed (for up to 5 s) at a moment when a move sent there is already in the log but its
   answer has not reached the client. At ``--kill-worker-at`` the worker busy with a batch of
   claimed outbox rows (the one using CPU; for up to 10 s) gets SIGKILL. The clients send a
   request that failed on the dead instance to another one: a move whose answer was lost is
   sent again and answered as already applied. ``--kill-worker-in-smtp`` instead kills the
   worker that is delivering a message at that moment, inside its SMTP transaction (after the
   sink took the message, before it answers): the sender had marked the row as handed to the
   relay, so no other sender sends it again (it is settled "unconfirmed", received once);
6. the outbox is drained: the surviving worker sends what is due. Rows it cannot take yet are
   those still leased by the dead worker (5 minutes) and those held back by the continuation
   delay (60 seconds); they are made due at once (the time they would wait is skipped), or,
   with ``--wait-leases``, waited for;
7. the checks: ``titanpost admin verify`` exits 0; every move the clients were told was applied
   is in the log once, at the place it answered, made by the player; the log holds no player
   move the clients did not make (no move doubled by a retry, in particular no two identical
   consecutive moves that only one request asked for); each game's log is as long as its client
   last saw; games the clients do not know are only set-ups whose answer was lost (no moves);
   the sink received every delivered outbox row's Message-ID exactly once, to the row's
   recipient, and nothing else; no row is left unsent; every finished game's game-over mails
   arrived.

It prints the figures of the run (moves/s, errors by kind, requests sent again, mails) and the
checks, stops everything, and exits 0 only when every check holds.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager, suppress
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email import policy
from email.parser import BytesHeaderParser
from pathlib import Path
from typing import Any

import psycopg
from aiosmtpd.controller import Controller
from sqlalchemy.engine import make_url

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.mail.notify import CONTINUATION_DELAY, GAME_OVER
from app.mail.send import LEASE, MAX_ATTEMPTS
from bench import api as bench

ROOT = Path(__file__).resolve().parent.parent

MOVES_PER_GAME = 110
"""About how many moves a three-seat game of random choices takes (for the kill points)."""
SKIPPED = "skipped:"
UNCONFIRMED = "unconfirmed:"
BUSY_WAIT = 10.0
"""Seconds the worker kill waits for a worker to be busy with claimed outbox rows."""
SETTLED = 15.0
"""Seconds after the worker was killed before its leases are made due (no live worker is
still busy with a batch it claimed before that)."""


# ---------------------------------------------------------------------- settings


@dataclass
class Config:
    games: int = 40
    clients: int = 4
    seconds: float = 60.0
    instances: int = 2
    web_workers: int = 2
    threads: int = 4
    workers: int = 2
    mail_seconds: int = 10
    """How often each worker sends the outbox (``TITANPOST_MAIL_SECONDS``: the server's
    default; a short run's test sends more often, so that its mail players wait less)."""
    kill_web_at: float | None = 0.3
    kill_worker_at: float | None = 0.5
    kill_worker_in_smtp: bool = False
    wait_leases: bool = False
    drain_timeout: float = 120.0
    seed: int = 1
    database_url: str | None = None
    pg: str = "postgresql://postgres@127.0.0.1:5432/postgres"
    keep_logs: bool = False


@dataclass
class Check:
    name: str
    ok: bool
    detail: str = ""


class Checks:
    """The checks of a run, shared by the reports of scaleout, bench/load.py and
    deploy/faults.py (each a dataclass with its own ``checks`` field)."""

    checks: list[Check]

    @property
    def ok(self) -> bool:
        """Every check holds (and there was at least one)."""
        return bool(self.checks) and all(check.ok for check in self.checks)

    def check(self, name: str, ok: bool, detail: str = "") -> None:
        self.checks.append(Check(name, ok, detail))


@dataclass
class Report(Checks):
    """What happened and what was checked (``ok``: every check holds)."""

    config: Config
    stats: bench.Stats = field(default_factory=bench.Stats)
    wall: float = 0.0
    kills: list[tuple[str, float]] = field(default_factory=list)
    """(what, seconds into the play) of each process killed."""
    worker_killed: list[datetime] = field(default_factory=list)
    """When the worker was killed (UTC), once it was."""
    outbox: dict[str, int] = field(default_factory=dict)
    skipped_why: Counter[str] = field(default_factory=Counter)
    held_back: dict[str, int] = field(default_factory=dict)
    """Rows the survivor could not take after the run: leased by the dead worker, delayed."""
    sink_messages: int = 0
    checks: list[Check] = field(default_factory=list)
    log_dir: Path | None = None
    process_groups: list[int] = field(default_factory=list)
    """The process group of every web instance and worker started (all gone at the end)."""



# ---------------------------------------------------------------------- the SMTP sink


@dataclass(frozen=True)
class Received:
    message_id: str
    recipients: tuple[str, ...]
    peer_port: int


class Sink:
    """An SMTP server that accepts every message and records its Message-ID and recipients.

    ``on_data`` (if set) is called with the client's port inside the SMTP transaction, after
    the message is recorded and before the server answers 250; ``on_rcpt`` likewise when a
    recipient is named (before the message's data: the relay cannot have it yet).
    ``listener`` (if set) gets each accepted message with its raw bytes (bench/load.py reads
    the links in the mails from it).
    """

    def __init__(self) -> None:
        self.received: list[Received] = []
        self.lock = threading.Lock()
        self.on_data: Callable[[int], None] | None = None
        self.on_rcpt: Callable[[int], None] | None = None
        self.listener: Callable[[Received, bytes], None] | None = None
        self.port = 0

    async def handle_RCPT(self, server: Any, session: Any, envelope: Any, address: str,
                          rcpt_options: list[str]) -> str:
        envelope.rcpt_tos.append(address)
        hook = self.on_rcpt
        if hook is not None:
            hook(_peer_port(session))
        return "250 OK"

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        raw = envelope.original_content or envelope.content
        headers = BytesHeaderParser(policy=policy.default).parsebytes(raw)
        received = Received(str(headers.get("Message-ID", "")).strip(),
                            tuple(envelope.rcpt_tos), _peer_port(session))
        with self.lock:
            self.received.append(received)
        listener = self.listener
        if listener is not None:
            listener(received, raw)
        hook = self.on_data
        if hook is not None:
            hook(received.peer_port)
        return "250 OK"

    def count(self) -> int:
        with self.lock:
            return len(self.received)

    def messages(self) -> list[Received]:
        with self.lock:
            return list(self.received)

    @contextmanager
    def running(self) -> Iterator[Sink]:
        self.port = bench.free_port()
        controller = Controller(self, hostname="127.0.0.1", port=self.port)
        controller.start()
        try:
            yield self
        finally:
            controller.stop()


def _peer_port(session: Any) -> int:
    return int(session.peer[1]) if isinstance(session.peer, tuple) else 0


def _tcp_sockets() -> list[tuple[int, int, str]]:
    """(local port, remote port, "socket:[inode]") of every TCP socket (Linux /proc)."""
    found = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with suppress(OSError), open(table) as lines:
            for line in list(lines)[1:]:
                fields = line.split()
                found.append((int(fields[1].rsplit(":", 1)[1], 16),
                              int(fields[2].rsplit(":", 1)[1], 16), f"socket:[{fields[9]}]"))
    return found


def _sockets_of(pid: int) -> set[str]:
    links = set()
    with suppress(OSError):
        for fd in os.listdir(f"/proc/{pid}/fd"):
            with suppress(OSError):
                links.add(os.readlink(f"/proc/{pid}/fd/{fd}"))
    return links


def pid_of_local_port(port: int, pids: list[int]) -> int | None:
    """Which of ``pids`` owns the TCP socket whose local port is ``port`` (Linux /proc)."""
    inodes = {inode for local, _, inode in _tcp_sockets() if local == port}
    return next((pid for pid in pids if _sockets_of(pid) & inodes), None)


def connected_to(pid: int, remote_port: int) -> bool:
    """Whether process ``pid`` holds a TCP connection to ``remote_port`` (Linux /proc)."""
    inodes = {inode for _, remote, inode in _tcp_sockets() if remote == remote_port}
    return bool(_sockets_of(pid) & inodes)


# ---------------------------------------------------------------------- processes


def cpu_ticks(pid: int) -> int:
    """User + system clock ticks of a process so far (Linux /proc; 0 when unknown)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0
    return int(fields[11]) + int(fields[12])


def busiest(processes: list[Process], sample: float = 0.15) -> Process:
    """The process that used the most CPU over ``sample`` seconds (the one rendering mail)."""
    before = {p.popen.pid: cpu_ticks(p.popen.pid) for p in processes}
    time.sleep(sample)
    return max(processes, key=lambda p: cpu_ticks(p.popen.pid) - before[p.popen.pid])


def titanpost_command() -> list[str]:
    found = shutil.which("titanpost")
    return [found] if found else [sys.executable, "-m", "cli.main"]


@dataclass
class Process:
    name: str
    popen: subprocess.Popen[Any]
    log: Any
    base: str | None = None
    killed: bool = False
    command: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    """What started it (its own variables only), to start it again."""
    replaced: bool = False
    """Restarted: a newer process of the same name took its place."""

    def alive(self) -> bool:
        return self.popen.poll() is None


class Deployment:
    """The web instances and workers of one run, each in a process group of its own.

    ``extra_env`` is added to every process's environment (deploy/faults.py points
    ``TITANPOST_DATABASE_URL`` at its proxy that way)."""

    def __init__(self, database_url: str, smtp_port: int, log_dir: Path, config: Config,
                 extra_env: dict[str, str] | None = None) -> None:
        self.config = config
        self.log_dir = log_dir
        self.processes: list[Process] = []
        self.public = f"http://127.0.0.1:{bench.free_port()}"
        self.base_env = dict(os.environ)
        self.base_env.update(
            TITANPOST_DATABASE_URL=database_url,
            TITANPOST_ENV="production",
            TITANPOST_SECRET_KEY=os.urandom(32).hex(),
            TITANPOST_BASE_URL=self.public,
            TITANPOST_SMTP_URL=f"smtp://127.0.0.1:{smtp_port}?timeout=10",
            TITANPOST_MAIL_DOMAIN="scaleout.test",
            TITANPOST_MAIL_FROM="Titan Post <post@scaleout.test>",
            TITANPOST_TICK_SECONDS="1",
            TITANPOST_MAIL_SECONDS=str(config.mail_seconds),
            TITANPOST_LOG_FORMAT="text",
            PYTHONUNBUFFERED="1",
            PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
        )
        self.base_env.update(extra_env or {})

    def _spawn(self, name: str, command: list[str], **env: str) -> Process:
        started = sum(1 for p in self.processes if p.name == name)
        suffix = f".{started + 1}" if started else ""
        log = open(self.log_dir / f"{name}{suffix}.log", "w+")  # noqa: SIM115 (stop_all)
        popen = subprocess.Popen(command, cwd=ROOT, env=self.base_env | env, stdout=log,
                                 stderr=subprocess.STDOUT, start_new_session=True)
        process = Process(name, popen, log, command=command, env=env)
        self.processes.append(process)
        return process

    def restart(self, process: Process) -> Process:
        """Start ``process`` again (same command, port and settings) once it is dead; a web
        instance is returned once it answers."""
        if process.alive():
            raise RuntimeError(f"{process.name} is still running")
        process.replaced = True
        again = self._spawn(process.name, process.command, **process.env)
        again.base = process.base
        if again.base is not None:
            bench._wait_until_up(again.popen, again.base, again.log)
        return again

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*titanpost_command(), *args], cwd=ROOT, env=self.base_env,
                              capture_output=True, text=True, check=False, timeout=300)

    def start(self) -> None:
        webs = []
        for index in range(self.config.instances):
            port = bench.free_port()
            web = self._spawn(
                f"web{index}",
                [sys.executable, "-m", "gunicorn", "-c", str(ROOT / "deploy/gunicorn.conf.py"),
                 "app.wsgi:app"],
                GUNICORN_BIND=f"127.0.0.1:{port}",
                GUNICORN_WORKERS=str(self.config.web_workers),
                GUNICORN_THREADS=str(self.config.threads),
                GUNICORN_LOG_LEVEL="warning",
            )
            web.base = f"http://127.0.0.1:{port}"
            webs.append(web)
        for index in range(self.config.workers):
            self._spawn(f"worker{index}", [*titanpost_command(), "worker", "--no-migrate"])
        for web in webs:
            assert web.base is not None
            bench._wait_until_up(web.popen, web.base, web.log)

    def wait_for_workers(self, conninfo: str, timeout: float = 60) -> None:
        """Until every worker is running its jobs: it has ticked the clock (its host:pid in
        ``clock_ticks``, which names the last one only) or holds a database connection."""
        waiting = {process.popen.pid: process for process in self.workers()}
        port = make_url(self.base_env["TITANPOST_DATABASE_URL"]).port or 5432
        deadline = time.monotonic() + timeout
        while waiting and time.monotonic() < deadline:
            for process in waiting.values():
                if not process.alive():
                    process.log.seek(0)
                    raise RuntimeError(f"{process.name} exited:\n{process.log.read()[-3000:]}")
            with psycopg.connect(conninfo) as conn:
                row = conn.execute("SELECT worker FROM clock_ticks WHERE name = 'main'").fetchone()
            if row and row[0]:
                waiting.pop(int(str(row[0]).rsplit(":", 1)[1]), None)
            for pid in [pid for pid in waiting if connected_to(pid, port)]:
                waiting.pop(pid)
            time.sleep(0.1)
        if waiting:
            raise RuntimeError(f"worker(s) {', '.join(p.name for p in waiting.values())} did not "
                               f"tick within {timeout:.0f} s")

    def webs(self) -> list[Process]:
        return [p for p in self.processes if p.name.startswith("web") and not p.replaced]

    def workers(self) -> list[Process]:
        return [p for p in self.processes if p.name.startswith("worker") and not p.replaced]

    def kill(self, process: Process) -> None:
        """SIGKILL to the process group: a gunicorn master and its workers die at once."""
        with suppress(ProcessLookupError):
            os.killpg(process.popen.pid, signal.SIGKILL)
        process.popen.wait()
        process.killed = True

    def stop_all(self) -> None:
        for process in self.processes:
            if process.alive():
                with suppress(ProcessLookupError):
                    os.killpg(process.popen.pid, signal.SIGTERM)
        deadline = time.monotonic() + 15
        for process in self.processes:
            with suppress(subprocess.TimeoutExpired):
                process.popen.wait(timeout=max(0.1, deadline - time.monotonic()))
            with suppress(ProcessLookupError):  # what is left, and orphaned gunicorn workers
                os.killpg(process.popen.pid, signal.SIGKILL)
            process.popen.wait()
            process.log.close()


@contextmanager
def database(config: Config) -> Iterator[tuple[str, str]]:
    """(SQLAlchemy URL, libpq conninfo) of the database of the run."""
    if config.database_url:
        url = make_url(config.database_url)
        if not url.drivername.startswith("postgresql"):
            raise SystemExit("--database-url must be a PostgreSQL database")
        conninfo = url.set(drivername="postgresql").render_as_string(hide_password=False)
        yield url.set(drivername="postgresql+psycopg").render_as_string(hide_password=False), \
            conninfo
        return
    with bench.postgres_database(config.pg) as pair:
        yield pair


# ---------------------------------------------------------------------- the outbox


OUTBOX_STATE = f"""
SELECT count(*),
       count(*) FILTER (WHERE sent_at IS NOT NULL AND coalesce(last_error, '') NOT LIKE
                        '{SKIPPED}%%'),
       count(*) FILTER (WHERE sent_at IS NOT NULL AND last_error LIKE '{SKIPPED}%%'),
       count(*) FILTER (WHERE sent_at IS NULL AND attempts < %(max)s
                        AND (next_attempt_at IS NULL OR next_attempt_at <= now())),
       count(*) FILTER (WHERE sent_at IS NULL AND attempts < %(max)s AND next_attempt_at > now()),
       count(*) FILTER (WHERE sent_at IS NULL AND attempts >= %(max)s)
FROM outbox
"""
STATE_NAMES = ("rows", "delivered", "skipped", "due", "waiting", "given up")

HELD_BACK = """
SELECT id,
       attempts = 0 AND abs(extract(epoch FROM next_attempt_at - created_at) - %(delay)s) < 2,
       next_attempt_at
FROM outbox
WHERE sent_at IS NULL AND attempts < %(max)s AND next_attempt_at > now()
"""


def outbox_state(conninfo: str) -> dict[str, int]:
    with psycopg.connect(conninfo) as conn:
        row = conn.execute(OUTBOX_STATE, {"max": MAX_ATTEMPTS}).fetchone()
    assert row is not None
    return dict(zip(STATE_NAMES, (int(v) for v in row), strict=True))


LIVE = "leased by a live worker"
DEAD = "leased by the killed worker (5 min)"
DELAYED = "continuation delay (60 s)"


def held_back_rows(conninfo: str, killed_at: datetime | None) -> dict[str, list[int]]:
    """The ids of the unsent rows that are not due, by why: held back by the continuation
    delay (never claimed), leased before ``killed_at`` (by the worker killed then), or leased
    by a live worker."""
    with psycopg.connect(conninfo) as conn:
        rows = conn.execute(HELD_BACK, {"delay": CONTINUATION_DELAY.total_seconds(),
                                        "max": MAX_ATTEMPTS}).fetchall()
    delayed = [int(r[0]) for r in rows if r[1]]
    dead = [int(r[0]) for r in rows if not r[1] and killed_at is not None
            and r[2] - LEASE <= killed_at]
    taken = set(delayed + dead)
    live = [int(r[0]) for r in rows if int(r[0]) not in taken]
    return {DELAYED: delayed, DEAD: dead, LIVE: live}


def held_back(conninfo: str, killed_at: datetime | None) -> tuple[list[int], dict[str, int]]:
    """The unsent rows that are not due (see :func:`held_back_rows`): the ids of those held
    back by the delay or the killed worker, and how many there are of each kind."""
    rows = held_back_rows(conninfo, killed_at)
    return sorted(rows[DELAYED] + rows[DEAD]), {what: len(ids) for what, ids in rows.items()}


def drain(conninfo: str, sink: Sink, timeout: float,
          killed_at: Callable[[], datetime | None]) -> dict[str, int]:
    """Wait until no outbox row is due or being sent by a live worker, and the sink has been
    quiet for three polls in a row."""
    deadline = time.monotonic() + timeout
    quiet, last = 0, -1
    state = outbox_state(conninfo)
    while time.monotonic() < deadline:
        state = outbox_state(conninfo)
        _, classes = held_back(conninfo, killed_at())
        received = sink.count()
        idle = state["due"] == 0 and classes[LIVE] == 0 and received == last
        quiet = quiet + 1 if idle else 0
        last = received
        if quiet >= 3:
            return state
        time.sleep(0.7)
    return state


# ---------------------------------------------------------------------- the run


def run(config: Config, echo: Callable[[str], None] = print) -> Report:
    """Deploy, play, kill, drain and check (see the module documentation)."""
    report = Report(config)
    log_dir = Path(tempfile.mkdtemp(prefix="titanpost-scaleout-"))
    report.log_dir = log_dir
    with ExitStack() as stack:
        url, conninfo = stack.enter_context(database(config))
        sink = stack.enter_context(Sink().running())
        deployment = Deployment(url, sink.port, log_dir, config)
        done = deployment.run("db", "upgrade")
        if done.returncode != 0:
            raise RuntimeError(f"titanpost db upgrade failed:\n{done.stdout}{done.stderr}")
        echo(f"database {make_url(url).database} migrated; SMTP sink on 127.0.0.1:{sink.port}")
        stack.callback(deployment.stop_all)
        started = time.monotonic()
        try:
            deployment.start()
        finally:
            report.process_groups = [p.popen.pid for p in deployment.processes]
        deployment.wait_for_workers(conninfo)
        bases = [web.base for web in deployment.webs() if web.base]
        echo(f"{len(bases)} gunicorn instance(s) ({config.web_workers} workers x "
             f"{config.threads} threads): {', '.join(bases)}; {config.workers} worker(s) "
             f"ticking every 1 s, sending every {config.mail_seconds} s; up in "
             f"{time.monotonic() - started:.1f} s")
        try:
            _play(config, deployment, sink, bases, conninfo, report, echo)
            live_workers = sum(1 for worker in deployment.workers() if worker.alive())
            _settle_outbox(config, conninfo, sink, live_workers, report, echo)
        finally:
            sink.on_data = None
        if config.kill_worker_in_smtp and config.kill_worker_at is not None:
            report.check("a worker was killed inside an SMTP transaction (during the play or "
                         "the drain)", any("SMTP" in what for what, _ in report.kills))
        verify = deployment.run("admin", "verify")
        report.check("titanpost admin verify exits 0", verify.returncode == 0,
                     (verify.stdout + verify.stderr).strip().splitlines()[-1]
                     if (verify.stdout + verify.stderr).strip() else "")
        check_moves(conninfo, report)
        check_mail(conninfo, sink, report)
    if report.ok and not config.keep_logs:
        shutil.rmtree(log_dir, ignore_errors=True)
        report.log_dir = None
    return report


def kill_web_aimed(deployment: Deployment, web: Process, backends: bench.Backends,
                   conninfo: str, stop: threading.Event, within: float = 5.0) -> bool:
    """SIGKILL to web instance ``web``, aimed: after it wrote a move and before the move's
    answer reached the client (the move's row is in the log while the client still waits),
    when that is seen within ``within`` seconds, else at the end of them. Whether it was
    aimed."""
    assert web.base is not None
    aimed = False
    wait_until = time.monotonic() + within
    with psycopg.connect(conninfo, autocommit=True) as conn:
        while not aimed and time.monotonic() < wait_until and not stop.is_set():
            waiting = [(path.split("/")[3], body["expected_seq"] + 1)
                       for _, path, body in backends.in_flight(web.base)]
            aimed = bool(waiting) and bool(conn.execute(
                "SELECT 1 FROM moves m JOIN games g ON g.id = m.game_id "
                "WHERE (g.uid, m.seq) IN (SELECT * FROM unnest(%s::text[], %s::int[]))",
                ([uid for uid, _ in waiting], [seq for _, seq in waiting])).fetchone())
            if aimed:
                deployment.kill(web)
    if not aimed:
        deployment.kill(web)
    return aimed


def kill_busy_worker(deployment: Deployment, conninfo: str, stop: threading.Event,
                     still: Callable[[], bool] = lambda: True, within: float = BUSY_WAIT,
                     since: datetime | None = None) -> tuple[Process, bool]:
    """SIGKILL to the worker busy with a batch of claimed, unsent outbox rows (a worker sends
    every ``mail_seconds``), when one is seen within ``within`` seconds (and while
    ``still()``), else to the first live worker: (the worker, whether it was busy). Rows
    leased before ``since`` (by a worker killed then) do not count."""
    live = [w for w in deployment.workers() if w.alive()]
    busy = False
    wait_until = time.monotonic() + within
    while not busy and time.monotonic() < wait_until and not stop.is_set() and still():
        busy = held_back(conninfo, since)[1][LIVE] > 0
        if not busy:
            time.sleep(0.05)
    worker = busiest(live) if busy else live[0]
    deployment.kill(worker)
    return worker, busy


def _play(config: Config, deployment: Deployment, sink: Sink, bases: list[str],
          conninfo: str, report: Report, echo: Callable[[str], None]) -> None:
    """Play through every instance while a watcher kills one instance and one worker (with
    ``kill_worker_in_smtp``, the sink kills the worker, during the play or the drain)."""
    progress = bench.Progress()
    backends = bench.Backends(bases)
    stop = threading.Event()
    worker_killed = report.worker_killed
    smtp_armed = threading.Event()

    def reached(fraction: float) -> bool:
        return (time.monotonic() - t0 >= fraction * config.seconds
                or progress.finished >= fraction * config.games
                or progress.moves >= fraction * config.games * MOVES_PER_GAME)

    def kill_web() -> None:
        web = deployment.webs()[0]
        aimed = kill_web_aimed(deployment, web, backends, conninfo, stop)
        during = ("after it wrote a move, before the answer arrived" if aimed
                  else "(no move was seen written and unanswered)")
        report.kills.append((f"web instance {web.base} (gunicorn master and workers) {during}",
                             time.monotonic() - t0))
        echo(f"  {time.monotonic() - t0:5.1f} s: SIGKILL to {web.name} ({web.base}) {during}, "
             f"after {progress.moves} moves")

    def kill_worker() -> None:
        # before the last games are being played
        worker, busy = kill_busy_worker(
            deployment, conninfo, stop,
            lambda: progress.finished < config.games - config.clients)
        worker_killed.append(datetime.now(UTC))
        holding = "while outbox rows were claimed, the busier worker" if busy else \
            "(no outbox rows were claimed meanwhile)"
        report.kills.append((f"{worker.name} (pid {worker.popen.pid}) {holding}",
                             time.monotonic() - t0))
        echo(f"  {time.monotonic() - t0:5.1f} s: SIGKILL to {worker.name} {holding}, after "
             f"{progress.moves} moves, {sink.count()} mails received")

    def in_smtp(peer_port: int) -> None:
        if not smtp_armed.is_set() or worker_killed:
            return
        live = [w for w in deployment.workers() if w.alive()]
        pid = pid_of_local_port(peer_port, [w.popen.pid for w in live])
        target = next((w for w in live if w.popen.pid == pid), None)
        if target is None:
            return
        deployment.kill(target)
        worker_killed.append(datetime.now(UTC))
        report.kills.append((f"{target.name} (pid {pid}) inside an SMTP transaction",
                             time.monotonic() - t0))
        smtp_armed.clear()
        echo(f"  {time.monotonic() - t0:5.1f} s: SIGKILL to {target.name} inside its SMTP "
             "transaction (the sink has the message, the worker never hears 250)")

    plan: list[tuple[float, Callable[[], None]]] = []
    if config.kill_web_at is not None:
        plan.append((config.kill_web_at, kill_web))
    if config.kill_worker_at is not None:
        plan.append((config.kill_worker_at, smtp_armed.set if config.kill_worker_in_smtp
                     else kill_worker))
    plan.sort(key=lambda step: step[0])
    sink.on_data = in_smtp

    def watch() -> None:
        steps = list(plan)
        next_line = 5.0
        while not stop.wait(0.05):
            while steps and reached(steps[0][0]):
                steps.pop(0)[1]()
            elapsed = time.monotonic() - t0
            if elapsed >= next_line:
                echo(f"  {elapsed:5.1f} s: {progress.moves:,} moves "
                     f"({progress.moves / elapsed:,.1f}/s), {progress.finished} games finished, "
                     f"{sink.count()} mails received")
                next_line += 5.0

    watcher = threading.Thread(target=watch, name="scaleout-watcher", daemon=True)
    echo(f"playing {config.games} games with {config.clients} clients over "
         f"{len(bases)} instances (at most {config.seconds:.0f} s)")
    t0 = time.monotonic()
    watcher.start()
    try:
        stats, wall, _cpu = bench.run_clients(backends, config.games, config.clients,
                                              config.seconds, config.seed, progress=progress)
    finally:
        stop.set()
        watcher.join(10)
        if not smtp_armed.is_set():
            sink.on_data = None
    report.stats, report.wall = stats, wall
    wanted = (config.kill_web_at is not None) + (config.kill_worker_at is not None
                                                 and not config.kill_worker_in_smtp)
    killed = {0: "nothing was killed (as asked)", 1: "one process was killed during the play",
              2: "one web instance and one worker were killed during the play"}[wanted]
    aimed = [(what, at) for what, at in report.kills if "SMTP" not in what]  # (checked apart)
    report.check(killed,
                 len(aimed) == wanted and all(at <= wall for _, at in aimed),
                 "; ".join(f"{what} at {at:.1f} s" for what, at in report.kills)
                 + f" of {wall:.1f} s")


def _settle_outbox(config: Config, conninfo: str, sink: Sink, live_workers: int,
                   report: Report, echo: Callable[[str], None]) -> None:
    """Let the surviving workers send the outbox, with the rows held back (the dead worker's
    leases, the continuation delay) made due at once, or waited for with ``wait_leases``.

    Making a leased row due is safe once its worker is dead; when a single worker is left, a
    row of its own batch made due is settled by it before it claims again (its sender runs one
    batch at a time); with several left, the rows are made due only ``SETTLED`` seconds after
    the kill, when no batch claimed before the kill is still being sent."""
    def killed_at() -> datetime | None:
        return report.worker_killed[0] if report.worker_killed else None

    t0 = time.monotonic()
    ids, report.held_back = held_back(conninfo, killed_at())
    echo("outbox at the end of the play: " + ", ".join(
        f"{n} {name}" for name, n in outbox_state(conninfo).items()) + "; not due yet: "
        + ", ".join(f"{what} {n}" for what, n in report.held_back.items()))
    state: dict[str, int] = {}
    for _round in range(3):
        if ids and not config.wait_leases:
            dead_since = killed_at()
            if dead_since is not None and live_workers > 1:
                time.sleep(max(0.0, SETTLED - (datetime.now(UTC) - dead_since).total_seconds()))
            with psycopg.connect(conninfo) as conn:
                conn.execute("UPDATE outbox SET next_attempt_at = now() WHERE id = ANY(%s) "
                             "AND sent_at IS NULL", (ids,))
            echo(f"made {len(ids)} held-back row(s) due now (skipping the lease and delay "
                 "waits; --wait-leases waits instead)")
        state = drain(conninfo, sink, config.drain_timeout, killed_at)
        ids, classes = held_back(conninfo, killed_at())
        if not ids:
            break
        echo(f"drained after {time.monotonic() - t0:.1f} s; not due yet: "
             + ", ".join(f"{what} {n}" for what, n in classes.items()))
        if config.wait_leases:
            with psycopg.connect(conninfo) as conn:
                row = conn.execute("SELECT max(next_attempt_at) - now() FROM outbox WHERE "
                                   "id = ANY(%s)", (ids,)).fetchone()
            wait = max(0.0, row[0].total_seconds()) if row and row[0] else 0.0
            echo(f"waiting {wait:.0f} s for the leases and delays to run out")
            time.sleep(wait + 1)
    report.outbox = state
    report.sink_messages = sink.count()
    echo(f"outbox settled after {time.monotonic() - t0:.1f} s: "
         + ", ".join(f"{name} {state[name]}" for name in STATE_NAMES))


# ---------------------------------------------------------------------- the checks


def _sample(items: list[Any], limit: int = 3) -> str:
    return ", ".join(map(str, items[:limit])) + (" ..." if len(items) > limit else "")


def check_moves(conninfo: str, report: Report) -> None:
    stats = report.stats
    with psycopg.connect(conninfo) as conn:
        games = {str(uid): str(status) for uid, status in
                 conn.execute("SELECT uid, status FROM games").fetchall()}
        rows = conn.execute(
            "SELECT g.uid, m.seq, m.seat, m.kind, m.actor, m.input FROM moves m "
            "JOIN games g ON g.id = m.game_id ORDER BY g.uid, m.seq").fetchall()
    log: dict[str, list[tuple[int, int | None, str, str, str]]] = defaultdict(list)
    for uid, seq, seat, kind, actor, text in rows:
        log[str(uid)].append((int(seq), seat, str(kind), str(actor), str(text)))

    matched: Counter[tuple[str, int]] = Counter()
    missing: list[str] = []
    for move in stats.applied:
        entry = next((e for e in log.get(move.game, []) if e[0] > move.expected_seq
                      and e[2] in ("move", "rollback")), None)
        if (entry is None or entry[1] != move.seat or entry[3] != "player"
                or entry[4] != move.input):
            missing.append(f"{move.game[:8]} after {move.expected_seq}: seat {move.seat} "
                           f"'{move.input}' (log: {entry})")
            continue
        matched[(move.game, entry[0])] += 1
    told = len(stats.applied)
    report.check("every move the clients were told was applied is in the log, once",
                 not missing and all(n == 1 for n in matched.values()),
                 f"{told:,} moves ({stats.already_applied} of them answered as already applied "
                 f"after a resend)" + (f"; missing: {_sample(missing)}" if missing else "")
                 + ("; told twice: " + _sample([k for k, n in matched.items() if n > 1])
                    if any(n > 1 for n in matched.values()) else ""))

    uncertain = {(m.game, m.seat, m.input) for m in stats.uncertain}
    extra, explained, twins = [], 0, 0
    for uid, entries in log.items():
        for index, (seq, seat, kind, actor, text) in enumerate(entries):
            if kind != "move" or actor != "player":
                continue
            if (uid, seq) not in matched:
                if (uid, seat, text) in uncertain:
                    explained += 1
                else:
                    extra.append(f"{uid[:8]}#{seq} seat {seat} '{text}'")
            before = entries[index - 1] if index else None
            if (before is not None and before[2:] == (kind, actor, text)
                    and before[1] == seat):
                twins += 1
                if (uid, seq) not in matched or (uid, before[0]) not in matched:
                    extra.append(f"{uid[:8]}#{seq} repeats #{before[0]}")
    report.check("no player move in the log that the clients did not make (none doubled)",
                 not extra,
                 f"{sum(len(e) for e in log.values()):,} log entries; {twins} pairs of identical "
                 f"consecutive player moves, each asked for by its own request"
                 + (f"; {explained} sent with no answer and applied" if explained else "")
                 + (f"; unexplained: {_sample(extra)}" if extra else ""))

    short = []
    uncertain_games = {m.game for m in stats.uncertain}
    for uid, seen in stats.games.items():
        length = log[uid][-1][0] if log.get(uid) else 0
        if length != seen and uid not in uncertain_games:
            short.append(f"{uid[:8]}: log {length}, client saw {seen}")
    report.check("each game's log is as long as its client last saw it", not short,
                 f"{len(stats.games)} games played" + (f"; {_sample(short)}" if short else ""))

    unknown = [uid for uid in games if uid not in stats.games]
    bad = [f"{uid[:8]} {games[uid]} with {len(log.get(uid, []))} entries" for uid in unknown
           if games[uid] not in ("open", "abandoned") or log.get(uid)]
    lost = sum(stats.lost.values())
    report.check("games unknown to the clients are set-ups whose answer was lost",
                 not bad and len(unknown) <= lost + len(stats.abandoned),
                 f"{len(unknown)} such games, {lost} answers lost while setting up"
                 + (f"; {_sample(bad)}" if bad else ""))
    finished = sum(1 for uid in stats.games if games.get(uid) == "finished")
    report.outbox["finished games"] = finished


def check_mail(conninfo: str, sink: Sink, report: Report) -> None:
    with psycopg.connect(conninfo) as conn:
        rows = conn.execute(
            "SELECT o.message_id, o.recipient, o.kind, o.sent_at IS NOT NULL, o.last_error, "
            "g.status FROM outbox o LEFT JOIN games g ON g.id = o.game_id").fetchall()
    delivered: dict[str, str] = {}
    skipped: dict[str, str] = {}
    unconfirmed: dict[str, str] = {}
    unsent: list[str] = []
    game_over: list[tuple[str, str]] = []
    for message_id, recipient, kind, sent, error, status in rows:
        if not sent:
            unsent.append(f"{message_id} ({error or 'never tried'})")
        elif error and str(error).startswith(SKIPPED):
            skipped[str(message_id)] = str(error)
            report.skipped_why[str(error)[len(SKIPPED):].strip()] += 1
        elif error and str(error).startswith(UNCONFIRMED):
            unconfirmed[str(message_id)] = str(recipient)
        else:
            delivered[str(message_id)] = str(recipient)
        if kind == GAME_OVER and status == "finished":
            game_over.append((str(message_id), str(recipient)))
    messages = sink.messages()
    counts = Counter(m.message_id for m in messages)
    doubled = [f"{mid} x{n}" for mid, n in counts.items() if n > 1]
    report.check("no mail arrived twice (messages per Message-ID at the sink: all 1)",
                 not doubled, f"{len(messages):,} messages, {len(counts):,} Message-IDs"
                 + (f"; twice or more: {_sample(doubled)}" if doubled else ""))
    stray = sorted(set(counts) - set(delivered) - set(unconfirmed))
    lost = sorted(set(delivered) - set(counts))
    arrived = sum(1 for mid in unconfirmed if mid in counts)
    report.check("mail handed to the relay by a sender that died is never sent again "
                 "(unconfirmed rows: at most once at the sink)",
                 all(counts.get(mid, 0) <= 1 for mid in unconfirmed),
                 f"{len(unconfirmed)} unconfirmed row(s), {arrived} of them received")
    stray_skipped = [mid for mid in stray if mid in skipped]
    report.check("the sink received exactly the outbox rows marked delivered",
                 not stray and not lost,
                 f"{len(delivered):,} rows delivered, {len(skipped):,} skipped as not worth "
                 f"sending any more (never handed to SMTP)"
                 + (f"; delivered but not received: {_sample(lost)}" if lost else "")
                 + (f"; received but not marked delivered: {_sample(stray)}" if stray else "")
                 + (f" ({len(stray_skipped)} of them marked skipped)" if stray_skipped else ""))
    recipients = delivered | unconfirmed
    wrong = [m.message_id for m in messages
             if m.message_id in recipients and list(m.recipients) != [recipients[m.message_id]]]
    report.check("each message went to its row's recipient only", not wrong,
                 _sample(wrong) if wrong else "")
    report.check("no outbox row is left unsent (none given up, none still waiting)", not unsent,
                 _sample(unsent) if unsent else f"{len(rows):,} rows")
    over_missing = [mid for mid, _ in game_over if counts.get(mid) != 1]
    report.check("every finished game's game-over mails arrived, once each",
                 bool(game_over) and not over_missing,
                 f"{len(game_over)} game-over mails of {report.outbox.get('finished games', 0)} "
                 f"finished games" + (f"; missing: {_sample(over_missing)}"
                                      if over_missing else ""))


# ---------------------------------------------------------------------- output


def print_report(report: Report, echo: Callable[[str], None] = print) -> None:
    stats, wall, config = report.stats, report.wall, report.config
    echo(f"figures ({config.instances} instances x {config.web_workers} gunicorn workers x "
         f"{config.threads} threads, {config.workers} workers, {config.clients} clients, "
         f"{os.cpu_count()} CPUs):")
    unfinished = stats.games_started - stats.games_finished
    echo(f"  games:             {stats.games_finished} finished, {unfinished} cut short; "
         f"{stats.moves:,} moves in {wall:.1f} s")
    echo(f"  moves/s:           {stats.moves / wall if wall else 0.0:,.1f} (through every "
         "instance, kills included)")
    echo(f"  POST /moves:       p50 {bench.percentile(stats.post_ms, 50):.1f} ms, "
         f"p99 {bench.percentile(stats.post_ms, 99):.1f} ms")
    spread = ", ".join(f"{url} {n:,}" for url, n in sorted(stats.by_base.items()))
    echo(f"  requests answered: {spread}")
    failovers = ", ".join(f"{kind} {n}" for kind, n in stats.failovers.most_common())
    echo(f"  sent again:        {sum(stats.failovers.values())} "
         f"({failovers or 'none'})")
    echo(f"  already applied:   {stats.already_applied} moves (resent after a lost answer)")
    echo(f"  409 answers:       {stats.conflicts}")
    lost = ", ".join(f"{what} {n}" for what, n in stats.lost.most_common())
    echo(f"  set-ups lost:      {sum(stats.lost.values())}" + (f" ({lost})" if lost else ""))
    kinds = ", ".join(f"{kind} {n}" for kind, n in stats.error_kinds.most_common())
    echo(f"  client errors:     {stats.errors}" + (f" ({kinds})" if kinds else ""))
    for sample in stats.error_samples:
        echo(f"    {sample}")
    outbox = report.outbox
    echo(f"  mails:             {report.sink_messages:,} received by the sink; outbox "
         f"{outbox.get('rows', 0):,} rows: {outbox.get('delivered', 0):,} delivered, "
         f"{outbox.get('skipped', 0):,} skipped")
    for why, n in report.skipped_why.most_common():
        echo(f"    skipped {n:,}: {why}")
    if report.held_back:
        echo("  held back at the end of the play: "
             + ", ".join(f"{what} {n}" for what, n in report.held_back.items()))
    echo("checks:")
    for check in report.checks:
        echo(f"  [{'ok' if check.ok else 'FAIL'}] {check.name}"
             + (f": {check.detail}" if check.detail else ""))
    if report.log_dir is not None:
        echo(f"process logs kept in {report.log_dir}")
    echo("all checks hold" if report.ok else "SOME CHECKS FAILED")


def run_script(run: Callable[[Any, Callable[[str], None]], Any],
               report_of: Callable[[Any, Callable[[str], None]], None], config: Any) -> None:
    """The end of each script's ``main``: run, print the report, exit 0 only when every check
    holds; SIGTERM and Ctrl-C stop every process started and remove the scratch database."""
    def terminate(_signum: int, _frame: Any) -> None:
        raise SystemExit(143)  # unwinds through the blocks that stop every process

    def echo(line: str) -> None:
        print(line, flush=True)

    signal.signal(signal.SIGTERM, terminate)
    try:
        report = run(config, echo)
    except KeyboardInterrupt:
        print("interrupted: every process stopped, scratch database removed", file=sys.stderr)
        sys.exit(130)
    report_of(report, echo)
    sys.exit(0 if report.ok else 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    defaults = Config()
    parser.add_argument("--games", type=int, default=defaults.games)
    parser.add_argument("--clients", type=int, default=defaults.clients,
                        help="concurrent client threads")
    parser.add_argument("--seconds", type=float, default=defaults.seconds,
                        help="stop the play after this long")
    parser.add_argument("--instances", type=int, default=defaults.instances,
                        help="gunicorn instances")
    parser.add_argument("--web-workers", type=int, default=defaults.web_workers,
                        help="gunicorn workers per instance")
    parser.add_argument("--threads", type=int, default=defaults.threads,
                        help="threads per gunicorn worker")
    parser.add_argument("--workers", type=int, default=defaults.workers,
                        help="titanpost worker processes")
    parser.add_argument("--mail-seconds", type=int, default=defaults.mail_seconds,
                        help="how often each worker sends the outbox")
    parser.add_argument("--kill-web-at", type=float, default=defaults.kill_web_at,
                        help="kill one instance at this share of the run")
    parser.add_argument("--kill-worker-at", type=float, default=defaults.kill_worker_at,
                        help="kill one worker at this share of the run")
    parser.add_argument("--no-kill", action="store_true", help="kill nothing")
    parser.add_argument("--kill-worker-in-smtp", action="store_true",
                        help="kill the worker that is inside an SMTP transaction then")
    parser.add_argument("--wait-leases", action="store_true",
                        help="wait for the dead worker's leases (5 min) and the continuation "
                             "delay (60 s) instead of making those rows due at once")
    parser.add_argument("--drain-timeout", type=float, default=defaults.drain_timeout)
    parser.add_argument("--seed", type=int, default=defaults.seed)
    parser.add_argument("--database-url", default=None,
                        help="use this (empty or Titan Post) PostgreSQL database")
    parser.add_argument("--pg", default=defaults.pg,
                        help="PostgreSQL admin database (a scratch database is made beside it)")
    parser.add_argument("--keep-logs", action="store_true",
                        help="keep the processes' logs (always kept when a check fails)")
    args = parser.parse_args()
    if args.instances < 2 and not args.no_kill:
        parser.error("killing an instance needs --instances 2 or more")
    if args.workers < 2 and not args.no_kill:
        parser.error("killing a worker needs --workers 2 or more")
    config = Config(
        games=args.games, clients=args.clients, seconds=args.seconds, instances=args.instances,
        web_workers=args.web_workers, threads=args.threads, workers=args.workers,
        mail_seconds=args.mail_seconds, kill_web_at=None if args.no_kill else args.kill_web_at,
        kill_worker_at=None if args.no_kill else args.kill_worker_at,
        kill_worker_in_smtp=args.kill_worker_in_smtp, wait_leases=args.wait_leases,
        drain_timeout=args.drain_timeout, seed=args.seed, database_url=args.database_url,
        pg=args.pg, keep_logs=args.keep_logs,
    )

    run_script(run, print_report, config)


if __name__ == "__main__":
    main()
