"""Mail benchmark: render outbox mails and deliver them to an SMTP server on loopback.

    python3 bench/mail.py [--games 100] [--moves 300] [--batch 50] [--link-only] [--pg URL]

In a temporary SQLite database (or a scratch PostgreSQL database with ``--pg``), migrated with
``app.core.migrate.upgrade``, the script sets up ``--games`` three-seat games (two players and the
computer), each played a random number of decisions into the race and left waiting for one of
its players, and writes the outbox rows the notifier writes for that moment: the decision mail to
the player whose turn it is and a "game started"-style mail to the other one (2 mails a game).
The server's base address is public (``https://``), so by default (``TITANPOST_MAIL_IMAGES=auto``)
mails name their board picture by a signed address; the inline picture, the fallback, is
measured too. It then prints:

1. **render**: ``render: N mails/s``, the rate of rendering the mails alone (templates in the
   seat's language, CSS inlined, the game's words and links: ``MailRenderer.render``), then the
   rate with the MIME messages built too, both ``--batch`` rows to a read session with the
   batch's games and seats read first, as the sender renders; with the board picture by
   address (``link``) and inline (``inline``: the board SVG drawn and rendered to PNG, once per
   picture), with the share of time spent on the PNG and the average message and PNG sizes;
2. **deliver**: mails/s for sending the already rendered messages over one SMTP connection to
   an aiosmtpd server on 127.0.0.1 (the SMTP conversation alone), and the sender's own
   connection (``app.mail.relay.connect``: the end-of-data hook between the data and the ``.``
   line) with TCP_NODELAY as it is set and with Nagle's algorithm back on, as before: the
   difference per message is the stall the split write used to cost;
3. **end to end**: ``end to end: N mails/s``, the sender itself (``Sender.run_once`` in a
   loop: claim a batch, render, deliver, record), as ``titanpost mail send`` does it, and its
   ratio to the target of 100 mails/s; then the same rows again with the pictures inline; then
   (by address) with every mail DKIM-signed, by an RSA key and by RSA and Ed25519 together
   (issue 39's aim: 150 mails/s or more);
4. **pictures**: the web server answering the mails' picture addresses (``GET
   /board/<token>.png`` through the Flask app in-process): the first request of each (drawn),
   a repeat (from memory) and a conditional repeat (304);
5. **listener**: moves/s of ``GameService.submit`` with and without the outbox listener, over
   ``--moves`` moves, i.e. what writing the outbox row in the move's transaction costs.

Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import multiprocessing
import random
import re
import shutil
import smtplib
import socket
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from email.message import EmailMessage
from functools import lru_cache
from pathlib import Path
from typing import Any

from aiosmtpd.controller import Controller
from sqlalchemy import text

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import app.mail.drawing as drawing_module
from app.core.config import Settings
from app.core.db import make_engine
from app.core.migrate import upgrade
from app.core.models import OutboxMail
from app.games.ui import DEFAULT_GAME
from app.mail.collector import collector_held
from app.mail.images import INLINE, LINK, picture_mode
from app.mail.notify import Notifier, insert_rows, install
from app.mail.relay import HandoverMixin, connect, parse_smtp_url
from app.mail.render import MailRenderer, build_message, envelope_sender
from app.mail.send import Sender
from app.service import GameEvent, GameService


class Sink:
    """An SMTP handler that counts what it receives."""

    def __init__(self) -> None:
        self.count = 0
        self.bytes = 0

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        self.count += 1
        self.bytes += len(envelope.content)
        await asyncio.sleep(0)
        return "250 OK"


class CountingSink:
    """The relay of another process: counts what it receives in a shared integer."""

    def __init__(self, counter: Any) -> None:
        self.counter = counter

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        with self.counter.get_lock():
            self.counter.value += 1
        return "250 OK"


def serve_relay(port: int, counter: Any, ready: Any, stop: Any) -> None:
    """(In a process of its own.) An aiosmtpd relay on ``port`` until ``stop`` is set."""
    controller = Controller(CountingSink(counter), hostname="127.0.0.1", port=port)
    controller.start()
    ready.set()
    stop.wait()
    controller.stop()


class RelayProcess:
    """An aiosmtpd relay in a process of its own, as a relay is in production: its work does
    not share the sender's interpreter (and its lock) as the in-process one does."""

    def __init__(self) -> None:
        context = multiprocessing.get_context("fork")  # (started before any database work)
        self.port = free_port()
        self.counter = context.Value("i", 0)
        ready, self.stop = context.Event(), context.Event()
        self.process = context.Process(target=serve_relay, daemon=True,
                                       args=(self.port, self.counter, ready, self.stop))
        self.process.start()
        ready.wait(30)

    @property
    def count(self) -> int:
        return int(self.counter.value)

    def close(self) -> None:
        self.stop.set()
        self.process.join(10)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@contextmanager
def database(pg: str | None) -> Iterator[str]:
    if pg is None:
        folder = tempfile.mkdtemp(prefix="titanpost-mail-bench-")
        try:
            yield f"sqlite:///{folder}/bench.db"
        finally:
            shutil.rmtree(folder, ignore_errors=True)
        return
    import psycopg

    name = f"titanpost_bench_{uuid.uuid4().hex[:10]}"
    admin = pg.replace("postgresql+psycopg://", "postgresql://")
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    base = admin.rsplit("/", 1)[0].replace("postgresql://", "postgresql+psycopg://")
    try:
        yield f"{base}/{name}"
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


TARGET = 100.0
"""Mails per second end to end that issue 14 asks for."""


def settings_for(url: str, smtp_url: str | None, images: str = "auto") -> Settings:
    env = {
        "TITANPOST_MAIL_IMAGES": images,
        "TITANPOST_DATABASE_URL": url,
        "TITANPOST_ENV": "test",
        "TITANPOST_SECRET_KEY": "bench-secret-key-0123456789abcdef",
        "TITANPOST_BASE_URL": "https://titanpost.example.org",
        "TITANPOST_MAIL_DOMAIN": "titanpost.example",
        "TITANPOST_MAIL_FROM": "Titan Post <post@titanpost.example>",
    }
    if smtp_url:
        env["TITANPOST_SMTP_URL"] = smtp_url
    return Settings.from_env(env)


def signing_keys() -> dict[str, tuple[str, str | None]]:
    """The DKIM settings the signed runs use: new keys in a temporary folder (issue 39)."""
    from app.mail.signing import ED25519, RSA, new_private_key

    folder = Path(tempfile.mkdtemp(prefix="bench-dkim-"))
    paths = {}
    for algorithm in (RSA, ED25519):
        paths[algorithm] = folder / f"{algorithm}.pem"
        paths[algorithm].write_bytes(new_private_key(algorithm))
    return {"RSA": (str(paths[RSA]), None),
            "RSA and Ed25519": (str(paths[RSA]), str(paths[ED25519]))}


def bot_answer(service: GameService, uid: str) -> bool:
    state = service.state(uid, 0)
    acting = state["game"]["to_act"]
    if not acting:
        return False
    with service.session() as s:
        loaded = service._load(s, uid)
        choice = loaded.rules.bot_move(loaded.state)
    service.submit(uid, acting[0], state["seq"], choice)
    return True


def new_game(service: GameService, n: int, rng: random.Random) -> str:
    lang = "pl" if n % 3 == 0 else "en"
    game = service.create_game(
        seats=[{"email": f"a{n}@example.com", "name": f"Ann {n}", "language": lang},
               {"email": f"b{n}@example.com", "name": f"Bob {n}"},
               {"bot": True}],
        name=f"Race {n}", circuits=[rng.choice(["kaldheira", "dead-mans-lagoon", "moltenchest",
                                                "ban-kog", "anglieh", "estenggaard"])],
        seed=rng.randrange(1 << 30),
    )
    for invitation in game["invitations"]:
        service.accept(invitation["invite_token"])
    service.start(game["game"], game["creator_token"])
    uid: str = game["game"]
    return uid


def set_up(service: GameService, games: int, rng: random.Random) -> int:
    """Games left waiting for a player, and their outbox rows (2 per game)."""
    notifier = Notifier(service.settings)
    for n in range(games):
        uid = new_game(service, n, rng)
        for _ in range(rng.randrange(0, 60)):
            if not bot_answer(service, uid):
                break
        with service.session(write=True) as s:
            loaded = service._load(s, uid, fresh_seats=True)
            if loaded.state is None or not loaded.rules.to_act(loaded.state):
                continue
            event = GameEvent("started", loaded.game, loaded.seats, 0, loaded.seq, loaded)
            insert_rows(s, list(notifier.rows_for(event)))
            s.commit()
    with service.session() as s:
        return int(s.execute(text("SELECT count(*) FROM outbox")).scalar_one())


def rate(count: int, seconds: float) -> str:
    return f"{count / seconds:8.1f}/s" if seconds > 0 else "n/a"


def reset_outbox(service: GameService) -> None:
    """Every row unsent again (to send the same mails a second way)."""
    with service.session(write=True) as s:
        s.execute(text("UPDATE outbox SET sent_at = NULL, handed_at = NULL, attempts = 0, "
                       "next_attempt_at = NULL, last_error = NULL"))
        s.commit()


def render_all(settings: Settings, service: GameService, rows: list[OutboxMail], mode: str,
               batch: int) -> tuple[list[tuple[str, EmailMessage]], float, float]:
    """Render and build every row's message with pictures ``mode``, ``batch`` rows to a read
    session as the sender does; the messages, the seconds taken and those of rendering alone
    (templates, CSS, words: without building the MIME messages), and the PNG time and bytes
    in ``PNG``."""
    drawing_module._png.cache_clear()
    warm_up = MailRenderer(GameService(service.engine, replace(settings, mail_images=mode)))
    with warm_up.service.session() as s:  # templates compiled, catalogues read: as a worker
        for row in rows[:10]:             # that has run for a while (once per process)
            warm_up.render(row, session=s)
    # a new service: the games' states are not in its memory, as when the moves were played by
    # the web server's processes and the worker renders their first mail
    renderer = MailRenderer(GameService(service.engine, replace(settings, mail_images=mode)))
    messages = []
    rendering = 0.0
    t0 = time.perf_counter()
    for start in range(0, len(rows), batch):
        chunk = rows[start:start + batch]
        with collector_held(), renderer.service.session() as s:  # as the sender renders
            t, c = time.perf_counter(), time.process_time()
            renderer.prefetch(s, chunk)
            rendered = [(row, renderer.render(row, session=s)) for row in chunk]
            gc.collect(0)  # (what the collector, held back, owes the mails: counted here)
            rendering += time.perf_counter() - t
            RENDER_CPU["seconds"] += time.process_time() - c
            messages += [(row.recipient, build_message(renderer.settings, row, mail))
                         for row, mail in rendered]
    return messages, time.perf_counter() - t0, rendering


RENDER_CPU = {"seconds": 0.0}
"""CPU seconds of this process while rendering (less disturbed than the wall clock by the
other processes of a busy machine, though not free of them)."""


PNG = {"seconds": 0.0, "bytes": 0, "count": 0}


def time_png() -> None:
    """Count the time, bytes and number of board PNGs drawn from now on."""
    original = drawing_module._png.__wrapped__

    @lru_cache(maxsize=64)
    def timed_png(svg: str, width: int, game_name: str = DEFAULT_GAME) -> bytes:
        t = time.perf_counter()
        data = original(svg, width, game_name)
        PNG["seconds"] += time.perf_counter() - t
        PNG["bytes"] += len(data)
        PNG["count"] += 1
        return data

    drawing_module._png = timed_png


def per_message(port: int, settings: Settings, messages: list[tuple[str, EmailMessage]],
                nagle: bool) -> float:
    """Seconds per message over the sender's own connection (the end-of-data hook set to a
    no-op, as the sender sets it to its hand-over), Nagle's algorithm on or off."""
    smtp = connect(parse_smtp_url(f"smtp://127.0.0.1:{port}"))
    if nagle:
        assert smtp.sock is not None
        smtp.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 0)
    assert isinstance(smtp, HandoverMixin)
    smtp.before_end_of_data = lambda: None
    sender_address = envelope_sender(settings)
    t0 = time.perf_counter()
    for recipient, message in messages:
        smtp.send_message(message, from_addr=sender_address, to_addrs=[recipient])
    took = time.perf_counter() - t0
    smtp.quit()
    return took / len(messages)


def end_to_end(service: GameService, batch: int, sink: Sink | RelayProcess,
               ) -> tuple[int, float, float, int]:
    """Mails sent, wall and CPU seconds (this process: the sender, and the SMTP server's thread
    when ``sink`` is the in-process one), mails the server received."""
    received = sink.count
    url = f"smtp://127.0.0.1:{sink.port}" if isinstance(sink, RelayProcess) else None
    sender = Sender(service, batch=batch, smtp_url=url)
    drawing_module._png.cache_clear()
    t0, c0 = time.perf_counter(), time.process_time()
    sent = 0
    while True:
        report = sender.run_once()
        sent += report.sent
        if report.claimed == 0:
            break
    return sent, time.perf_counter() - t0, time.process_time() - c0, sink.count - received


def sender_process(settings: Settings, batch: int, go: Any, sent: Any) -> None:
    """(In a process of its own.) A sender on its own connection pool: ``run_once`` until a
    round claims nothing, its count added to ``sent``."""
    service = GameService(make_engine(settings.database_url), settings)
    sender = Sender(service, batch=batch)
    go.wait(60)
    mine = 0
    while True:
        report = sender.run_once()
        mine += report.sent
        if report.claimed == 0:
            break
    with sent.get_lock():
        sent.value += mine
    service.engine.dispose()


def senders_apart(settings: Settings, batch: int, relay: RelayProcess,
                  processes: int) -> tuple[int, float, int]:
    """Mails sent, wall seconds and mails the relay received with ``processes`` senders at once
    (as ``titanpost mail send`` run several times: their claims never take a row twice), each
    in a process of its own, the relay in another."""
    context = multiprocessing.get_context("fork")
    go, sent = context.Event(), context.Value("i", 0)
    received = relay.count
    settings = replace(settings, smtp_url=f"smtp://127.0.0.1:{relay.port}")
    workers = [context.Process(target=sender_process, args=(settings, batch, go, sent))
               for _ in range(processes)]
    for worker in workers:
        worker.start()
    time.sleep(1.0)  # (each has its engine and sender: the clock starts at the go)
    t0 = time.perf_counter()
    go.set()
    for worker in workers:
        worker.join()
    return int(sent.value), time.perf_counter() - t0, relay.count - received


def picture_paths(settings: Settings, messages: list[tuple[str, EmailMessage]]) -> list[str]:
    """The picture addresses the mails name (paths on the server)."""
    paths = []
    for _, message in messages:
        body = message.get_body(("html",))
        assert body is not None
        found = re.search(r'src="([^"]*/board/[^"]+\.png)"', body.get_content())
        if found:
            paths.append(found.group(1).removeprefix(settings.base_url))
    return paths


def picture_requests(settings: Settings, paths: list[str]) -> None:
    """The mails' picture addresses fetched from the web app (in-process, Flask test client)."""
    from app import create_app

    app = create_app(replace(settings, log_level="warning"))  # (no access log lines)
    client = app.test_client()
    distinct = list(dict.fromkeys(paths))
    if not distinct:
        print("pictures    no picture addresses in the mails")
        return
    drawing_module._png.cache_clear()
    timings = {"first": 0.0, "repeat": 0.0, "304": 0.0}
    for path in distinct:  # each asked for three times in a row, as a mail's readers would
        t0 = time.perf_counter()
        response = client.get(path)
        t1 = time.perf_counter()
        assert response.status_code == 200, (path, response.status_code)
        assert client.get(path).data == response.data
        t2 = time.perf_counter()
        conditional = client.get(path, headers={"If-None-Match": response.headers["ETag"]})
        t3 = time.perf_counter()
        assert conditional.status_code == 304
        timings["first"] += t1 - t0
        timings["repeat"] += t2 - t1
        timings["304"] += t3 - t2
    n = len(distinct)
    print(f"pictures    {n:5d} addresses ({len(paths)} mails): first request (drawn) "
          f"{1000 * timings['first'] / n:.1f} ms each, repeat {rate(n, timings['repeat'])}, "
          f"conditional repeat (304) {rate(n, timings['304'])}")
    app.extensions["titanpost.service"].engine.dispose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=100)
    parser.add_argument("--moves", type=int, default=300)
    parser.add_argument("--batch", type=int, default=50)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--link-only", action="store_true",
                        help="measure the pictures by address only: no inline pictures, no "
                             "listener part (a quicker run)")
    parser.add_argument("--pg", default=None,
                        help="admin URL of a PostgreSQL server (default: SQLite in a temp file)")
    args = parser.parse_args()
    modes = (LINK,) if args.link_only else (LINK, INLINE)
    rng = random.Random(args.seed)
    apart = RelayProcess()
    sink = Sink()
    port = free_port()
    controller = Controller(sink, hostname="127.0.0.1", port=port)
    controller.start()
    time_png()
    try:
        with database(args.pg) as url:
            upgrade(url)
            settings = settings_for(url, f"smtp://127.0.0.1:{port}")
            service = GameService(make_engine(url), settings)
            started = time.perf_counter()
            mails = set_up(service, args.games, rng)
            print(f"database: {url.split('://', 1)[0]}; {args.games} games set up, "
                  f"{mails} outbox rows in {time.perf_counter() - started:.1f}s; base address "
                  f"{settings.base_url}: pictures {picture_mode(settings)} by default")
            from sqlmodel import col, select

            with service.session() as s:
                rows = list(s.exec(select(OutboxMail).order_by(col(OutboxMail.id))).all())

            # 1. rendering, the picture by address and inline
            rendered: dict[str, list[tuple[str, EmailMessage]]] = {}
            for mode in modes:
                PNG.update(seconds=0.0, bytes=0, count=0)
                RENDER_CPU["seconds"] = 0.0
                messages, took, alone = render_all(settings, service, rows, mode, args.batch)
                rendered[mode] = messages
                sizes = [len(bytes(m)) for _, m in messages]
                drawn = PNG["count"]
                png = (f"board PNG {100 * PNG['seconds'] / took:.0f}% of it, {drawn} drawn for "
                       f"{len(rows)} mails, {PNG['bytes'] / max(1, drawn) / 1024:.0f} KiB each"
                       if drawn else "no PNG drawn")
                print(f"render: {len(rows) / alone:.1f} mails/s ({mode} pictures; the mails "
                      f"alone, without their MIME messages: {1000 * alone / len(rows):.2f} ms "
                      f"a mail, {1000 * RENDER_CPU['seconds'] / len(rows):.2f} ms of CPU)")
                print(f"render      {len(rows):5d} mails in {took:6.2f}s  {rate(len(rows), took)}"
                      f"   ({mode:6s}, with the MIME messages: {png}; mail "
                      f"{sum(sizes) / len(sizes) / 1024:.0f} KiB on average)")
            messages = rendered[modes[-1]]

            # 2. SMTP delivery of rendered mail, one connection
            sender_address = envelope_sender(settings)
            t0 = time.perf_counter()
            with smtplib.SMTP("127.0.0.1", port) as smtp:
                for recipient, message in messages:
                    smtp.send_message(message, from_addr=sender_address, to_addrs=[recipient])
            deliver_s = time.perf_counter() - t0
            print(f"deliver     {len(messages):5d} mails in {deliver_s:6.2f}s  "
                  f"{rate(len(messages), deliver_s)}   (smtplib to aiosmtpd on 127.0.0.1, "
                  f"{modes[-1]} pictures)")
            for mode in modes:
                now = per_message(port, settings, rendered[mode], nagle=False)
                before = per_message(port, settings, rendered[mode], nagle=True)
                print(f"            the sender's connection ({mode} pictures): "
                      f"{1000 * now:.1f} ms a mail with TCP_NODELAY ({1 / now:.0f}/s), "
                      f"{1000 * before:.1f} ms with Nagle on as before: "
                      f"stall {1000 * (before - now):.1f} ms a mail")

            paths = picture_paths(settings, rendered[LINK])
            del rendered, messages  # (their many objects would slow the collector down below)
            gc.collect()

            # 3. the sender end to end (claim, render, deliver, record)
            for mode in modes:
                reset_outbox(service)
                svc = GameService(service.engine, replace(settings, mail_images=mode))
                sent, took, cpu, got = end_to_end(svc, args.batch, sink)
                ratio = sent / took / TARGET if took > 0 else 0.0
                print(f"end to end: {sent / took:.1f} mails/s ({mode} pictures)")
                print(f"end to end  {sent:5d} mails in {took:6.2f}s  {rate(sent, took)}"
                      f"   ({mode:6s}: Sender.run_once, batches of {args.batch}; server "
                      f"received {got}); {ratio:.2f} x the target of {TARGET:.0f}/s; "
                      f"{sent / max(cpu, 1e-9):.0f} mails per CPU-second of this process")

            # 3b. unsigned, then every mail DKIM-signed (RSA 2048, then RSA and Ed25519
            # together), to the relay in this process and to one in a process of its own
            for label, (rsa_key, ed_key) in {"unsigned": (None, None),
                                             **signing_keys()}.items():
                for where, relay in (("in this process", sink), ("apart", apart)):
                    reset_outbox(service)
                    svc = GameService(service.engine, replace(
                        settings, mail_images=LINK, dkim_key_file=rsa_key,
                        dkim_ed25519_key_file=ed_key))
                    sent, took, cpu, got = end_to_end(svc, args.batch, relay)
                    print(f"end to end, {label}, relay {where}: {sent / took:.1f} mails/s "
                          f"(link pictures; server received {got}); "
                          f"{sent / max(cpu, 1e-9):.0f} mails per CPU-second of the sender's "
                          f"process; aim 150/s: {'met' if sent / took >= 150 else 'NOT met'}")
                reset_outbox(service)
                signed = replace(settings, mail_images=LINK, dkim_key_file=rsa_key,
                                 dkim_ed25519_key_file=ed_key)
                sent, took, got = senders_apart(signed, args.batch, apart, 2)
                print(f"end to end, {label}, two senders at once, relay apart: "
                      f"{sent / took:.1f} mails/s (link pictures; server received {got}); "
                      f"aim 150/s: {'met' if sent / took >= 150 else 'NOT met'}")

            # 4. the picture addresses answered by the web app
            picture_requests(settings, paths)
            service.engine.dispose()

        if args.link_only:
            return
        # 5. the listener's cost per move
        results: dict[str, tuple[int, float]] = {}
        for label, listen in [("without", False), ("with", True)] * 2:
            with database(args.pg) as url:
                upgrade(url)
                svc = GameService(make_engine(url), settings_for(url, None))
                if listen:
                    install(svc)
                game_rng = random.Random(args.seed)
                uid = new_game(svc, 0, game_rng)
                moves = 0
                t0 = time.perf_counter()
                while moves < args.moves:
                    if not bot_answer(svc, uid):
                        uid = new_game(svc, moves + 1, game_rng)
                        continue
                    moves += 1
                took = time.perf_counter() - t0
                if label not in results or took < results[label][1]:
                    results[label] = (moves, took)  # the better of two runs
                svc.engine.dispose()
        (m0, s0), (m1, s1) = results["without"], results["with"]
        print(f"listener    {m1:5d} moves: {rate(m0, s0)} without the outbox, "
              f"{rate(m1, s1)} with it (each move: read state, options, submit)")
    finally:
        controller.stop()
        apart.close()


if __name__ == "__main__":
    main()
