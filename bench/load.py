"""Load: many concurrent games through the JSON API and the links in the mails, on gunicorn and
PostgreSQL, with the real outbox -> worker -> SMTP path in between.

    python3 bench/load.py [--games 200] [--clients 20] [--seconds 120] [--link-share 0.33]
                          [--instances 2] [--web-workers 2] [--threads 4] [--workers 2]
                          [--mail-seconds 10] [--mail-wait 150] [--seed 1] [--keep-logs]
                          [--database-url URL | --pg ADMIN_URL]

It deploys what ``deploy/scaleout.py`` deploys (a fresh PostgreSQL database, ``--instances``
gunicorn instances, ``--workers`` ``titanpost worker`` processes, an SMTP sink in this process)
and then plays ``--games`` three-seat games at once, each with a clock (48-hour deadlines and
two reminders, so every decision has its deadline rows), for ``--seconds`` counted from the
first decision mail (so that a slow start does not leave the mail players out).
``--clients`` threads share the games; each thread takes one step of each of its games in turn
(one move, or a look for the mail a player waits for), so every game is in play at once.

A seat plays in one of two ways (``--link-share`` of the seats, spread over the games, play by
mail; the others by the API):

- **API**: with its bearer token, as bench/api.py's clients do: the options, then
  ``POST /api/games/<id>/moves`` with ``expected_seq``.
- **Mail links**: the player waits for the mail that asks for the decision to reach the SMTP
  sink (written to the outbox in the move's transaction, rendered and sent by a worker), reads
  the option links in its text part, picks one, opens it (``GET /l/<token>``: the confirm page)
  and presses its button (the form's POST with its CSRF token, in this seat's own cookie
  session, as a browser). The answer sends the browser to the game page; the rest of that
  player's turn is played there (``POST /games/<id>/move`` from the page's form), as a mail
  player does: the steps that continue one's own turn are mailed only after a delay
  (``CONTINUATION_DELAY``) so that a player who goes on in the browser is not sent one mail
  per step.

Requests go round-robin over the instances (bench/api.py's ``Backends``; the links' paths too,
as a load balancer would send them). Each mail player's browser names an address of its own in
``X-Forwarded-For`` (the instances trust one proxy in front, as behind nginx), so the
per-address rate limit of the link pages counts players, not the whole load from 127.0.0.1.
It prints moves/s (by the API, by links, on the game page, and together), the p50/p99 latency
of every kind of request and the time players waited for their mail, errors by kind, and
where the CPU went (gunicorn, workers, this script, the whole machine). Then the checks:
``titanpost admin verify`` exits 0 (every game's hash chain and snapshots against a replay of
its log), and every game's state as each instance serves it (``GET /api/games/<id>``) equals a
replay of its log from the initial state in this process (not through the server's cache or
snapshots); no client error. It exits 0 only when every check holds. ``deploy/faults.py``
plays the same games while it breaks things.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager, suppress
from dataclasses import dataclass, field
from email import policy
from email.parser import BytesParser
from html.parser import HTMLParser
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import psycopg
import requests

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.games import ruleset
from app.mail.notify import decision_kinds
from app.service import LogReplay
from bench import api as bench
from deploy import scaleout

CLOCK = {"deadline_hours": 48, "reaction_hours": 12, "reminders": ["50%", "2h"]}
"""Every game's clock: each decision gets a timeout row and two reminder rows."""
MAIL_KEPT = 4
"""Decision mails kept per seat (the newest): older ones can no longer be answered."""

DECISION_MAIL = re.compile(
    r"^<(?P<game>[0-9a-f]{32})\.(?P<seq>\d+)\.(?P<seat>\d+)\.(?P<kind>[a-z_-]+)@")
"""A Message-ID ``<game.seq.seat.kind@domain>`` (app.mail.notify.message_id)."""
OPTION_LINK = re.compile(
    r"^\s*reply:[ \t]*(?P<option>\S[^\r\n]*?)[ \t]*\r?\n\s*link:[ \t]*(?P<url>\S+)", re.MULTILINE)
"""One option in a mail's text part: the words to reply with, then its link."""
COMPOSER = re.compile(r'<form[^>]*\bid="composer".*?</form>', re.DOTALL)
REFUSED = re.compile(r'\bdata-reason="(?P<reason>[a-z-]+)"')


# ---------------------------------------------------------------------- settings


@dataclass
class LoadConfig:
    games: int = 200
    clients: int = 20
    seconds: float = 120.0
    link_share: float = 1 / 3
    instances: int = 2
    web_workers: int = 2
    threads: int = 4
    workers: int = 2
    mail_seconds: int = 10
    """How often each worker sends the outbox (deploy/scaleout.py's ``mail_seconds``)."""
    mail_wait: float = 150.0
    seed: int = 1
    database_url: str | None = None
    pg: str = "postgresql://postgres@127.0.0.1:5432/postgres"
    keep_logs: bool = False

    def deployment(self) -> scaleout.Config:
        """The deployment's part, in deploy/scaleout.py's terms (nothing killed there)."""
        return scaleout.Config(
            games=self.games, clients=self.clients, seconds=self.seconds,
            instances=self.instances, web_workers=self.web_workers, threads=self.threads,
            workers=self.workers, mail_seconds=self.mail_seconds, kill_web_at=None,
            kill_worker_at=None, seed=self.seed, database_url=self.database_url, pg=self.pg,
            keep_logs=self.keep_logs)


def link_seats(number: int, share: float, rnd: random.Random) -> frozenset[int]:
    """Which seats of game ``number`` play by mail: ``share`` of all seats, spread evenly
    over the games (game n gets its part of the running total), at random places."""
    count = int((number + 1) * bench.SEATS * share) - int(number * bench.SEATS * share)
    return frozenset(rnd.sample(range(bench.SEATS), min(bench.SEATS, count)))


# ---------------------------------------------------------------------- the mails


class Mailbox:
    """The decision mails the SMTP sink received, read as their players read them: the
    option links of the text part, by game, seat and the decision's log length."""

    def __init__(self) -> None:
        self._mails: dict[tuple[str, int], dict[int, dict[str, str]]] = {}
        self._changed = threading.Condition()
        self.decision_mails = 0

    def deliver(self, received: scaleout.Received, raw: bytes) -> None:
        """The sink's listener: keep the options of a decision mail."""
        found = DECISION_MAIL.match(received.message_id)
        if found is None or found["kind"] not in decision_kinds():
            return
        message = BytesParser(policy=policy.default).parsebytes(raw)
        part = message.get_body(("plain",))
        text = part.get_content() if part is not None else ""
        links = {m["option"]: m["url"] for m in OPTION_LINK.finditer(text)}
        key = (found["game"], int(found["seat"]))
        with self._changed:
            self.decision_mails += 1
            mails = self._mails.setdefault(key, {})
            mails[int(found["seq"])] = links
            for old in sorted(mails)[:-MAIL_KEPT]:
                del mails[old]
            self._changed.notify_all()

    def latest(self, game: str, seat: int, lowest: int,
               highest: int) -> tuple[int, dict[str, str]] | None:
        """The newest mail to ``seat`` asking for a decision opened between log lengths
        ``lowest`` and ``highest``: (its log length, option -> link)."""
        with self._changed:
            mails = self._mails.get((game, seat), {})
            fitting = [seq for seq in mails if lowest <= seq <= highest and mails[seq]]
            if not fitting:
                return None
            return max(fitting), dict(mails[max(fitting)])

    def wait(self, timeout: float) -> None:
        """Until a decision mail arrives or ``timeout`` seconds pass."""
        with self._changed:
            self._changed.wait(timeout)

    def forget(self, game: str) -> None:
        with self._changed:
            for key in [key for key in self._mails if key[0] == game]:
                del self._mails[key]


# ---------------------------------------------------------------------- pages


@dataclass
class Form:
    action: str
    fields: dict[str, str] = field(default_factory=dict)
    """The hidden inputs (the CSRF token, the decision's log length)."""
    choices: list[str] = field(default_factory=list)
    """The values of its buttons named ``option``."""


class _FormReader(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.forms: list[Form] = []
        self._open: Form | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = {name: value or "" for name, value in attrs}
        if tag == "form":
            self._open = Form(found.get("action", ""))
            self.forms.append(self._open)
        elif self._open is not None and tag == "input" and found.get("type") == "hidden":
            self._open.fields[found.get("name", "")] = found.get("value", "")
        elif self._open is not None and tag == "button" and found.get("name") == "option":
            self._open.choices.append(found.get("value", ""))

    def handle_endtag(self, tag: str) -> None:
        if tag == "form":
            self._open = None


def forms(html: str) -> list[Form]:
    reader = _FormReader()
    reader.feed(html)
    reader.close()
    return reader.forms


def composer(html: str) -> Form | None:
    """The game page's move form (only there while the decision is this browser's)."""
    found = COMPOSER.search(html)
    return next(iter(forms(found.group(0))), None) if found else None


def refusal(response: requests.Response) -> str:
    """Why a link page refused (its ``data-reason``), or the status."""
    found = REFUSED.search(response.text)
    return found["reason"] if found else f"HTTP {response.status_code}"


# ---------------------------------------------------------------------- one game


@dataclass
class Table:
    """What every game of one run shares."""

    backends: bench.Backends
    mailbox: Mailbox
    config: LoadConfig
    progress: bench.Progress
    stop: threading.Event


class GamePlay:
    """One game and its players, played one step at a time (see the module documentation).

    ``body`` is the game as the API last answered (None: to be read again); ``page`` is the
    game page's form of a mail player who goes on with their turn in the browser."""

    def __init__(self, number: int, table: Table, stats: bench.Stats, rnd: random.Random,
                 links: frozenset[int]) -> None:
        self.number = number
        self.table = table
        self.stats = stats
        self.rnd = rnd
        self.links = links
        self.uid = ""
        self.bearer: list[dict[str, str]] = []
        self.browsers: dict[int, requests.Session] = {}
        self.body: dict[str, Any] | None = None
        self.page: tuple[int, Form] | None = None
        self.waiting_since: float | None = None
        self.done = False

    def close(self) -> None:
        for browser in self.browsers.values():
            browser.close()
        if self.uid:
            self.table.mailbox.forget(self.uid)

    def step(self, http: requests.Session) -> bool:
        """One step; False when the game waits for a mail that has not come yet."""
        if not self.uid:
            self._set_up(http)
        elif self.page is not None:
            self._page_move(*self.page)
        elif self.body is None:
            api_seats = [s for s in range(bench.SEATS) if s not in self.links]
            self.body = bench.read_state(http, self.table.backends, self.uid,
                                         self.bearer[api_seats[0]] if api_seats else None,
                                         self.stats)
        elif self.body["game"]["status"] != "active":
            self.done = True
            self.stats.games_finished += 1
            self.table.progress.game_over()
        else:
            return self._answer(http, self.body)
        return True

    def _set_up(self, http: requests.Session) -> None:
        self.uid, tokens = bench.new_game(http, self.table.backends, self.rnd, self.number,
                                          self.stats, settings=CLOCK)
        self.stats.games_started += 1
        self.bearer = [{"Authorization": f"Bearer {token}"} for token in tokens]
        self.browsers = {seat: self._browser(seat) for seat in self.links}

    def _browser(self, seat: int) -> requests.Session:
        """A mail player's browser: its own cookies, and its own address (10.x.y.z, passed
        on in X-Forwarded-For as the reverse proxy in front would), so that the per-address
        rate limit of the link pages counts each player, not the whole load at once."""
        browser = requests.Session()
        browser.headers["X-Forwarded-For"] = (f"10.{(self.number >> 8) & 255}."
                                              f"{self.number & 255}.{seat + 1}")
        return browser

    def _answer(self, http: requests.Session, body: dict[str, Any]) -> bool:
        """The first seat to act that can: an API seat at once, a mail player once the mail
        of this decision has arrived."""
        for seat in body["game"]["to_act"]:
            if seat not in self.links:
                self.body = bench.api_move(http, self.table.backends, self.uid, seat,
                                           self.bearer, body, self.rnd, self.stats,
                                           self.table.progress)
                return True
            mail = self.table.mailbox.latest(self.uid, seat, body["decision_seq"], body["seq"])
            if mail is not None:
                self._link_move(seat, body["seq"], *mail)
                return True
        now = time.monotonic()
        if self.waiting_since is None:
            self.waiting_since = now
        elif now - self.waiting_since > self.table.config.mail_wait:
            raise bench.ClientError(f"no mail for the decision after move {body['seq']} of "
                                    f"{self.uid[:8]} within {self.table.config.mail_wait:.0f} s")
        return False

    # -------------------------------------------------------------- a mail player

    def _request(self, seat: int, method: str, path: str, kind: str,
                 **kwargs: Any) -> requests.Response:
        t0 = time.perf_counter()
        answer = self.table.backends.request(self.browsers[seat], method, path, self.stats,
                                             **kwargs)
        self.stats.time(kind, (time.perf_counter() - t0) * 1000)
        return answer

    def _link_move(self, seat: int, seq: int, mail_seq: int, links: dict[str, str]) -> None:
        """Open one of the mail's option links and confirm it."""
        if self.waiting_since is not None:
            self.stats.time("mail wait", (time.monotonic() - self.waiting_since) * 1000)
            self.waiting_since = None
        option = self.rnd.choice(sorted(links))
        path = urlsplit(links[option]).path
        self.body = None
        confirm = self._request(seat, "GET", path, "GET /l/<token> (confirm page)")
        if confirm.status_code != 200:
            raise bench.ClientError(f"the link of '{option}' (mail after move {mail_seq}) "
                                    f"was refused: {refusal(confirm)}")
        form = next((f for f in forms(confirm.text) if urlsplit(f.action).path == path), None)
        if form is None:
            raise bench.ClientError(f"the confirm page of '{option}' has no form")
        try:
            answer = self._request(seat, "POST", path,
                                   "POST /l/<token>", data=form.fields, allow_redirects=False)
        except requests.RequestException:
            self.stats.uncertain.append(bench.Applied(self.uid, seq, seat, option))
            raise
        already = answer.status_code == 409 and refusal(answer) == "reused"
        if answer.status_code != 303 and not already:
            raise bench.ClientError(f"confirming '{option}' -> {refusal(answer)}")
        self._applied("link", seat, seq, option, already)
        self._open_page(seat, answer.headers.get("Location") or f"/games/{self.uid}")

    def _open_page(self, seat: int, location: str) -> None:
        page = self._request(seat, "GET", urlsplit(location).path, "GET /games/<id> (page)")
        if page.status_code != 200:
            raise bench.ClientError(f"the game page -> HTTP {page.status_code}")
        form = composer(page.text)
        self.page = (seat, form) if form is not None and form.choices else None

    def _page_move(self, seat: int, form: Form) -> None:
        """Go on with the turn on the game page: one of its options."""
        option = self.rnd.choice(form.choices)
        seq = int(form.fields["seq"])
        self.page = None
        try:
            answer = self._request(seat, "POST", form.action, "POST /games/<id>/move (page)",
                                   data=form.fields | {"option": option},
                                   allow_redirects=False)
        except requests.RequestException:
            self.stats.uncertain.append(bench.Applied(self.uid, seq, seat, option))
            raise
        if answer.status_code == 409:  # the game moved on: read it again
            self.stats.conflicts += 1
            return
        if answer.status_code != 303:
            raise bench.ClientError(f"playing '{option}' on the game page -> HTTP "
                                    f"{answer.status_code}")
        self._applied("page", seat, seq, option, False)
        self._open_page(seat, answer.headers.get("Location") or f"/games/{self.uid}")

    def _applied(self, channel: str, seat: int, seq: int, option: str, already: bool) -> None:
        self.stats.applied.append(bench.Applied(self.uid, seq, seat, option, already))
        self.stats.already_applied += already
        self.stats.games[self.uid] = seq + 1
        self.stats.moves += 1
        self.stats.moves_by[channel] += 1
        self.table.progress.move()


# ---------------------------------------------------------------------- the play


class PlayClock:
    """Whether the play's time is up: ``seconds`` after mail began to flow (the first decision
    mail reached the sink; at once where nobody plays by mail), so that a slow start, as on a
    loaded machine, does not end the play before the mail players could play. Where no
    decision mail comes within ``mail_wait``, the time is up then; once mail flows, never when
    ``until_stopped`` (the caller stops the play on an event of its own)."""

    def __init__(self, config: LoadConfig, mailbox: Mailbox, *, by_mail: bool,
                 until_stopped: bool) -> None:
        self._config = config
        self._mailbox = mailbox
        self._until_stopped = until_stopped
        self._started = time.monotonic()
        self._flowing: float | None = None if by_mail else self._started

    def up(self) -> bool:
        now = time.monotonic()
        if self._flowing is None:
            if not self._mailbox.decision_mails:
                return now - self._started >= self._config.mail_wait
            self._flowing = now
        return not self._until_stopped and now - self._flowing >= self._config.seconds


def _client(games: list[GamePlay], table: Table, stats: bench.Stats, clock: PlayClock) -> None:
    """Step through this thread's games in turn until each is over or the time is up."""
    playing = list(games)
    with requests.Session() as http:
        while playing and not table.stop.is_set() and not clock.up():
            moved = False
            for game in list(playing):
                if table.stop.is_set() or clock.up():
                    break
                try:
                    moved = game.step(http) or moved
                except (bench.ClientError, requests.RequestException, ValueError,
                        KeyError, IndexError) as exc:
                    stats.error(f"{game.uid[:8] or 'set-up'}: {type(exc).__name__}: {exc}",
                                _error_kind(exc))
                    game.done = True
                if game.done:
                    playing.remove(game)
                    game.close()
            if not moved and playing:
                table.mailbox.wait(0.25)
    for game in playing:
        game.close()


def _error_kind(exc: Exception) -> str:
    if isinstance(exc, bench.ClientError):
        text = str(exc)
        if "refused" in text or "->" in text:
            return "unexpected answer"
        if "no mail" in text:
            return "no mail came"
    return type(exc).__name__


def play(table: Table, *, echo: Callable[[str], None] = print,
         sink: scaleout.Sink | None = None,
         until_stopped: bool = False) -> tuple[bench.Stats, float]:
    """Play ``table.config.games`` games with ``clients`` threads; (merged stats, wall time).
    The play ends when every game is over, ``table.stop`` is set, or its time is up (see
    :class:`PlayClock`)."""
    config = table.config
    rnd = random.Random(config.seed)
    per_client = [bench.Stats() for _ in range(config.clients)]
    games = [GamePlay(n, table, per_client[n % config.clients],
                      random.Random(rnd.randrange(2**32)), link_seats(n, config.link_share, rnd))
             for n in range(config.games)]
    clock = PlayClock(config, table.mailbox, by_mail=any(game.links for game in games),
                      until_stopped=until_stopped)
    threads = [threading.Thread(target=_client, name=f"load-client-{i}", daemon=True,
                                args=(games[i::config.clients], table, per_client[i], clock))
               for i in range(config.clients)]
    start = time.perf_counter()
    watcher = threading.Thread(target=_watch, args=(table, start, echo, sink), daemon=True)
    try:
        for thread in threads:
            thread.start()
        watcher.start()
        for thread in threads:
            while thread.is_alive():
                thread.join(0.5)
    finally:
        table.stop.set()
        for thread in threads:
            thread.join(10)
        watcher.join(5)
    wall = time.perf_counter() - start
    total = bench.Stats()
    for stats in per_client:
        total.merge(stats)
    return total, wall


def _watch(table: Table, start: float, echo: Callable[[str], None],
           sink: scaleout.Sink | None) -> None:
    while not table.stop.wait(10.0):
        elapsed = time.perf_counter() - start
        mails = f", {sink.count():,} mails received" if sink is not None else ""
        echo(f"  {elapsed:5.1f} s: {table.progress.moves:,} moves "
             f"({table.progress.moves / elapsed:,.1f}/s), {table.progress.finished} games "
             f"finished{mails}")


# ---------------------------------------------------------------------- CPU


TICK = os.sysconf("SC_CLK_TCK")


def group_cpu(group: int) -> float:
    """CPU seconds of the live processes of process group ``group`` and of their waited-for
    children (Linux /proc)."""
    total = 0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with suppress(OSError, IndexError, ValueError):
            fields = stat.read_text().rsplit(")", 1)[1].split()
            if int(fields[2]) == group:
                total += sum(int(value) for value in fields[11:15])
    return total / TICK


def machine_busy() -> float:
    """CPU seconds the whole machine has been busy (every CPU, every process; /proc/stat)."""
    with open("/proc/stat") as stat:
        values = [int(v) for v in stat.readline().split()[1:]]
    return (sum(values[:8]) - values[3] - values[4]) / TICK  # less idle and iowait


@dataclass
class CpuUse:
    """Where the CPU went during the play (seconds)."""

    web: float = 0.0
    workers: float = 0.0
    here: float = 0.0
    """This script: the clients and the SMTP sink."""
    machine: float = 0.0
    available: float = 0.0

    @classmethod
    def now(cls, deployment: scaleout.Deployment) -> CpuUse:
        return cls(web=sum(group_cpu(p.popen.pid) for p in deployment.webs()),
                   workers=sum(group_cpu(p.popen.pid) for p in deployment.workers()),
                   here=time.process_time(), machine=machine_busy(),
                   available=time.monotonic() * (os.cpu_count() or 1))

    def __sub__(self, before: CpuUse) -> CpuUse:
        return CpuUse(*(getattr(self, name) - getattr(before, name) for name in
                        ("web", "workers", "here", "machine", "available")))


# ---------------------------------------------------------------------- the checks


@dataclass
class LoadReport(scaleout.Checks):
    config: LoadConfig
    stats: bench.Stats = field(default_factory=bench.Stats)
    wall: float = 0.0
    decision_mails: int = 0
    sink_messages: int = 0
    outbox: dict[str, int] = field(default_factory=dict)
    checks: list[scaleout.Check] = field(default_factory=list)
    log_dir: Path | None = None
    process_groups: list[int] = field(default_factory=list)
    """The process group of every web instance and worker started (all gone at the end)."""
    cpu: CpuUse = field(default_factory=CpuUse)



def check_verify(deployment: scaleout.Deployment,
                 check: Callable[[str, bool, str], None]) -> None:
    verify = deployment.run("admin", "verify")
    said = (verify.stdout + verify.stderr).strip()
    check("titanpost admin verify exits 0", verify.returncode == 0,
          said.splitlines()[-1] if said else "")


def _normal(value: Any) -> Any:
    return json.loads(json.dumps(value, sort_keys=True))


def replayed_views(conninfo: str) -> Iterator[tuple[str, int, Any]]:
    """Every started game's log replayed from its initial state here (the rules engine, no
    cache, no snapshot): (game, log length, the spectators' view after it)."""
    with psycopg.connect(conninfo) as conn:
        games = conn.execute("SELECT id, uid, ruleset, initial_state FROM games "
                             "WHERE initial_state IS NOT NULL ORDER BY id").fetchall()
        for game_id, uid, rules_name, initial in games:
            entries = conn.execute("SELECT seq, kind, input FROM moves WHERE game_id = %s "
                                   "ORDER BY seq", (game_id,)).fetchall()
            rules = ruleset(rules_name)
            replay = LogReplay(rules, initial, [(kind, text) for _, kind, text in entries])
            for seq, kind, text in entries:
                replay.step(seq, kind, text)
            yield str(uid), len(entries), rules.view(replay.state, None, True)


def check_replays(conninfo: str, bases: list[str],
                  check: Callable[[str, bool, str], None]) -> None:
    """What each instance serves for every game equals a replay of the game's log."""
    differ: list[str] = []
    games = 0
    with requests.Session() as http:
        for uid, length, view in replayed_views(conninfo):
            games += 1
            expected = _normal(view)
            for base in bases:
                served = http.get(f"{base}/api/games/{uid}", timeout=30)
                body = served.json() if served.status_code == 200 else {}
                if body.get("seq") != length or _normal(body.get("view")) != expected:
                    differ.append(f"{uid[:8]} at {base} (HTTP {served.status_code}, seq "
                                  f"{body.get('seq')} of {length})")
    check("every game's state, as each instance serves it, equals a replay of its log",
          games > 0 and not differ,
          f"{games} games x {len(bases)} instances"
          + (f"; differ: {scaleout._sample(differ)}" if differ else ""))


# ---------------------------------------------------------------------- the run


@contextmanager
def deployed(config: scaleout.Config, log_dir: Path, echo: Callable[[str], None],
             extra_env: dict[str, str] | None = None,
             app_database: Callable[[str], str] | None = None,
             ) -> Iterator[tuple[scaleout.Deployment, scaleout.Sink, Mailbox, str]]:
    """The database, the sink (with a mailbox) and the processes of one run, all stopped and
    removed afterwards: (deployment, sink, mailbox, conninfo). ``app_database`` maps the
    database URL to the one the processes use (deploy/faults.py's proxy). The instances
    trust one proxy in front (``TITANPOST_TRUSTED_PROXIES=1``): the players' browsers name
    their own addresses in X-Forwarded-For."""
    with ExitStack() as stack:
        url, conninfo = stack.enter_context(scaleout.database(config))
        sink = stack.enter_context(scaleout.Sink().running())
        mailbox = Mailbox()
        sink.listener = mailbox.deliver
        env = {"TITANPOST_TRUSTED_PROXIES": "1"} | (extra_env or {})
        if app_database is not None:
            env["TITANPOST_DATABASE_URL"] = app_database(url)
        deployment = scaleout.Deployment(url, sink.port, log_dir, config, env)
        done = deployment.run("db", "upgrade")
        if done.returncode != 0:
            raise RuntimeError(f"titanpost db upgrade failed:\n{done.stdout}{done.stderr}")
        stack.callback(deployment.stop_all)
        started = time.monotonic()
        deployment.start()
        deployment.wait_for_workers(conninfo)
        echo(f"{config.instances} gunicorn instance(s) x {config.web_workers} workers x "
             f"{config.threads} threads, {config.workers} titanpost worker(s), SMTP sink on "
             f"127.0.0.1:{sink.port}: up in {time.monotonic() - started:.1f} s")
        yield deployment, sink, mailbox, conninfo


def run(config: LoadConfig, echo: Callable[[str], None] = print) -> LoadReport:
    """Deploy, play, check (see the module documentation)."""
    report = LoadReport(config)
    log_dir = Path(tempfile.mkdtemp(prefix="titanpost-load-"))
    report.log_dir = log_dir
    with deployed(config.deployment(), log_dir, echo) as (deployment, sink, mailbox, conninfo):
        report.process_groups = [p.popen.pid for p in deployment.processes]
        bases = [web.base for web in deployment.webs() if web.base]
        table = Table(bench.Backends(bases, failover=True), mailbox, config, bench.Progress(),
                      threading.Event())
        echo(f"playing {config.games} games at once ({config.link_share:.0%} of the seats by "
             f"mail links) with {config.clients} client threads, for "
             f"{config.seconds:.0f} s once mail flows")
        before = CpuUse.now(deployment)
        report.stats, report.wall = play(table, echo=echo, sink=sink)
        report.cpu = CpuUse.now(deployment) - before
        report.decision_mails = mailbox.decision_mails
        report.sink_messages = sink.count()
        report.outbox = scaleout.outbox_state(conninfo)
        echo("checking: admin verify, every game's log replayed")
        check_verify(deployment, report.check)
        check_replays(conninfo, bases, report.check)
        stats = report.stats
        report.check("no client error", stats.errors == 0,
                     f"{stats.errors} errors" if stats.errors else "")
    if report.ok and not config.keep_logs:
        shutil.rmtree(log_dir, ignore_errors=True)
        report.log_dir = None
    return report


# ---------------------------------------------------------------------- output


def _latency(name: str, values: list[float]) -> str:
    return (f"    {name + ':':34} p50 {bench.percentile(values, 50):7.1f} ms, "
            f"p99 {bench.percentile(values, 99):7.1f} ms ({len(values):,})")


def print_figures(stats: bench.Stats, wall: float, echo: Callable[[str], None]) -> None:
    """Moves/s by channel, latencies by kind of request, errors by kind."""
    rate = (lambda n: n / wall) if wall else (lambda n: 0.0)
    unfinished = stats.games_started - stats.games_finished
    echo(f"  games:             {stats.games_started} started, {stats.games_finished} finished, "
         f"{unfinished} still running at the end; {stats.moves:,} moves in {wall:.1f} s")
    api, link, page = (stats.moves_by[c] for c in ("api", "link", "page"))
    echo(f"  moves/s:           {rate(stats.moves):,.1f} in all: API {rate(api):,.1f} "
         f"({api:,}), mail links {rate(link):,.1f} ({link:,}), game page after a link "
         f"{rate(page):,.1f} ({page:,})")
    echo("  latency:")
    for name, values in (("GET /api/games/<id>", stats.state_ms),
                         ("GET /api/games/<id>/options", stats.options_ms),
                         ("POST /api/games/<id>/moves", stats.post_ms),
                         *sorted(stats.timings.items())):
        if values:
            echo(_latency(name, values))
    echo(f"  409 answers:       {stats.conflicts}; {stats.already_applied} moves answered as "
         "already applied")
    if stats.failovers:
        echo("  sent again:        " + ", ".join(
            f"{kind} {n}" for kind, n in stats.failovers.most_common()))
    kinds = ", ".join(f"{kind} {n}" for kind, n in stats.error_kinds.most_common())
    echo(f"  errors:            {stats.errors}" + (f" ({kinds})" if kinds else ""))
    for sample in stats.error_samples:
        echo(f"    {sample}")


def print_report(report: LoadReport, echo: Callable[[str], None] = print) -> None:
    config = report.config
    echo(f"figures ({config.instances} instances x {config.web_workers} gunicorn workers x "
         f"{config.threads} threads, {config.workers} workers, {config.clients} client "
         f"threads, {os.cpu_count()} CPUs):")
    print_figures(report.stats, report.wall, echo)
    outbox = report.outbox
    echo(f"  mails:             {report.sink_messages:,} received by the sink "
         f"({report.decision_mails:,} asking for a decision); outbox {outbox.get('rows', 0):,} "
         f"rows: {outbox.get('delivered', 0):,} delivered, {outbox.get('skipped', 0):,} "
         f"skipped as answered first, {outbox.get('due', 0) + outbox.get('waiting', 0):,} "
         "not sent yet")
    cpu = report.cpu
    if cpu.available:
        echo(f"  CPU in the play:   gunicorn {cpu.web:.0f} s, titanpost workers "
             f"{cpu.workers:.0f} s, clients and SMTP sink {cpu.here:.0f} s; the machine was "
             f"busy {cpu.machine:.0f} s of {cpu.available:.0f} s (the rest: PostgreSQL and "
             "other work)")
    echo("checks:")
    for check in report.checks:
        echo(f"  [{'ok' if check.ok else 'FAIL'}] {check.name}"
             + (f": {check.detail}" if check.detail else ""))
    if report.log_dir is not None:
        echo(f"process logs kept in {report.log_dir}")
    echo("all checks hold" if report.ok else "SOME CHECKS FAILED")


def add_play_options(parser: argparse.ArgumentParser, defaults: LoadConfig) -> None:
    """The options of the play and the deployment (deploy/faults.py takes them too)."""
    parser.add_argument("--games", type=int, default=defaults.games,
                        help="games played at once")
    parser.add_argument("--clients", type=int, default=defaults.clients,
                        help="client threads sharing the games")
    parser.add_argument("--seconds", type=float, default=defaults.seconds,
                        help="stop the play this long after the first decision mail")
    parser.add_argument("--link-share", type=float, default=defaults.link_share,
                        help="share of the seats that play by the links in their mails")
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
    parser.add_argument("--mail-wait", type=float, default=defaults.mail_wait,
                        help="seconds a mail player waits for a mail before giving up")
    parser.add_argument("--seed", type=int, default=defaults.seed)
    parser.add_argument("--database-url", default=None,
                        help="use this (empty or Titan Post) PostgreSQL database")
    parser.add_argument("--pg", default=defaults.pg,
                        help="PostgreSQL admin database (a scratch database is made beside it)")
    parser.add_argument("--keep-logs", action="store_true",
                        help="keep the processes' logs (always kept when a check fails)")


def check_play_options(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    if args.games < 1 or args.clients < 1 or args.instances < 1 or args.workers < 1:
        parser.error("--games, --clients, --instances and --workers must be 1 or more")
    if not 0.0 <= args.link_share <= 1.0:
        parser.error("--link-share must be between 0 and 1")


def play_config(args: argparse.Namespace) -> dict[str, Any]:
    names = ("games", "clients", "seconds", "link_share", "instances", "web_workers",
             "threads", "workers", "mail_seconds", "mail_wait", "seed", "database_url", "pg",
             "keep_logs")
    return {name: getattr(args, name) for name in names}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_play_options(parser, LoadConfig())
    args = parser.parse_args()
    check_play_options(parser, args)
    config = LoadConfig(**play_config(args))

    scaleout.run_script(run, print_report, config)


if __name__ == "__main__":
    with suppress(BrokenPipeError):
        main()
