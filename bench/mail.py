"""Mail benchmark: render outbox mails and deliver them to an SMTP server on loopback.

    python3 bench/mail.py [--games 100] [--moves 300] [--batch 50] [--pg URL]

In a temporary SQLite database (or a scratch PostgreSQL database with ``--pg``), migrated with
``app.migrate.upgrade``, the script sets up ``--games`` three-seat games (two players and the
computer), each played a random number of decisions into the race and left waiting for one of
its players, and writes the outbox rows the notifier writes for that moment: the decision mail to
the player whose turn it is and a "game started"-style mail to the other one (2 mails a game).
It then prints:

1. **render**: mails/s for rendering every row (templates in the seat's language, CSS inlined,
   the board SVG drawn and rendered to PNG, the MIME message built), with the share of time
   spent on the PNG and the average message and PNG sizes;
2. **deliver**: mails/s for sending the already rendered messages over one SMTP connection to
   an aiosmtpd server on 127.0.0.1 (the SMTP conversation alone);
3. **end to end**: mails/s for the sender itself (``Sender.run_once`` in a loop: claim a batch,
   render, deliver, record), as ``titanpost mail send`` does it;
4. **listener**: moves/s of ``GameService.submit`` with and without the outbox listener, over
   ``--moves`` moves, i.e. what writing the outbox row in the move's transaction costs.

Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import shutil
import smtplib
import socket
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from aiosmtpd.controller import Controller
from sqlalchemy import text

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import app.mail.render as render_module
from app.config import Settings
from app.db import make_engine
from app.mail.notify import Notifier, insert_rows, install
from app.mail.render import MailRenderer, build_message, envelope_sender
from app.mail.send import Sender
from app.migrate import upgrade
from app.models import OutboxMail
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


def settings_for(url: str, smtp_url: str | None) -> Settings:
    env = {
        "TITANPOST_DATABASE_URL": url,
        "TITANPOST_ENV": "test",
        "TITANPOST_SECRET_KEY": "bench-secret-key-0123456789abcdef",
        "TITANPOST_BASE_URL": "https://titanpost.example",
        "TITANPOST_MAIL_DOMAIN": "titanpost.example",
        "TITANPOST_MAIL_FROM": "Titan Post <post@titanpost.example>",
    }
    if smtp_url:
        env["TITANPOST_SMTP_URL"] = smtp_url
    return Settings.from_env(env)


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=100)
    parser.add_argument("--moves", type=int, default=300)
    parser.add_argument("--batch", type=int, default=50)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--pg", default=None,
                        help="admin URL of a PostgreSQL server (default: SQLite in a temp file)")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    sink = Sink()
    port = free_port()
    controller = Controller(sink, hostname="127.0.0.1", port=port)
    controller.start()
    try:
        with database(args.pg) as url:
            upgrade(url)
            settings = settings_for(url, f"smtp://127.0.0.1:{port}")
            service = GameService(make_engine(url), settings)
            started = time.perf_counter()
            mails = set_up(service, args.games, rng)
            print(f"database: {url.split('://', 1)[0]}; {args.games} games set up, "
                  f"{mails} outbox rows in {time.perf_counter() - started:.1f}s")
            from sqlmodel import col, select

            with service.session() as s:
                rows = list(s.exec(select(OutboxMail).order_by(col(OutboxMail.id))).all())

            # 1. rendering
            renderer = MailRenderer(service)
            png_time = [0.0]
            png_bytes = [0]
            original = render_module._png.__wrapped__

            def timed_png(svg: str, width: int) -> bytes:
                t = time.perf_counter()
                data = original(svg, width)
                png_time[0] += time.perf_counter() - t
                png_bytes[0] += len(data)
                return data

            render_module._png = timed_png  # type: ignore[assignment]
            messages = []
            t0 = time.perf_counter()
            for row in rows:
                mail = renderer.render(row)
                messages.append((row.recipient, build_message(settings, row, mail)))
            render_s = time.perf_counter() - t0
            render_module._png = render_module.lru_cache(maxsize=64)(original)
            sizes = [len(bytes(m)) for _, m in messages]
            share = 100 * png_time[0] / render_s
            print(f"render      {len(rows):5d} mails in {render_s:6.2f}s  "
                  f"{rate(len(rows), render_s)}   (board PNG {share:.0f}% of it; "
                  f"mail {sum(sizes) / len(sizes) / 1024:.0f} KiB, "
                  f"PNG {png_bytes[0] / max(1, len(rows)) / 1024:.0f} KiB on average)")

            # 2. SMTP delivery of rendered mail, one connection
            sender_address = envelope_sender(settings)
            t0 = time.perf_counter()
            with smtplib.SMTP("127.0.0.1", port) as smtp:
                for recipient, message in messages:
                    smtp.send_message(message, from_addr=sender_address, to_addrs=[recipient])
            deliver_s = time.perf_counter() - t0
            print(f"deliver     {len(messages):5d} mails in {deliver_s:6.2f}s  "
                  f"{rate(len(messages), deliver_s)}   (SMTP to aiosmtpd on 127.0.0.1)")

            # 3. the sender end to end (claim, render, deliver, record)
            received = sink.count
            sender = Sender(service, batch=args.batch)
            t0 = time.perf_counter()
            sent = 0
            while True:
                report = sender.run_once()
                sent += report.sent
                if report.claimed == 0:
                    break
            e2e_s = time.perf_counter() - t0
            print(f"end to end  {sent:5d} mails in {e2e_s:6.2f}s  {rate(sent, e2e_s)}"
                  f"   (Sender.run_once, batches of {args.batch}; "
                  f"server received {sink.count - received})")
            service.engine.dispose()

        # 4. the listener's cost per move
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


if __name__ == "__main__":
    main()
