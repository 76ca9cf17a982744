"""Faults under load: web instances and workers killed with SIGKILL at random points and
started again, and the database cut away for a while, while bench/load.py's players play
(through the API and the links in their mails); then proof that nothing was lost, no mail
arrived twice and every pending deadline is still pending.

    python3 deploy/faults.py [--games 40] [--clients 8] [--seconds 90] [--link-share 0.33]
                             [--instances 2] [--web-workers 2] [--threads 4] [--workers 2]
                             [--mail-seconds 10]
                             [--web-kills 3] [--worker-kills 4] [--cut-seconds 5]
                             [--fault-seed 1] [--settle-seconds 15] [--tail-seconds S]
                             [--drain-timeout 120] [--keep-logs]
                             [--database-url URL | --pg ADMIN_URL]

The deployment is bench/load.py's (deploy/scaleout.py's processes and SMTP sink), except that
every process reaches PostgreSQL through a small TCP proxy in this script, which can be cut.
The faults fall at seeded random points (``--fault-seed``: the same points again) of the
first 10-70% of ``--seconds``, counted from the moment the first decision mail reaches the
sink. They run in two lanes, each fault of a lane after the one before it has ended: the web
kills and the cut in one, the worker kills in the other. The play lasts ``--seconds`` from
that same moment (bench/load.py's play); with ``--tail-seconds`` it lasts until that long
after the last fault instead, however long the faults took.

- ``--web-kills`` times, one web instance (its gunicorn master and workers) gets SIGKILL, aimed
  (for up to 5 s) at a moment when a move sent there is in the log and its answer has not
  reached the client; after a random 0.5-2 s it is started again on the same port. The
  clients send what failed to the other instance meanwhile.
- ``--worker-kills`` times, one ``titanpost worker`` gets SIGKILL and is started again; the
  kills take turns: a worker inside its SMTP conversation after the message's data, before
  the relay's answer (the sink kills it from its DATA handler); a worker holding claimed
  outbox rows of fresh moves that it has not sent yet (between writing a move and sending its
  mail); a worker inside its SMTP conversation before the data (from the RCPT handler); a
  worker at a random moment. A kill waits for its moment as long as a client waits for a
  mail (``--mail-wait``): most mails wait for the continuation delay, so a moment may be
  a minute away.
- once (unless ``--cut-seconds 0``), the proxy closes every database connection and refuses
  new ones for ``--cut-seconds``. Meanwhile the script asks each instance for a game through
  the API and as a page: each must answer 503 with Retry-After. Then the proxy lets
  connections through again, and each instance must serve again by itself, within 30 s,
  without being started again. (A worker may be killed during the cut; it is started again
  once the database is back.)

A killed worker's claimed rows wait for their 5-minute lease; ``--settle-seconds`` (15) after
each worker kill (and after the cut, whose failed sends leave claims behind too) the script
makes the rows leased before it due at once, skipping that wait. After the play every unsent
row that is not due yet (the continuation delay, leases, backoff) is made due, one more sender
(``titanpost mail send --once``) runs beside the workers, and the outbox is drained. Neither
can double a mail: the sender renews its lease just before it hands a message over and gives
the row up when the lease is no longer its own. The checks:

- every fault happened (each worker kill where it was aimed), every killed process was started
  again and is running;
- ``titanpost admin verify`` exits 0; every move a client was told was applied (by the API, a
  link or the game page) is in the log once, and no player move is there that no client made;
  each game's log is as long as its client saw; each instance serves every game's state as a
  replay of its log;
- no Message-ID arrived twice at the sink; every row marked sent arrived exactly once, to its
  recipient; a row settled ``unconfirmed:`` (its sender died after handing the message over,
  before the relay answered: never sent again) arrived at most once; nothing else arrived;
  no row is left unsent;
- every pending deadline is still pending: each unfinished game's open decision has exactly
  its open timeout rows (one per seat to act, at the decision's log length, not due within
  the hour), no game has open rows of an earlier decision or a finished game any, and the
  clock never fired;
- the database cut answered 503 with Retry-After and the instances recovered by themselves;
- no client error.

It exits 0 only when every check holds.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import shutil
import sys
import tempfile
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager, suppress
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import psycopg
import requests
from sqlalchemy.engine import make_url

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.features.clock.rows import TIMEOUT_KINDS
from app.mail.notify import CONTINUATION_DELAY
from app.mail.send import LEASE, UNCONFIRMED
from bench import api as bench
from bench import load
from deploy import scaleout

GAP = 2.0
"""Seconds at least between the end of one fault and the start of the next."""
RECOVERY = 30.0
"""Seconds every instance has to serve again after the database is back."""
WORKER_KILLS = ("in SMTP after the data", "holding claimed mail", "in SMTP before the data",
                "at a random moment")


@dataclass
class FaultConfig(load.LoadConfig):
    games: int = 40
    clients: int = 8
    seconds: float = 90.0
    web_kills: int = 3
    worker_kills: int = 4
    cut_seconds: float = 5.0
    fault_seed: int = 1
    drain_timeout: float = 120.0
    settle_seconds: float = scaleout.SETTLED
    """Seconds after a worker kill (or the cut) before the rows leased until then are taken
    for abandoned and made due (a live worker's batch claimed before is sent by then)."""
    window: tuple[float, float] = (0.1, 0.7)
    """The share of ``seconds`` in which the faults start."""
    tail_seconds: float | None = None
    """Stop the play this long after the last fault, however long the faults took (each
    waits for its moment); None: play on to ``seconds``."""
    aim_seconds: float = 5.0
    """How long a web kill waits for a written, unanswered move to aim at."""


@dataclass
class Fault:
    what: str
    """"web", "worker" or "cut"."""
    at: float
    """Seconds into the play."""
    how: str = ""
    done: str = ""
    """What happened (empty: it did not)."""
    ok: bool = False
    """It happened as meant (the kill was aimed as it says)."""


@dataclass
class CutReport:
    during: list[str] = field(default_factory=list)
    """"<status> <Retry-After>" of each probe while the database was away."""
    recovered_after: float | None = None
    restarted: list[str] = field(default_factory=list)


@dataclass
class FaultReport(scaleout.Checks):
    config: FaultConfig
    stats: bench.Stats = field(default_factory=bench.Stats)
    wall: float = 0.0
    faults: list[Fault] = field(default_factory=list)
    cut: CutReport | None = None
    released: int = 0
    outbox: dict[str, int] = field(default_factory=dict)
    mail: dict[str, int] = field(default_factory=dict)
    checks: list[scaleout.Check] = field(default_factory=list)
    log_dir: Path | None = None
    process_groups: list[int] = field(default_factory=list)



# ---------------------------------------------------------------------- the database proxy


class DatabaseProxy:
    """A TCP proxy on 127.0.0.1 in front of PostgreSQL (asyncio, in a thread of its own) that
    can be cut: every connection through it closed at once, new ones refused, until it is
    restored on the same port."""

    def __init__(self) -> None:
        self.port = bench.free_port()
        self._target: tuple[str, int] = ("127.0.0.1", 5432)
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True,
                                        name="database-proxy")
        self._server: asyncio.Server | None = None
        self._open: set[asyncio.StreamWriter] = set()

    def start_for(self, url: str) -> str:
        """Proxy to the server of database ``url``; the URL that goes through the proxy."""
        parsed = make_url(url)
        self._target = (parsed.host or "127.0.0.1", parsed.port or 5432)
        self._thread.start()
        self.restore()
        return parsed.set(host="127.0.0.1", port=self.port).render_as_string(
            hide_password=False)

    def cut(self) -> None:
        asyncio.run_coroutine_threadsafe(self._cut(), self._loop).result(10)

    def restore(self) -> None:
        asyncio.run_coroutine_threadsafe(self._listen(), self._loop).result(10)

    def close(self) -> None:
        if self._thread.is_alive():
            with suppress(TimeoutError):
                self.cut()
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(5)

    async def _listen(self) -> None:
        self._server = await asyncio.start_server(self._pipe, "127.0.0.1", self.port,
                                                  reuse_address=True)

    async def _cut(self) -> None:
        if self._server is not None:
            self._server.close()
            self._server = None
        for writer in list(self._open):
            writer.transport.abort()
        self._open.clear()

    async def _pipe(self, client_in: asyncio.StreamReader,
                    client_out: asyncio.StreamWriter) -> None:
        try:
            server_in, server_out = await asyncio.open_connection(*self._target)
        except OSError:
            client_out.transport.abort()
            return
        self._open.update((client_out, server_out))
        await asyncio.gather(self._copy(client_in, server_out),
                             self._copy(server_in, client_out))
        self._open.difference_update((client_out, server_out))

    @staticmethod
    async def _copy(source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
        try:
            while data := await source.read(65536):
                sink.write(data)
                await sink.drain()
        except (ConnectionError, OSError):
            pass
        finally:
            sink.transport.abort()  # one side gone: so is the other


# ---------------------------------------------------------------------- the faults


def plan(config: FaultConfig) -> list[Fault]:
    """The faults of the run, at seeded random points of the play window, in time order."""
    rnd = random.Random(config.fault_seed)
    low, high = (share * config.seconds for share in config.window)
    faults = [Fault("web", rnd.uniform(low, high)) for _ in range(config.web_kills)]
    faults += [Fault("worker", rnd.uniform(low, high), WORKER_KILLS[i % len(WORKER_KILLS)])
               for i in range(config.worker_kills)]
    if config.cut_seconds > 0:
        faults.append(Fault("cut", rnd.uniform(low, high)))
    return sorted(faults, key=lambda fault: fault.at)


class Saboteur:
    """Carries out the plan while the clients play, in two lanes (threads): the web kills and
    the cut in one, the worker kills in the other, each fault of a lane after the one before
    it has ended (a web instance answers again, the cut has healed). A worker may be killed
    while the database is cut, but is started again only after it is back.
    The faults' clock starts once mail flows (the first decision mail reached the sink; at
    once when nobody plays by mail), so that the first kills do not fall on the very first
    mails. ``tail_seconds`` after the last fault the play is stopped (when set; the play's
    own ``seconds``, from the first mail, could cut the faults short). Where no decision mail
    comes within ``mail_wait``, the play stops by itself and no fault happens."""

    def __init__(self, config: FaultConfig, deployment: scaleout.Deployment,
                 sink: scaleout.Sink, proxy: DatabaseProxy, conninfo: str,
                 table: load.Table, report: FaultReport, echo: Callable[[str], None]) -> None:
        self.config = config
        self.deployment = deployment
        self.sink = sink
        self.proxy = proxy
        self.conninfo = conninfo
        self.table = table
        self.report = report
        self.echo = echo
        self.rnd = random.Random(config.fault_seed + 1)
        self.releases: list[tuple[float, datetime]] = []
        """(when, leased before) of the lease waits still to be skipped."""
        self.last_fault: datetime | None = None
        self.t0 = time.monotonic()
        self._turns = threading.Condition()
        self._busy = 0
        self._cutting = False
        lanes = [[f for f in report.faults if f.what != "worker"],
                 [f for f in report.faults if f.what == "worker"]]
        self._lanes = [threading.Thread(target=self._lane, args=(lane,), daemon=True,
                                        name=f"saboteur-{i}") for i, lane in enumerate(lanes)]
        self._keeper = threading.Thread(target=self._keep, daemon=True, name="lease-keeper")
        self._warm = threading.Event()
        self._offset = 0.0
        """Seconds into the play when mail began to flow (the faults' clock starts)."""

    def __enter__(self) -> Saboteur:
        self.t0 = time.monotonic()
        for thread in [*self._lanes, self._keeper]:
            thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        for thread in [*self._lanes, self._keeper]:
            thread.join(60)
        self.sink.on_data = self.sink.on_rcpt = None

    def _elapsed(self) -> float:
        return time.monotonic() - self.t0

    def _say(self, line: str) -> None:
        self.echo(f"  {self._elapsed():5.1f} s: {line}")

    def _lane(self, faults: list[Fault]) -> None:
        stop = self.table.stop
        while not self._warm.wait(0.1):
            if stop.is_set():
                return
        free_from = 0.0
        for fault in faults:
            start = max(self._offset + fault.at, free_from)
            if stop.wait(max(0.0, start - self._elapsed())):
                return
            try:
                {"web": self._kill_web, "worker": self._kill_worker,
                 "cut": self._cut_database}[fault.what](fault)
            except Exception as exc:  # the run goes on; the check reports the fault
                fault.done = f"failed: {type(exc).__name__}: {exc}"
                self._say(f"{fault.what} fault failed: {exc}")
            free_from = self._elapsed() + GAP

    @contextmanager
    def _turn(self, *, exclusive: bool) -> Iterator[None]:
        with self._turns:
            while self._cutting or (exclusive and self._busy):
                self._turns.wait(0.1)
            if exclusive:
                self._cutting = True
            else:
                self._busy += 1
        try:
            yield
        finally:
            with self._turns:
                if exclusive:
                    self._cutting = False
                else:
                    self._busy -= 1
                self._turns.notify_all()

    def _keep(self) -> None:
        """Skip the lease waits when they fall due; stop the play ``tail_seconds`` after the
        last fault."""
        stop = self.table.stop
        while not (self.config.link_share == 0 or self.table.mailbox.decision_mails):
            if stop.wait(0.1):
                return
        self._offset = self._elapsed()
        self._warm.set()
        self._say("the first decision mail arrived: the faults' clock starts")
        while not stop.wait(0.2):
            self._release_due_leases()
            tail = self.config.tail_seconds
            if tail is not None and not any(lane.is_alive() for lane in self._lanes):
                if stop.wait(tail):
                    return
                self._say(f"{tail:.0f} s after the last fault: the play stops")
                stop.set()

    # -------------------------------------------------------------- web instances

    def _kill_web(self, fault: Fault) -> None:
        web = self.rnd.choice(self.deployment.webs())
        fault.ok = scaleout.kill_web_aimed(self.deployment, web, self.table.backends,
                                           self.conninfo, self.table.stop,
                                           within=self.config.aim_seconds)
        moves, when = self.table.progress.moves, self._elapsed()
        fault.how = ("after it wrote a move, before the answer arrived" if fault.ok
                     else "(no move was seen written and unanswered)")
        self._say(f"SIGKILL to {web.name} {fault.how}, after {moves} moves")
        self.table.stop.wait(self.rnd.uniform(0.5, 2.0))
        started = time.monotonic()
        again = self.deployment.restart(web)
        fault.done = (f"{web.name} killed at {when:.1f} s {fault.how}; started again, "
                      f"answering after {time.monotonic() - started:.1f} s (pid "
                      f"{again.popen.pid})")
        self._say(f"{web.name} started again and answering (pid {again.popen.pid})")

    # -------------------------------------------------------------- workers

    def _kill_worker(self, fault: Fault) -> None:
        wait = self.config.mail_wait
        if fault.how == "holding claimed mail":
            worker, fault.ok = scaleout.kill_busy_worker(self.deployment, self.conninfo,
                                                         self.table.stop, within=wait,
                                                         since=self.last_fault)
            said = ("while it held claimed outbox rows it had not sent" if fault.ok
                    else f"(no outbox rows were claimed within {wait:.0f} s)")
        elif fault.how.startswith("in SMTP"):
            worker, fault.ok = self._kill_in_smtp(after_data="after" in fault.how)
            said = (f"inside its SMTP conversation, {fault.how[len('in SMTP '):]}" if fault.ok
                    else f"(no worker spoke SMTP within {wait:.0f} s)")
        else:
            worker = self.rnd.choice([w for w in self.deployment.workers() if w.alive()])
            self.deployment.kill(worker)
            fault.ok, said = True, "at a random moment"
        killed_at = datetime.now(UTC)
        when, moves = self._elapsed(), self.table.progress.moves
        self.last_fault = killed_at
        with self._turns:
            self.releases.append((self._elapsed() + self.config.settle_seconds, killed_at))
        self._say(f"SIGKILL to {worker.name} {said}, after {moves} moves, "
                  f"{self.sink.count()} mails received")
        with self._turn(exclusive=False):  # not while the database is cut
            again = self.deployment.restart(worker)
        fault.done = f"{worker.name} killed at {when:.1f} s {said}; started again"
        self._say(f"{worker.name} started again (pid {again.popen.pid})")

    def _kill_in_smtp(self, *, after_data: bool) -> tuple[scaleout.Process, bool]:
        """Kill the worker whose SMTP connection the sink is serving (from the sink's DATA or
        RCPT handler), when one comes within ``mail_wait``; else a random live worker."""
        killed: list[scaleout.Process] = []
        done = threading.Event()

        def in_smtp(peer_port: int) -> None:
            if done.is_set():
                return
            live = [w for w in self.deployment.workers() if w.alive()]
            pid = scaleout.pid_of_local_port(peer_port, [w.popen.pid for w in live])
            target = next((w for w in live if w.popen.pid == pid), None)
            if target is None:
                return
            self.deployment.kill(target)
            killed.append(target)
            done.set()

        if after_data:
            self.sink.on_data = in_smtp
        else:
            self.sink.on_rcpt = in_smtp
        until = time.monotonic() + self.config.mail_wait
        try:
            while (not done.wait(0.2) and not self.table.stop.is_set()
                   and time.monotonic() < until):
                pass
        finally:
            self.sink.on_data = self.sink.on_rcpt = None
            done.set()
        if killed:
            return killed[0], True
        worker = self.rnd.choice([w for w in self.deployment.workers() if w.alive()])
        self.deployment.kill(worker)
        return worker, False

    def _release_due_leases(self) -> None:
        now = self._elapsed()
        with self._turns:
            due = [e for e in self.releases if e[0] <= now]
            for entry in due:
                self.releases.remove(entry)
        for entry in due:
            released = release_leases(self.conninfo, entry[1])
            self.report.released += released
            if released:
                self._say(f"made {released} row(s) leased before the fault at "
                          f"{entry[1]:%H:%M:%S} due now (skipping their 5-minute lease)")

    # -------------------------------------------------------------- the database

    def _cut_database(self, fault: Fault) -> None:
        with self._turn(exclusive=True):
            self._cut_now(fault)

    def _cut_now(self, fault: Fault) -> None:
        cut = self.report.cut = CutReport()
        when = self._elapsed()
        probes = self._probe_paths()
        before = {p.name: p.popen.pid for p in self.deployment.webs() if p.alive()}
        self.proxy.cut()
        self._say(f"database cut: every connection closed, new ones refused, for "
                  f"{self.config.cut_seconds:.0f} s")
        until = time.monotonic() + self.config.cut_seconds
        with requests.Session() as http:
            while time.monotonic() < until:
                cut.during += [_probe(http, url, headers) for url, headers in probes]
                time.sleep(0.5)
            self.proxy.restore()
            healed = datetime.now(UTC)
            self._say("database reachable again")
            cut.recovered_after = _recovery(http, [url for url, _ in probes])
        self.last_fault = healed
        with self._turns:
            self.releases.append((self._elapsed() + self.config.settle_seconds, healed))
        after = {p.name: p.popen.pid for p in self.deployment.webs() if p.alive()}
        cut.restarted = sorted(name for name, pid in after.items() if before.get(name) != pid)
        statuses = Counter(status.split()[0] for status in cut.during)
        fault.ok = True
        fault.how = (f"{self.config.cut_seconds:.0f} s; probes meanwhile: "
                     + ", ".join(f"{n} x {status}" for status, n in statuses.items()))
        fault.done = f"database cut at {when:.1f} s for {fault.how}"
        recovered = (f"every instance served again {cut.recovered_after:.1f} s after"
                     if cut.recovered_after is not None else "NOT served again within 30 s")
        self._say(recovered)

    def _probe_paths(self) -> list[tuple[str, dict[str, str]]]:
        """A game through the API (JSON) and as a page (HTML), on every instance."""
        with psycopg.connect(self.conninfo) as conn:
            row = conn.execute("SELECT uid FROM games ORDER BY id LIMIT 1").fetchone()
        uid = str(row[0]) if row else "0" * 32
        return [(url, headers) for web in self.deployment.webs() if web.base
                for url, headers in ((f"{web.base}/api/games/{uid}", {}),
                                     (f"{web.base}/games/{uid}", {"Accept": "text/html"}))]


def _probe(http: requests.Session, url: str, headers: dict[str, str]) -> str:
    try:
        answer = http.get(url, headers=headers, timeout=10)
    except requests.RequestException as exc:
        return f"{type(exc).__name__} -"
    return f"{answer.status_code} {answer.headers.get('Retry-After', '-')}"


def _recovery(http: requests.Session, urls: list[str]) -> float | None:
    """Seconds until every URL answered 200 twice in a row (None: not within RECOVERY)."""
    start = time.monotonic()
    good: Counter[str] = Counter()
    while time.monotonic() - start < RECOVERY:
        for url in urls:
            if good[url] < 2:
                good[url] = good[url] + 1 if _probe(http, url, {}).startswith("200") else 0
        if all(good[url] >= 2 for url in urls):
            return time.monotonic() - start
        time.sleep(0.2)
    return None


RELEASE = """
UPDATE outbox SET next_attempt_at = now()
WHERE sent_at IS NULL AND next_attempt_at > now() AND next_attempt_at - %(lease)s <= %(before)s
  AND NOT (attempts = 0 AND abs(extract(epoch FROM next_attempt_at - created_at) - %(delay)s) < 2)
RETURNING id
"""


def release_leases(conninfo: str, before: datetime) -> int:
    """Make due the unsent rows leased before ``before`` (not those of the continuation
    delay): the wait for a dead sender's lease, skipped."""
    with psycopg.connect(conninfo) as conn:
        return len(conn.execute(RELEASE, {"lease": LEASE, "before": before,
                                          "delay": CONTINUATION_DELAY.total_seconds()})
                   .fetchall())


def settle_outbox(deployment: scaleout.Deployment, conninfo: str, sink: scaleout.Sink,
                  config: FaultConfig, echo: Callable[[str], None]) -> dict[str, int]:
    """After the play: every unsent row that is not due yet (held back by the continuation
    delay, leased by a killed sender or by a send that failed in the cut, or waiting after a
    failed attempt) is made due, one more sender (``titanpost mail send --once``) runs beside
    the workers, and the outbox is drained until nothing is due and the sink is quiet.

    Making a row due that a live worker still holds cannot double its mail: the sender
    renews its lease just before it hands a message over and gives the row up when the lease
    is no longer its own."""
    t0 = time.monotonic()
    _ids, held = scaleout.held_back(conninfo, None)
    with psycopg.connect(conninfo) as conn:
        made_due = len(conn.execute("UPDATE outbox SET next_attempt_at = now() WHERE sent_at "
                                    "IS NULL AND next_attempt_at > now() RETURNING id")
                       .fetchall())
    echo(f"outbox at the end of the play: made {made_due} row(s) due now (" + ", ".join(
        f"{what} {n}" for what, n in held.items()) + "; their waits skipped)")
    sent = deployment.run("mail", "send", "--once")
    if sent.returncode != 0:
        echo(f"titanpost mail send --once failed: {(sent.stdout + sent.stderr).strip()[-500:]}")
    state = scaleout.drain(conninfo, sink, config.drain_timeout, lambda: None)
    echo(f"outbox settled after {time.monotonic() - t0:.1f} s: " + ", ".join(
        f"{name} {state[name]}" for name in scaleout.STATE_NAMES))
    return state


# ---------------------------------------------------------------------- the checks


def check_faults(report: FaultReport, deployment: scaleout.Deployment) -> None:
    config = report.config
    wanted = config.web_kills + config.worker_kills + (config.cut_seconds > 0)
    happened = [fault for fault in report.faults if fault.done
                and not fault.done.startswith("failed")]
    report.check("every fault happened during the play", len(happened) == wanted,
                 f"{len(happened)} of {wanted}"
                 + "".join(f"; {fault.what} {fault.done}" for fault in report.faults
                           if not fault.done or fault.done.startswith("failed")))
    missed = [f"{fault.what} {fault.how}" for fault in report.faults
              if fault.what == "worker" and fault.how != "at a random moment" and not fault.ok]
    report.check("each worker kill landed where it was aimed (holding claimed unsent mail; "
                 "inside SMTP after the data; inside SMTP before it)", not missed,
                 "; ".join(missed))
    aimed = sum(1 for fault in report.faults if fault.what == "web" and fault.ok)
    report.process_groups = [p.popen.pid for p in deployment.processes]
    dead = [p.name for p in deployment.webs() + deployment.workers() if not p.alive()]
    restarted = sum(1 for p in deployment.processes if p.replaced)
    report.check("every killed process was started again and the deployment runs on",
                 not dead and restarted == config.web_kills + config.worker_kills,
                 f"{restarted} processes started again ({aimed} of {config.web_kills} web "
                 "kills aimed at a written, unanswered move)"
                 + (f"; not running: {', '.join(dead)}" if dead else ""))


def check_cut(report: FaultReport) -> None:
    cut = report.cut
    if report.config.cut_seconds <= 0:
        return
    if cut is None:
        report.check("the database cut answered 503 with Retry-After", False, "no cut")
        return
    answered = Counter(cut.during)
    report.check("while the database was cut, every request answered 503 with Retry-After "
                 "(API and pages)", bool(cut.during) and all(
                     status.startswith("503 ") and not status.endswith(" -")
                     for status in cut.during),
                 ", ".join(f"{n} x {status}" for status, n in answered.most_common()))
    report.check("after the cut every instance served again by itself (none restarted)",
                 cut.recovered_after is not None and not cut.restarted,
                 (f"after {cut.recovered_after:.1f} s" if cut.recovered_after is not None
                  else f"not within {RECOVERY:.0f} s")
                 + (f"; restarted: {', '.join(cut.restarted)}" if cut.restarted else ""))


def check_mail_once(conninfo: str, sink: scaleout.Sink, report: FaultReport) -> None:
    """The outbox against the sink, with handed-over rows allowed to have arrived once or not
    at all (see the module documentation)."""
    with psycopg.connect(conninfo) as conn:
        rows = conn.execute("SELECT message_id, recipient, sent_at IS NOT NULL, "
                            "coalesce(last_error, '') FROM outbox").fetchall()
    delivered: dict[str, str] = {}
    unconfirmed: dict[str, str] = {}
    unsent: list[str] = []
    for message_id, recipient, sent, error in rows:
        if not sent:
            unsent.append(f"{message_id} ({error or 'never tried'})")
        elif error.startswith(UNCONFIRMED):
            unconfirmed[str(message_id)] = str(recipient)
        elif not error.startswith(scaleout.SKIPPED):
            delivered[str(message_id)] = str(recipient)
    messages = sink.messages()
    counts = Counter(m.message_id for m in messages)
    doubled = [f"{mid} x{n}" for mid, n in counts.items() if n > 1]
    report.check("no mail arrived twice (each Message-ID at most once at the sink)", not doubled,
                 f"{len(messages):,} messages, {len(counts):,} Message-IDs"
                 + (f"; twice or more: {scaleout._sample(doubled)}" if doubled else ""))
    lost = [mid for mid in delivered if counts[mid] != 1]
    wrong = [m.message_id for m in messages if m.message_id in delivered
             and list(m.recipients) != [delivered[m.message_id]]]
    report.check("every row marked sent arrived exactly once, to its recipient",
                 not lost and not wrong,
                 f"{len(delivered):,} rows" + (f"; not once: {scaleout._sample(lost)}"
                                               if lost else "")
                 + (f"; to someone else: {scaleout._sample(wrong)}" if wrong else ""))
    arrived = sum(1 for mid in unconfirmed if counts[mid] == 1)
    report.mail = {"delivered": len(delivered), "unconfirmed": len(unconfirmed),
                   "unconfirmed arrived": arrived, "received": len(messages)}
    report.check("every row settled unconfirmed (handed over, no answer) arrived at most once",
                 all(counts[mid] <= 1 for mid in unconfirmed),
                 f"{len(unconfirmed)} such rows: {arrived} arrived, "
                 f"{len(unconfirmed) - arrived} did not")
    stray = sorted(set(counts) - set(delivered) - set(unconfirmed))
    report.check("nothing arrived that the outbox does not mark sent", not stray,
                 scaleout._sample(stray) if stray else "")
    report.check("no outbox row is left unsent", not unsent,
                 scaleout._sample(unsent) if unsent else f"{len(rows):,} rows")


FIRED = ("timed out", "played while away", "sent", "sent before")
"""Results of a deadline row the clock acted on."""
OPEN_DEADLINES = """
SELECT g.uid, d.seq, d.seat, d.kind, d.due_at > now() + interval '1 hour'
FROM deadlines d JOIN games g ON g.id = d.game_id
WHERE d.done_at IS NULL
"""


def check_deadlines(conninfo: str, base: str, report: FaultReport) -> None:
    """Each unfinished game's decision has its open timeout rows and nothing else is open."""
    with psycopg.connect(conninfo) as conn:
        games = {str(uid): str(status) for uid, status in
                 conn.execute("SELECT uid, status FROM games WHERE started_at IS NOT NULL")}
        open_rows = conn.execute(OPEN_DEADLINES).fetchall()
        fired = conn.execute("SELECT count(*) FROM deadlines WHERE claimed_by IS NOT NULL "
                             "OR result = ANY(%s)", (list(FIRED),)).fetchone()
    timeouts: dict[str, list[tuple[int, int]]] = defaultdict(list)
    stale: list[str] = []
    reminders = 0
    for uid, seq, seat, kind, far in open_rows:
        if kind in TIMEOUT_KINDS:
            timeouts[str(uid)].append((int(seq), int(seat)))
            if not far:
                stale.append(f"{str(uid)[:8]} seat {seat} due within the hour")
        else:
            reminders += 1
    wrong: list[str] = []
    pending = 0
    with requests.Session() as http:
        for uid, status in games.items():
            expected: list[tuple[int, int]] = []
            if status == "active":
                body = http.get(f"{base}/api/games/{uid}", timeout=30).json()
                expected = [(int(body["decision_seq"]), int(seat))
                            for seat in body["game"]["to_act"]]
                pending += len(expected)
            if sorted(timeouts.get(uid, [])) != sorted(expected):
                wrong.append(f"{uid[:8]} ({status}): open {sorted(timeouts.get(uid, []))}, "
                             f"pending {expected}")
    report.check("every pending deadline is still pending: each unfinished game's open "
                 "decision has its open timeout rows, none lost, doubled or left over",
                 not wrong and not stale and pending > 0,
                 f"{pending} open decisions of {sum(1 for s in games.values() if s == 'active')}"
                 f" unfinished games, {reminders} open reminder rows"
                 + (f"; wrong: {scaleout._sample(wrong)}" if wrong else "")
                 + (f"; {scaleout._sample(stale)}" if stale else ""))
    count = int(fired[0]) if fired else 0
    report.check("the clock fired nothing (no deadline was due)", count == 0,
                 f"{count} rows claimed or closed otherwise than answered" if count else "")


# ---------------------------------------------------------------------- the run


def run(config: FaultConfig, echo: Callable[[str], None] = print) -> FaultReport:
    """Deploy behind the proxy, play while the faults happen, drain, check."""
    report = FaultReport(config, faults=plan(config))
    log_dir = Path(tempfile.mkdtemp(prefix="titanpost-faults-"))
    report.log_dir = log_dir
    deployment_config = config.deployment()
    deployment_config.drain_timeout = config.drain_timeout
    with ExitStack() as stack:
        proxy = DatabaseProxy()
        stack.callback(proxy.close)
        deployment, sink, _mailbox, conninfo = stack.enter_context(load.deployed(
            deployment_config, log_dir, echo, app_database=proxy.start_for))
        stack.callback(lambda: setattr(report, "process_groups",
                                       [p.popen.pid for p in deployment.processes]))
        bases = [web.base for web in deployment.webs() if web.base]
        table = load.Table(bench.Backends(bases), _mailbox, config, bench.Progress(),
                           threading.Event())
        echo(f"every process reaches PostgreSQL through a proxy on 127.0.0.1:{proxy.port}; "
             f"the faults: " + ", ".join(f"{f.what}{' ' + f.how if f.how else ''} at "
                                        f"{f.at:.1f} s" for f in report.faults))
        tail = config.tail_seconds
        echo(f"playing {config.games} games at once ({config.link_share:.0%} of the seats by "
             f"mail links) with {config.clients} client threads, "
             + (f"until {tail:.0f} s after the last fault" if tail is not None
                else f"for {config.seconds:.0f} s once mail flows"))
        with Saboteur(config, deployment, sink, proxy, conninfo, table, report, echo):
            report.stats, report.wall = load.play(table, echo=echo, sink=sink,
                                                  until_stopped=tail is not None)
        settled = scaleout.Report(deployment_config, stats=report.stats)
        report.outbox = settle_outbox(deployment, conninfo, sink, config, echo)
        settled.outbox = dict(report.outbox)
        echo("checking")
        check_faults(report, deployment)
        check_cut(report)
        load.check_verify(deployment, report.check)
        scaleout.check_moves(conninfo, settled)
        report.checks += settled.checks
        load.check_replays(conninfo, bases, report.check)
        check_mail_once(conninfo, sink, report)
        check_deadlines(conninfo, bases[0], report)
        stats = report.stats
        report.check("no client error", stats.errors == 0,
                     f"{stats.errors} errors" if stats.errors else "")
    if report.ok and not config.keep_logs:
        shutil.rmtree(log_dir, ignore_errors=True)
        report.log_dir = None
    return report


# ---------------------------------------------------------------------- output


def print_report(report: FaultReport, echo: Callable[[str], None] = print) -> None:
    config = report.config
    echo(f"figures ({config.instances} instances x {config.web_workers} gunicorn workers x "
         f"{config.threads} threads, {config.workers} workers, {config.clients} client "
         "threads, faults included):")
    load.print_figures(report.stats, report.wall, echo)
    echo("  faults:")
    for fault in report.faults:
        echo(f"    {fault.what:6} {fault.done or 'did not happen'}")
    if report.released:
        echo(f"  leases skipped:    {report.released} rows made due early")
    mail, outbox = report.mail, report.outbox
    echo(f"  mails:             {mail.get('received', 0):,} received by the sink; outbox "
         f"{outbox.get('rows', 0):,} rows: {mail.get('delivered', 0):,} sent, "
         f"{mail.get('unconfirmed', 0)} settled unconfirmed "
         f"({mail.get('unconfirmed arrived', 0)} of them arrived), "
         f"{outbox.get('skipped', 0):,} skipped")
    echo("checks:")
    for check in report.checks:
        echo(f"  [{'ok' if check.ok else 'FAIL'}] {check.name}"
             + (f": {check.detail}" if check.detail else ""))
    if report.log_dir is not None:
        echo(f"process logs kept in {report.log_dir}")
    echo("all checks hold" if report.ok else "SOME CHECKS FAILED")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    defaults = FaultConfig()
    load.add_play_options(parser, defaults)
    parser.add_argument("--web-kills", type=int, default=defaults.web_kills,
                        help="times a web instance is killed and started again")
    parser.add_argument("--worker-kills", type=int, default=defaults.worker_kills,
                        help="times a worker is killed and started again")
    parser.add_argument("--cut-seconds", type=float, default=defaults.cut_seconds,
                        help="how long the database is away (0: not at all)")
    parser.add_argument("--fault-seed", type=int, default=defaults.fault_seed,
                        help="where the faults fall (the same seed, the same points)")
    parser.add_argument("--drain-timeout", type=float, default=defaults.drain_timeout)
    parser.add_argument("--tail-seconds", type=float, default=None,
                        help="stop the play this long after the last fault, however long "
                             "the faults took (default: play on to --seconds)")
    parser.add_argument("--settle-seconds", type=float, default=defaults.settle_seconds,
                        help="after a worker kill or the cut, wait this long before making "
                             "the rows leased until then due (skipping their 5-minute lease)")
    args = parser.parse_args()
    load.check_play_options(parser, args)
    if args.instances < 2 or args.workers < 2:
        parser.error("the faults need --instances 2 and --workers 2 or more (one of each "
                     "stays up while the other is down)")
    config = FaultConfig(**load.play_config(args), web_kills=args.web_kills,
                         worker_kills=args.worker_kills, cut_seconds=args.cut_seconds,
                         fault_seed=args.fault_seed, drain_timeout=args.drain_timeout,
                         settle_seconds=args.settle_seconds, tail_seconds=args.tail_seconds)

    scaleout.run_script(run, print_report, config)


if __name__ == "__main__":
    main()
