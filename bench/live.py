"""Open pages that follow their game, beside clients that play: how soon a move reaches them.

    python3 bench/live.py [--games 200] [--pages 1000] [--clients 4] [--seconds 40]
                          [--posts-seconds 10] [--posts-only-games 40] [--rounds 3]
                          [--workers 2] [--threads 4] [--live-workers 2] [--pg ADMIN_URL]

On a fresh PostgreSQL database (bench/api.py's ``postgres_database``) it starts the web
instance (gunicorn, thread workers, as bench/api.py starts it) and the live instance
(``deploy/gunicorn-live.conf.py``: gevent workers), and sets up ``--games`` three-seat games
through the API, plus ``2 x --rounds`` sets of ``--posts-only-games`` games whose moves are
worked out beforehand (bench/posts_only.py). Then:

1. ``--rounds`` times in turn (the machine's other load varies more than the effect sought,
   so the two are measured side by side): ``POST /moves`` alone (bench/api.py's figure) on
   a fresh scripted set with no page open; then ``--pages`` Server-Sent Events streams
   (``GET /games/<id>/live``) are opened on the live instance from one asyncio process (raw
   streams, a greenlet each on the server), spread evenly over the played games and the
   next scripted set, and ``POST /moves`` alone runs again on that set, the pages open
   (watching it). The pages of the last round stay open.
2. With the pages still open, ``--clients`` threads (bench/api.py's ``api_move``: options when
   another seat acts, then the POST) play the ``--games`` games for ``--seconds``, each client
   going round its own games one move at a time (no two clients share a game), and every
   move's POST is timed. For each move and each page of its game, the delay is from the POST's
   answer to the first ``event: changed`` the page received after the POST was sent (0 when
   the event came before the answer: the NOTIFY is sent at the commit, before the answer is
   written). A move with no event after it on some page counts as missed there.

It prints the delay's p50/p95/p99/max, the events that arrived, the play's POST /moves rate
with the pages open, the posts-only rates of each round and the ratio of all the moves with
pages to all those without, the live instance's RSS (each process) and CPU. Prints figures; it
asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import multiprocessing
import os
import random
import resource
import secrets
import signal
import subprocess
import sys
import tempfile
import threading
import time
from bisect import bisect_right
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

import requests

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.core.migrate import upgrade
from bench import api, posts_only

ROOT = Path(__file__).resolve().parent.parent


# ---------------------------------------------------------------------- the live instance


@contextmanager
def live_gunicorn(database_url: str, workers: int, secret: str) -> Iterator[str]:
    """deploy/gunicorn-live.conf.py (gevent workers) on a free loopback port; its base URL."""
    port = api.free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("GUNICORN_")}
    env.update(
        TITANPOST_DATABASE_URL=database_url,
        TITANPOST_ENV="production",
        TITANPOST_SECRET_KEY=secret,
        TITANPOST_BASE_URL=f"http://127.0.0.1:{port}",
        GUNICORN_LIVE_BIND=f"127.0.0.1:{port}",
        GUNICORN_LIVE_WORKERS=str(workers),
        GUNICORN_LOG_LEVEL="warning",
        PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")])),
    )
    command = [sys.executable, "-m", "gunicorn", "-c", "deploy/gunicorn-live.conf.py",
               "app.wsgi:app"]
    base = f"http://127.0.0.1:{port}"
    with tempfile.TemporaryFile(mode="w+") as log:
        proc = subprocess.Popen(command, cwd=ROOT, env=env, stdout=log, stderr=log,
                                start_new_session=True)
        try:
            api._wait_until_up(proc, base, log)
            api.SERVERS[base] = proc.pid
            yield base
        finally:
            api.SERVERS.pop(base, None)
            api._stop(proc)


def rss_mib(base: str) -> list[float]:
    """The resident memory of each process of the server at ``base`` (its process group), MiB,
    the master first."""
    group = api.SERVERS.get(base)
    found: list[tuple[int, float]] = []
    for status in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = status.read_text().rsplit(")", 1)[1].split()
            if group is None or int(fields[2]) != group:
                continue
            pid = int(status.parent.name)
            rss = next(line for line in (status.parent / "status").read_text().splitlines()
                       if line.startswith("VmRSS:"))
        except (OSError, StopIteration, ValueError):
            continue
        found.append((0 if pid == group else pid, int(rss.split()[1]) / 1024))
    return [mib for _, mib in sorted(found)]


# ---------------------------------------------------------------------- the pages


def pages_process(port: int, uids: list[str], opening: int, conn: Connection) -> None:
    """The open pages (one asyncio process): sends ("open", opened, failed, seconds), waits for
    "stop", then sends the arrival times (time.monotonic()) of each page's events."""
    arrivals: list[list[float]] = [[] for _ in uids]
    asyncio.run(_pages(port, uids, opening, conn, arrivals))
    conn.send(arrivals)
    conn.close()


async def _pages(port: int, uids: list[str], opening: int, conn: Connection,
                 arrivals: list[list[float]]) -> None:
    gate = asyncio.Semaphore(opening)
    opened: list[bool] = [False] * len(uids)
    ready = [asyncio.Event() for _ in uids]
    started = time.monotonic()

    async def page(index: int) -> None:
        writer = None
        try:
            async with gate:
                reader, writer = await asyncio.open_connection("127.0.0.1", port, limit=2**16)
                writer.write(f"GET /games/{uids[index]}/live HTTP/1.1\r\nHost: 127.0.0.1:{port}"
                             f"\r\nAccept: text/event-stream\r\n\r\n".encode("ascii"))
                await writer.drain()
                status = await reader.readline()
                while (await reader.readline()).strip():
                    pass  # the headers
                if b" 200 " not in status:
                    return
                while (line := await reader.readline()).strip() != b"retry: 3000":
                    if not line:
                        return
                opened[index] = True
            ready[index].set()
            events = arrivals[index]
            while line := await reader.readline():
                if line == b"event: changed\n":
                    events.append(time.monotonic())
        except (OSError, asyncio.IncompleteReadError):
            pass
        finally:
            ready[index].set()
            if writer is not None:
                writer.close()

    tasks = [asyncio.create_task(page(i)) for i in range(len(uids))]
    await asyncio.gather(*(event.wait() for event in ready))
    conn.send(("open", sum(opened), len(uids) - sum(opened), time.monotonic() - started))
    await asyncio.get_running_loop().run_in_executor(None, conn.recv)  # "stop"
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


class Pages:
    """The pages' process, seen from here."""

    def __init__(self, base: str, uids: list[str], opening: int) -> None:
        self.uids = uids
        port = int(base.rsplit(":", 1)[1])
        self.conn, theirs = multiprocessing.Pipe()
        context = multiprocessing.get_context("spawn")
        self.process = context.Process(target=pages_process, args=(port, uids, opening, theirs),
                                       daemon=True)
        self.process.start()
        _, self.opened, self.failed, self.took = self.conn.recv()
        self.arrivals: list[list[float]] = []

    def close(self) -> list[list[float]]:
        if self.process.is_alive():
            self.conn.send("stop")
            self.arrivals = self.conn.recv()
            self.process.join(10)
        return self.arrivals


# ---------------------------------------------------------------------- the players


@dataclass
class Played:
    """Every move the clients made: (game, POST sent, POST answered) in time.monotonic()."""

    moves: list[tuple[str, float, float]] = field(default_factory=list)
    stats: api.Stats = field(default_factory=api.Stats)


def play_round(base: str, games: dict[str, list[str]], clients: int, seconds: float,
               seed: int) -> tuple[Played, float]:
    """``clients`` threads, each going round its own games one move at a time; (what was
    played, wall seconds)."""
    uids = list(games)
    shares = [uids[i::clients] for i in range(clients)]
    per_client = [Played() for _ in range(clients)]
    deadline = time.monotonic() + seconds

    def client(index: int) -> None:
        rnd = random.Random(seed + index)
        played = per_client[index]
        backends = api.Backends(base)
        with requests.Session() as http:
            bodies = {uid: api.read_state(http, backends, uid, None, played.stats)
                      for uid in shares[index]}
            for uid in itertools.cycle(list(bodies)):
                if time.monotonic() >= deadline or not bodies:
                    return
                if uid not in bodies:
                    continue
                body = bodies[uid]
                if body["game"]["status"] != "active":
                    del bodies[uid]
                    continue
                bearer = [{"Authorization": f"Bearer {token}"} for token in games[uid]]
                before = len(played.stats.post_ms)
                try:
                    bodies[uid] = api.api_move(http, backends, uid, body["game"]["to_act"][0],
                                               bearer, body, rnd, played.stats)
                except (api.ClientError, requests.RequestException, KeyError) as exc:
                    played.stats.error(f"{type(exc).__name__}: {exc}")
                    del bodies[uid]
                    continue
                answered = time.monotonic()
                if len(played.stats.post_ms) > before:
                    sent = answered - played.stats.post_ms[-1] / 1000
                    played.moves.append((uid, sent, answered))

    started = time.perf_counter()
    threads = [threading.Thread(target=client, args=(i,), daemon=True)
               for i in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    wall = time.perf_counter() - started
    total = Played()
    for played in per_client:
        total.moves += played.moves
        total.stats.merge(played.stats)
    return total, wall


@dataclass
class Delays:
    seconds: list[float] = field(default_factory=list)
    missed: int = 0
    early: int = 0
    """Pairs whose event came before the POST's answer (counted as 0)."""


def delays(moves: list[tuple[str, float, float]], uids: list[str],
           arrivals: list[list[float]]) -> Delays:
    """For each move and each page of its game: from the POST's answer to the page's first
    event that arrived after the POST was sent."""
    pages_of: dict[str, list[list[float]]] = {}
    for uid, events in zip(uids, arrivals, strict=True):
        pages_of.setdefault(uid, []).append(sorted(events))
    found = Delays()
    for uid, sent, answered in moves:
        for events in pages_of.get(uid, []):
            index = bisect_right(events, sent)
            if index == len(events):
                found.missed += 1
                continue
            delay = events[index] - answered
            found.early += delay < 0
            found.seconds.append(max(0.0, delay))
    return found


# ---------------------------------------------------------------------- driver


def posts_rate(base: str, live: str, scripts: list[posts_only.Script], clients: int,
               seconds: float) -> tuple[posts_only.Figures, float]:
    """``POST /moves`` alone (bench/posts_only.py); the figures (``server_cpu``: the web
    instance's) and the rate. The live instance's CPU over the run goes to ``live_cpu``."""
    web0, live0 = api.server_cpu(base), api.server_cpu(live)
    figures = posts_only.run(base, scripts, clients, seconds)
    figures.server_cpu = api.server_cpu(base) - web0
    LIVE_CPU.append(api.server_cpu(live) - live0)
    return figures, figures.moves / figures.wall if figures.wall else 0.0


LIVE_CPU: list[float] = []
"""The live instance's CPU seconds over each ``POST /moves`` alone run."""


def print_posts(label: str, figures: posts_only.Figures, rate: float) -> None:
    print(f"  POST /moves alone, {label}: {rate:,.1f}/s ({figures.moves:,} moves in "
          f"{figures.wall:.1f} s; p50 {api.percentile(figures.latencies_ms, 50):.1f} ms, "
          f"p99 {api.percentile(figures.latencies_ms, 99):.1f} ms; refused {figures.refused}; "
          f"CPU: web {figures.server_cpu * 1000 / max(figures.moves, 1):.2f} ms a move, live "
          f"{LIVE_CPU[-1]:.1f} s; load average {os.getloadavg()[0]:.1f})")


def open_pages(live: str, uids: list[str], count: int, opening: int) -> tuple[Pages, list[str]]:
    """``count`` pages spread evenly over ``uids``: the pages and the game of each."""
    page_uids = [uids[i % len(uids)] for i in range(count)]
    return Pages(live, page_uids, opening), page_uids


def run(args: argparse.Namespace) -> None:
    secret, admin = secrets.token_hex(32), secrets.token_urlsafe(24)
    rates: list[tuple[float, float]] = []
    with api.postgres_database(args.pg) as (url, _raw):
        upgrade(url)
        with api.gunicorn(url, args.workers, args.threads, None, secret=secret,
                          admin_token=admin) as base, \
                live_gunicorn(url, args.live_workers, secret) as live:
            print(f"bench/live.py: web gunicorn {args.workers} worker(s) x {args.threads} "
                  f"threads (gthread), live gunicorn {args.live_workers} worker(s) (gevent), "
                  f"{args.clients} clients, {os.cpu_count()} CPUs, PostgreSQL, load average "
                  f"{os.getloadavg()[0]:.1f} at the start")
            t0 = time.perf_counter()
            local = threading.local()

            def new_game(number: int) -> tuple[str, list[str]]:
                if not hasattr(local, "http"):
                    local.http = requests.Session()
                return api.new_game(local.http, base, random.Random(number), number)

            with ThreadPoolExecutor(args.clients) as pool:
                made = list(pool.map(new_game, range(args.games)))
            games = dict(made)
            scripts = [posts_only.prepare(base, admin, args.posts_only_games,
                                          args.seed + 7 * (k + 1), api.new_game)
                       for k in range(2 * args.rounds)]
            print(f"  set up:            {len(games)} games to play, {2 * args.rounds} x "
                  f"{args.posts_only_games} scripted games in {time.perf_counter() - t0:.1f} s")
            sys.stdout.flush()

            rss_before = rss_mib(live)
            pages: Pages | None = None
            page_uids: list[str] = []
            try:
                for k in range(args.rounds):
                    alone, alone_rate = posts_rate(base, live, scripts[2 * k], args.clients,
                                                   args.posts_seconds)
                    print_posts(f"round {k + 1}, no page open", alone, alone_rate)
                    watched = list(games) + [script.uid for script in scripts[2 * k + 1]]
                    pages, page_uids = open_pages(live, watched, args.pages, args.opening)
                    if k == 0:
                        print(f"  pages:             {pages.opened:,} open ({pages.failed} "
                              f"failed) in {pages.took:.1f} s, {args.pages / len(watched):.1f} "
                              f"a game over {len(watched)} games; live RSS "
                              f"{' + '.join(f'{m:.0f}' for m in rss_before)} MiB before, "
                              f"{' + '.join(f'{m:.0f}' for m in rss_mib(live))} MiB with them")
                    with_pages, with_rate = posts_rate(base, live, scripts[2 * k + 1],
                                                       args.clients,
                                                       args.posts_seconds)
                    print_posts(f"round {k + 1}, {pages.opened:,} pages open", with_pages,
                                with_rate)
                    rates.append((alone_rate, with_rate))
                    sys.stdout.flush()
                    if k < args.rounds - 1:
                        pages.close()
                assert pages is not None
                cpu0, live_cpu0 = api.server_cpu(base), api.server_cpu(live)
                played, wall = play_round(base, games, args.clients, args.seconds, args.seed)
                web_cpu, live_cpu = api.server_cpu(base) - cpu0, api.server_cpu(live) - live_cpu0
                time.sleep(args.settle)  # the last moves' events are on their way
                rss_with = rss_mib(live)
            finally:
                arrivals = pages.close() if pages is not None else []

    found = delays(played.moves, page_uids, arrivals)
    events = sum(len(a) for a in arrivals)
    stats = played.stats
    print(f"  play, pages open:  {stats.moves:,} moves in {wall:.1f} s = "
          f"{stats.moves / wall if wall else 0.0:,.1f} moves/s (options read when another seat "
          f"acts); POST /moves p50 {api.percentile(stats.post_ms, 50):.1f} ms, p99 "
          f"{api.percentile(stats.post_ms, 99):.1f} ms; errors {stats.errors}; CPU: web "
          f"{web_cpu:.1f} s, live {live_cpu:.1f} s")
    for sample in stats.error_samples:
        print(f"    {sample}")
    pairs = len(found.seconds) + found.missed
    ms = [s * 1000 for s in found.seconds]
    print(f"  move -> page:      p50 {api.percentile(ms, 50):.0f} ms, p95 "
          f"{api.percentile(ms, 95):.0f} ms, p99 {api.percentile(ms, 99):.0f} ms, max "
          f"{max(ms, default=0.0):.0f} ms over {pairs:,} (move, watching page) pairs; "
          f"{found.missed} missed, {found.early:,} before the POST's answer; "
          f"{events:,} events arrived on the last pages")
    p95 = api.percentile(ms, 95)
    print(f"                     aim: p95 within 2,000 ms: "
          f"{'met' if p95 <= 2000 and not found.missed else 'NOT met'}")
    without = sum(a for a, _ in rates)
    ratio = sum(w for _, w in rates) / without if without else 0.0
    each = ", ".join(f"{w / a:.2f}" if a else "-" for a, w in rates)
    print(f"  posts with pages / without: {ratio:.3f} over {len(rates)} rounds (each: {each}; "
          f"aim: 0.900 or more: {'met' if ratio >= 0.9 else 'NOT met'})")
    print(f"  live RSS:          {' + '.join(f'{m:.0f}' for m in rss_with)} MiB "
          f"(master + workers) with {args.pages:,} pages, after the play; load average "
          f"{os.getloadavg()[0]:.1f} at the end")
    sys.stdout.flush()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=200, help="games played, pages watch them")
    parser.add_argument("--pages", type=int, default=1000, help="open pages (SSE streams)")
    parser.add_argument("--clients", type=int, default=4, help="playing client threads")
    parser.add_argument("--seconds", type=float, default=40, help="how long the clients play")
    parser.add_argument("--posts-seconds", type=float, default=10,
                        help="how long each POST /moves alone run lasts")
    parser.add_argument("--posts-only-games", type=int, default=40,
                        help="scripted games of each POST /moves alone run")
    parser.add_argument("--rounds", type=int, default=3,
                        help="POST /moves alone runs without, then with the pages, in turn")
    parser.add_argument("--workers", type=int, default=2, help="web gunicorn workers")
    parser.add_argument("--threads", type=int, default=4, help="web gunicorn threads")
    parser.add_argument("--live-workers", type=int, default=2, help="live gunicorn workers")
    parser.add_argument("--opening", type=int, default=50,
                        help="pages connecting at once while they open")
    parser.add_argument("--settle", type=float, default=3.0,
                        help="seconds the pages stay after the play, for the last events")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--pg", default="postgresql://postgres@127.0.0.1:5432/postgres",
                        help="PostgreSQL admin database (a scratch database is made beside it)")
    args = parser.parse_args()

    def terminate(_signum: int, _frame: Any) -> None:
        raise SystemExit(143)

    signal.signal(signal.SIGTERM, terminate)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = args.pages * 2 + 1000  # (the servers started from here inherit it)
    if soft < wanted:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(wanted, hard), hard))
    try:
        run(args)
    except KeyboardInterrupt:
        print("interrupted: gunicorn stopped, scratch database removed", file=sys.stderr)
        sys.exit(130)


if __name__ == "__main__":
    main()
