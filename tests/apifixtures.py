"""Fixtures and helpers for the game service and JSON API tests.

Every database here is real (a fresh SQLite file or a fresh PostgreSQL database from
``tests/conftest.py``) and is migrated by :func:`app.core.migrate.upgrade`, never ``create_all``.
Test modules load the fixtures with ``pytest_plugins = ["tests.apifixtures"]`` (importing
fixture names would shadow them in every test's arguments) and import the helpers by name.
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
import sqlalchemy as sa
from flask.testing import FlaskClient

from app import create_app
from app.core.config import Settings
from app.core.db import make_engine
from app.features.clock.timekeeper import Timekeeper
from app.features.clock.timekeeper import install as install_timekeeper
from app.games import ruleset
from app.service import GameService
from tests.dbutil import migrate

ADMIN_TOKEN = "admin-token-for-the-tests-0123456789"
MAX_BODY_BYTES = 16 * 1024
SEED = 5
TEST_RATE_LIMIT = "100000/minute"


def base_env(database_url: str, **extra: str) -> dict[str, str]:
    """The settings environment of a test server (``TITANPOST_*`` only, nothing from the OS)."""
    return {
        "TITANPOST_DATABASE_URL": database_url,
        "TITANPOST_ADMIN_TOKEN": ADMIN_TOKEN,
        "TITANPOST_ENV": "test",
        "TITANPOST_MAX_BODY_BYTES": str(MAX_BODY_BYTES),
        # the limits are on (their code runs in every test) but far above what tests send
        "TITANPOST_RATE_LIMIT_LINKS": TEST_RATE_LIMIT,
        "TITANPOST_RATE_LIMIT_LOGIN": TEST_RATE_LIMIT,
        "TITANPOST_RATE_LIMIT_REFUSALS": TEST_RATE_LIMIT,
        **extra,
    }


CSRF_FIELD = re.compile(r'name="csrf_token" value="([^"]+)"')


def csrf_token(page: str) -> str:
    """The CSRF token of the form on ``page`` (an HTML page's text)."""
    found = CSRF_FIELD.search(page)
    assert found, "no CSRF token on the page"
    return found.group(1)


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


@dataclass
class Table:
    """A game created through the API: its id, creator token, invitations and seat tokens."""

    uid: str
    creator_token: str
    invitations: dict[int, str]
    emails: dict[int, str]
    tokens: dict[int, str] = field(default_factory=dict)

    @property
    def creator(self) -> dict[str, str]:
        return {"X-Creator-Token": self.creator_token}

    def seat(self, position: int) -> dict[str, str]:
        return bearer(self.tokens[position])


@dataclass
class Api:
    """A migrated database, the app built on it, and helpers to drive games over HTTP."""

    url: str
    app: Any
    client: FlaskClient

    @property
    def service(self) -> GameService:
        svc: GameService = self.app.extensions["titanpost.service"]
        return svc

    @property
    def engine(self) -> sa.Engine:
        return self.service.engine

    # ------------------------------------------------------------- lifecycle over the API

    def create(
        self,
        seats: int | list[dict[str, Any]] = 3,
        *,
        prefix: str = "p",
        expect: int = 201,
        **body: Any,
    ) -> Table:
        if isinstance(seats, int):
            seats = [{"email": f"{prefix}{i}@example.com"} for i in range(seats)]
        body.setdefault("seed", SEED)
        # (a chosen seed is the admin's alone: the tests deal repeatable games as the admin)
        response = self.client.post("/api/games", json={"seats": seats, **body},
                                    headers=bearer(ADMIN_TOKEN) if body["seed"] is not None
                                    else None)
        assert response.status_code == expect, response.get_json()
        data = response.get_json()
        invitations = {inv["position"]: inv["invite_token"] for inv in data["invitations"]}
        emails = {inv["position"]: inv["email"] for inv in data["invitations"]}
        for inv in data["invitations"]:
            assert inv["link"].endswith("/join/" + inv["invite_token"])
        return Table(data["game"], data["creator_token"], invitations, emails)

    def accept_all(self, table: Table) -> Table:
        for position, invite in sorted(table.invitations.items()):
            response = self.client.post(
                "/api/invitations/accept", json={"invite_token": invite, "name": f"P{position}"}
            )
            assert response.status_code == 201, response.get_json()
            data = response.get_json()
            assert data["game"] == table.uid and data["position"] == position
            table.tokens[position] = data["api_token"]
        return table

    def start(self, table: Table, *, fill_with_bots: bool = False) -> dict[str, Any]:
        response = self.client.post(
            f"/api/games/{table.uid}/start",
            json={"fill_with_bots": fill_with_bots},
            headers=table.creator,
        )
        assert response.status_code == 200, response.get_json()
        data: dict[str, Any] = response.get_json()
        assert data["status"] in ("active", "finished")
        return data

    def new_started(self, seats: int = 3, **body: Any) -> Table:
        table = self.accept_all(self.create(seats, **body))
        self.start(table)
        return table

    # ------------------------------------------------------------- reading

    def state(self, uid: str, token: str | None = None) -> dict[str, Any]:
        response = self.client.get(
            f"/api/games/{uid}", headers=bearer(token) if token else None
        )
        assert response.status_code == 200, response.get_json()
        data: dict[str, Any] = response.get_json()
        return data

    def to_act(self, uid: str, token: str | None = None) -> list[int]:
        """GET /api/games/<uid> -> game.to_act (as a spectator unless a token is given)."""
        acting: list[int] = self.state(uid, token)["game"]["to_act"]
        return acting

    def options(self, table: Table, position: int) -> dict[str, Any]:
        response = self.client.get(f"/api/games/{table.uid}/options", headers=table.seat(position))
        assert response.status_code == 200, response.get_json()
        data: dict[str, Any] = response.get_json()
        return data

    def actor(self, table: Table) -> tuple[int, dict[str, Any]]:
        """The seat that must act now and its legal options (``yours`` is true for it)."""
        # A seat's token, so that games without spectators work too.
        acting = self.to_act(table.uid, next(iter(table.tokens.values()), None))
        assert len(acting) == 1, acting
        opts = self.options(table, acting[0])
        assert opts["yours"] is True and opts["options"], opts
        return acting[0], opts

    def log(self, uid: str) -> list[dict[str, Any]]:
        response = self.client.get(f"/api/games/{uid}/log")
        assert response.status_code == 200, response.get_json()
        moves: list[dict[str, Any]] = response.get_json()["moves"]
        return moves

    def submit(
        self, table: Table, position: int, expected_seq: int, text: str
    ) -> tuple[int, dict[str, Any]]:
        response = self.client.post(
            f"/api/games/{table.uid}/moves",
            json={"expected_seq": expected_seq, "input": text},
            headers=table.seat(position),
        )
        return response.status_code, response.get_json()

    def play(self, table: Table, moves: int) -> None:
        """Answer ``moves`` decisions with each seat's first legal option."""
        for _ in range(moves):
            position, opts = self.actor(table)
            status, body = self.submit(table, position, opts["seq"], opts["options"][0])
            assert status == 200 and body["applied"] is True, body

    # ------------------------------------------------------------- the database itself

    def scalar(self, sql: str, **params: Any) -> Any:
        with self.engine.connect() as conn:
            return conn.execute(sa.text(sql), params).scalar_one()

    def rows(self, sql: str, **params: Any) -> list[tuple[Any, ...]]:
        with self.engine.connect() as conn:
            return [tuple(row) for row in conn.execute(sa.text(sql), params)]

    def move_count(self, uid: str | None = None) -> int:
        if uid is None:
            return int(self.scalar("SELECT count(*) FROM moves"))
        return int(
            self.scalar(
                "SELECT count(*) FROM moves JOIN games ON games.id = moves.game_id "
                "WHERE games.uid = :uid",
                uid=uid,
            )
        )

    def observe(self, table: Table) -> dict[str, Any]:
        """Everything a refused request must leave unchanged."""
        return {
            "rows": self.move_count(),
            "game_rows": self.move_count(table.uid),
            "log": self.log(table.uid),
            "spectator": self.state(table.uid),
            "seats": {p: self.state(table.uid, t) for p, t in table.tokens.items()},
            "games": self.rows("SELECT uid, status, winner FROM games ORDER BY id"),
            "snapshots": self.scalar("SELECT count(*) FROM snapshots"),
        }


def make_api(database_url: str, **extra_env: str) -> Api:
    migrate(database_url)
    app = create_app(Settings.from_env(base_env(database_url, **extra_env)))
    app.config["TESTING"] = True
    return Api(database_url, app, app.test_client())


def dispose(api_: Api) -> None:
    """Close the app's pooled connections (before the test database is dropped)."""
    api_.engine.dispose()


def clock(api_: Api) -> Timekeeper:
    """The running app's timekeeper: ``clock(api).process_due(now=..., max_gap=None)`` moves
    the game clock on to ``now``."""
    return install_timekeeper(api_.service)


def table_rows(api_: Api, *tables: str) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of ``tables`` in a stable order (what a refused request must leave as it was)."""
    return {name: api_.rows(f"SELECT * FROM {name} ORDER BY 1") for name in tables}


@pytest.fixture
def api(migrated_database_url: str) -> Iterator[Api]:
    """The app on a fresh, migrated database of each kind (SQLite file, PostgreSQL)."""
    made = make_api(migrated_database_url)
    yield made
    dispose(made)


@pytest.fixture
def started(api: Api) -> Table:
    """A 3-seat game created over the API, every invitation accepted, started."""
    return api.new_started(3)


# ----------------------------------------------------------------- the service directly


def make_service(database_url: str, **extra_env: str) -> GameService:
    migrate(database_url)
    settings = Settings.from_env(base_env(database_url, **extra_env))
    return GameService(make_engine(settings.database_url), settings)


@pytest.fixture
def service(migrated_database_url: str) -> Iterator[GameService]:
    """A GameService on a fresh migrated database of each kind, a snapshot every 2 moves."""
    svc = make_service(migrated_database_url, TITANPOST_SNAPSHOT_EVERY="2")
    yield svc
    svc.engine.dispose()


def bot_game(svc: GameService, seats: int = 3, **kwargs: Any) -> str:
    """A game whose seats are all computer players: ``start`` plays it to the end."""
    created = svc.create_game(seats=[{"bot": True}] * seats, seed=SEED, **kwargs)
    summary = svc.start(created["game"], created["creator_token"])
    assert summary["status"] == "finished", summary
    uid: str = created["game"]
    return uid


def human_game(svc: GameService, seats: int = 3, **kwargs: Any) -> dict[str, Any]:
    """A started game of human seats: ``{"game", "creator_token", "tokens"}``."""
    created = svc.create_game(
        seats=[{"email": f"h{i}@example.com"} for i in range(seats)], seed=SEED, **kwargs
    )
    tokens = {}
    for inv in created["invitations"]:
        tokens[inv["position"]] = svc.accept(inv["invite_token"])["api_token"]
    svc.start(created["game"], created["creator_token"])
    return {**created, "tokens": tokens}


def replay_views(svc: GameService, uid: str) -> list[dict[str, Any]]:
    """The full view after each move, computed here from the log with the ruleset itself."""
    export = svc.export(uid)
    rules = ruleset(export["game"]["ruleset"])
    state = rules.load(export["game"]["initial_state"])
    views = [rules.view(state, None, False)]
    for move in export["moves"]:
        rules.apply(state, move["input"])
        views.append(rules.view(state, None, False))
    return views


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def run_titanpost(
    titanpost: str, *args: str, database_url: str | None = None, timeout: float = 60, **env: str
) -> subprocess.CompletedProcess[str]:
    """Run the installed ``titanpost`` command with a clean ``TITANPOST_*`` environment."""
    environ = {k: v for k, v in os.environ.items() if not k.startswith("TITANPOST_")}
    if database_url is not None:
        environ["TITANPOST_DATABASE_URL"] = database_url
    environ.update(env)
    return subprocess.run(
        [titanpost, *args],
        capture_output=True,
        text=True,
        env=environ,
        timeout=timeout,
        check=False,
    )
