"""Standings benchmark: how long one table's figures and ratings take for 100 and 1,000
finished games (app/features/standings/).

    python3 bench/standings.py [--games 100,1000] [--played 10] [--pg postgresql://...]

For each count, a fresh database (a SQLite file, or a scratch PostgreSQL database with
``--pg``) gets that many finished Titan Race games among six friends and the computer (three
to five seats each, random places, a game a day), made as tests/standings_games.py makes them:
created, accepted, and finished at an engine state built to give those places. Then it prints,
for the automatic table of one friend (who sat in every game):

- cold: the first read in this process (every game's final state read and placed once);
- warm: the same table again (the places kept in the process: the database read, the rating);
- rating alone: openskill's Weng-Lin over the games' places, without the database.

A game played to its end has a log to replay from its last snapshot; ``--played N`` plays N
such games for real (both people resign, the computer plays on) and prints what reading one of
them cold costs, to scale the cold figure with. Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.core.config import Settings
from app.core.migrate import upgrade
from app.features.standings import tables
from app.features.standings.figures import figures
from app.features.standings.standings import automatic
from app.listeners import build_service
from app.service import GameService
from tests.standings_games import Player, computer, finished_game

FRIENDS = [Player(f"friend{i}@bench.example", f"Friend {i}") for i in range(6)]
START = datetime(2026, 1, 1, 20, 0, tzinfo=UTC)


@contextmanager
def database(pg: str | None, folder: Path) -> Iterator[str]:
    if pg is None:
        yield f"sqlite:///{folder / f'standings-{uuid.uuid4().hex[:8]}.db'}"
        return
    import psycopg

    name = f"bench_standings_{uuid.uuid4().hex[:8]}"
    admin = pg.replace("postgresql+psycopg://", "postgresql://", 1)
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield f"{pg.rsplit('/', 1)[0]}/{name}".replace("postgresql://", "postgresql+psycopg://")
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def make_service(url: str) -> GameService:
    upgrade(url)
    return build_service(Settings.from_env({"TITANPOST_DATABASE_URL": url,
                                            "TITANPOST_ENV": "test"}))


def populate(service: GameService, games: int, rng: random.Random) -> None:
    """``games`` finished games, each with Friend 0 and two to four others."""
    for day in range(games):
        others = rng.sample([*FRIENDS[1:], computer("easy"), computer("strong")],
                            rng.randint(2, 4))
        seats = [FRIENDS[0], *others]
        rng.shuffle(seats)
        places = list(range(1, len(seats) + 1))
        rng.shuffle(places)
        if rng.random() < 0.2:  # now and then two share a place (not the first)
            tied = [i for i, place in enumerate(places) if place > 1][:2]
            if len(tied) == 2:
                places[tied[1]] = places[tied[0]]
        finished_game(service, seats, places, START + timedelta(days=day))


def timed(run: object) -> float:
    started = time.perf_counter()
    assert callable(run)
    run()
    return time.perf_counter() - started


def measure(service: GameService, games: int) -> None:
    season = tables.Season()
    tables.PLACES.clear()
    viewer = FRIENDS[0].email
    cold = timed(lambda: automatic(service, viewer, "titan-race", season))
    warm = min(timed(lambda: automatic(service, viewer, "titan-race", season))
               for _ in range(3))
    found = tables.address_table(service, viewer, "titan-race", season)
    assert len(found) == games, len(found)
    rating = min(timed(lambda: figures(found)) for _ in range(3))
    print(f"{games:>5} games: cold {cold * 1000:8.1f} ms   warm {warm * 1000:8.1f} ms   "
          f"rating alone {rating * 1000:7.1f} ms")


def played(service: GameService, count: int) -> None:
    """``count`` games played to the end for real; the cold read of one, on average."""
    uids = []
    for _ in range(count):
        created = service.create_game(seats=[{"email": FRIENDS[1].email},
                                             {"email": FRIENDS[2].email}, {"bot": True}],
                                      seed=None)
        tokens = [service.accept(inv["invite_token"]) for inv in created["invitations"]]
        assert len(tokens) == 2
        service.start(created["game"], created["creator_token"])
        for position in (0, 1):
            service.resign(created["game"], position)
        uids.append(created["game"])
    tables.PLACES.clear()
    fresh = make_service(service.settings.database_url)  # (no state kept in its process)
    started = time.perf_counter()
    with fresh.session() as s:
        from sqlmodel import col, select

        from app.core.models import Game

        rows = list(s.exec(select(Game).where(col(Game.uid).in_(uids))).all())
        tables.places_of(fresh, s, rows)
    each = (time.perf_counter() - started) / max(1, count)
    print(f"a game played to its end, read cold: {each * 1000:.1f} ms each ({count} games)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", default="100,1000")
    parser.add_argument("--played", type=int, default=10)
    parser.add_argument("--pg", default=None, help="a PostgreSQL server's URL (a scratch "
                        "database is made on it)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        for games in [int(n) for n in args.games.split(",") if n.strip()]:
            with database(args.pg, Path(folder)) as url:
                service = make_service(url)
                started = time.perf_counter()
                populate(service, games, random.Random(5))
                made = time.perf_counter() - started
                print(f"({games} games made in {made:.1f} s)")
                measure(service, games)
                if games == max(int(n) for n in args.games.split(",")) and args.played:
                    played(service, args.played)
                service.engine.dispose()


if __name__ == "__main__":
    main()
