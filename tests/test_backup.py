"""``titanpost admin backup`` / ``admin restore`` (app/features/backup/backups.py), on SQLite and
PostgreSQL.

Games are built with the real service (created, accepted, started, played, a resignation, a
pause, an abandoned and an open game, a race of computers to its end, away dates, a queued
reply, the clock's last tick); the backup is made with the command and restored into an empty
database of the same kind and of the other kind. Every game must then replay identically and
verify, every table hold the same rows (the same ids), the players' API tokens still work and
new games and moves get new ids. A restore into a database with games, a damaged file and a
backup from an unknown schema are refused with one line and change nothing. A backup taken
while another thread keeps moving is one consistent moment.
"""

from __future__ import annotations

import gzip
import json
import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from click.testing import CliRunner, Result
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from sqlmodel import Session, SQLModel, col, select

from app.core.config import Settings
from app.core.db import make_engine
from app.core.migrate import current, head, upgrade
from app.core.models import (
    FINISHED,
    Absence,
    ApiToken,
    BotTurn,
    ChatMessage,
    ClockTick,
    Deadline,
    Game,
    GameNote,
    IdempotencyKey,
    InboundMail,
    MailAddress,
    Move,
    OutboxMail,
    PlayerGroup,
    PlayerGroupMember,
    PushDelivery,
    PushKey,
    PushSubscription,
    SealedOrder,
    Seat,
    SignIn,
    Snapshot,
    Takeback,
    Webhook,
    WebhookDelivery,
)
from app.features.backup import backups
from app.features.chat import messages as chat
from app.features.clock import botturns
from app.features.clock.timekeeper import install as install_timekeeper
from app.features.delivery.standing import record_bounce
from app.features.notes import notes
from app.features.push.notifications import b64url, subscribe, vapid_keys
from app.features.signin.signins import ask_link
from app.features.standings import groups as standings_groups
from app.features.takeback.takebacks import install as install_takebacks
from app.features.webhooks.hooks import add_webhook
from app.listeners import build_service
from app.mail.addresses import reply_address
from app.mail.inbound_queue import queue_inbound
from app.service import GameMovedOn, GameService, NotPlaying
from app.web.idempotency import Claim, IdempotencyStore
from cli.main import main
from tests.dbutil import fresh_postgres, fresh_sqlite, pg_unavailable_reason

pytestmark = pytest.mark.usefixtures("quick_searches")  # (how well computers play: not here)

MODELS: tuple[type[SQLModel], ...] = (Game, Seat, Move, SealedOrder, Snapshot, ApiToken,
                                      OutboxMail, Deadline, Absence, InboundMail, ClockTick,
                                      IdempotencyKey, ChatMessage, Webhook, WebhookDelivery,
                                      PushKey, PushSubscription, PushDelivery, Takeback, SignIn,
                                      BotTurn, MailAddress, GameNote, PlayerGroup,
                                      PlayerGroupMember)
TABLES = tuple(str(model.__tablename__) for model in MODELS)
KINDS = ("sqlite", "postgresql")


def env_of(url: str) -> dict[str, str | None]:
    unset: dict[str, str | None] = {k: None for k in os.environ if k.startswith("TITANPOST_")}
    return unset | {"TITANPOST_DATABASE_URL": url, "TITANPOST_ENV": "test",
                    "TITANPOST_SNAPSHOT_EVERY": "5", "COLUMNS": "100", "NO_COLOR": "1"}


def run(url: str, *args: str) -> Result:
    return CliRunner().invoke(main, ["admin", *args], env=env_of(url))


def ok(url: str, *args: str) -> Result:
    result = run(url, *args)
    assert result.exit_code == 0, result.output
    return result


def service_on(url: str) -> GameService:
    return build_service(Settings.from_env({k: v for k, v in env_of(url).items() if v}), url)


def error_line(result: Result) -> str:
    """A refusal: exactly one line on standard error (nothing on standard output), exit 1."""
    assert result.exit_code == 1, result.output
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("Error: "), lines[0]
    assert not result.stdout.strip(), result.stdout
    return lines[0]


def kind_of(url: str) -> str:
    return "sqlite" if url.startswith("sqlite") else "postgresql"


_PG: list[str | None] = []


@contextmanager
def fresh(kind: str, folder: Path) -> Iterator[str]:
    """A new, empty database of ``kind`` (no schema)."""
    if kind == "sqlite":
        folder.mkdir(parents=True, exist_ok=True)
        with fresh_sqlite(folder) as url:
            yield url
        return
    if not _PG:
        _PG.append(pg_unavailable_reason())
    if _PG[0] is not None:
        pytest.skip(_PG[0])
    with fresh_postgres() as url:
        yield url


# ---------------------------------------------------------------------- what the database holds


def _plain(value: Any) -> Any:
    if isinstance(value, datetime):  # SQLite gives naive UTC times back
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
    return value


def table_rows(url: str) -> dict[str, list[dict[str, Any]]]:
    """Every row of every table, in primary-key order, with times in UTC."""
    engine = make_engine(url)
    try:
        with Session(engine) as s:
            found: dict[str, list[dict[str, Any]]] = {}
            for model in MODELS:
                keys = list(sa.inspect(model).primary_key)
                found[str(model.__tablename__)] = [
                    {k: _plain(v) for k, v in row.model_dump().items()}
                    for row in s.exec(select(model).order_by(*keys)).all()
                ]
            return found
    finally:
        engine.dispose()


def counts(url: str) -> dict[str, int]:
    return {name: len(rows) for name, rows in table_rows(url).items()}


# ---------------------------------------------------------------------- games, with the service


@dataclass
class World:
    """What was built: the games' ids and each API token with the seat it must authenticate."""

    uids: list[str] = field(default_factory=list)
    tokens: dict[str, tuple[str, int, str]] = field(default_factory=dict)
    creators: dict[str, str] = field(default_factory=dict)


def play(service: GameService, uid: str, decisions: int) -> int:
    """Answer up to ``decisions`` decisions of human seats with their first legal option; the
    number answered (fewer when the game ends)."""
    answered = 0
    for _ in range(decisions):
        summary = service.state(uid, None)["game"]
        if summary["status"] != "active" or summary["paused"] or not summary["to_act"]:
            break
        position = summary["to_act"][0]
        options = service.options(uid, position)
        service.submit(uid, position, options["seq"], options["options"][0])
        answered += 1
    return answered


def play_with_worker(service: GameService, uid: str, decisions: int) -> None:
    """:func:`play`, the worker playing the normal and strong computer seats, until the humans
    have answered ``decisions`` decisions and the worker has played at least one."""
    answered, worked = 0, 0
    for _ in range(200):
        summary = service.state(uid, None)["game"]
        if answered >= decisions and worked:
            return
        if any(seat["level"] in ("normal", "strong") for seat in summary["seats"]
               if seat["position"] in summary["to_act"]):
            worked += botturns.run_due(service, "backup-worker").played
        else:
            answered += play(service, uid, 1)
    raise AssertionError("the worker never played")


def new_game(service: GameService, world: World, prefix: str, *, accept: int = 3,
             bots: int = 0, start: bool = True, bot_level: str = "easy",
             **settings: Any) -> str:
    seats: list[dict[str, Any]] = [{"email": f"{prefix}{i}@example.org", "language": "en"}
                                   for i in range(3 - bots)]
    seats += [{"bot": True} for _ in range(bots)]
    created = service.create_game(seats=seats, name=f"game {prefix}", seed=11,
                                  settings=settings or None)
    uid = created["game"]
    world.uids.append(uid)
    world.creators[uid] = created["creator_token"]
    for invitation in created["invitations"][:accept]:
        accepted = service.accept(invitation["invite_token"], name=f"{prefix.upper()}"
                                  f"{invitation['position']}")
        world.tokens[accepted["api_token"]] = (uid, invitation["position"], invitation["email"])
    if start:
        service.start(uid, created["creator_token"], fill_with_bots=True, bot_level=bot_level)
    return uid


def build_world(service: GameService) -> World:
    world = World()
    keeper = install_timekeeper(service)
    race = new_game(service, world, "a", deadline_hours=24, bank_hours=12, increment_hours=1)
    # (a literal public address: nothing is resolved, nothing is sent)
    add_webhook(service, race, world.creators[race], "https://192.0.43.10/hook", "json")
    subscribe_devices(service, race)
    play(service, race, 1)
    takebacks = install_takebacks(service)  # a takeback asked and refused: nothing changes
    asked = takebacks.ask(race, service.export(race)["moves"][-1]["seat"])["takeback"]
    takebacks.answer(race, asked["voters"][0], None, False)
    play(service, race, 11)
    chat.post(service, race, 1, "Nice move\nreally")
    notes.add_note(service, race, 1, "My plan:\nkeep the shield", 3)  # (private: its own row)
    service.resign(race, 2)  # the computer plays seat 2 from now on
    play(service, race, 6)
    paused = new_game(service, world, "b", accept=2, bot_level="strong")  # the worker's seat
    play_with_worker(service, paused, 4)
    service.pause(paused, world.creators[paused], reason="holidays")
    abandoned = new_game(service, world, "c", accept=1, start=False)
    service.abandon(abandoned, world.creators[abandoned])
    waiting = new_game(service, world, "d", accept=1, start=False)  # open: a seat invited
    # its invitation sent again with an Idempotency-Key (whose stored answer is backed up)
    keys = IdempotencyStore(service.engine, service.settings.secret_key)
    claim = keys.claim("credential:x", "backup-key", "print", status=201)
    assert isinstance(claim, Claim)
    service.invite(waiting, world.creators[waiting], 1, "d1@example.org", idempotency=claim)
    finished = new_game(service, world, "e", bots=3)  # the computers race to the end
    assert service.state(finished, None)["game"]["status"] == FINISHED
    soon = datetime.now(UTC) + timedelta(days=3)
    keeper.set_absence("a0@example.org", soon, soon + timedelta(days=7), "stretch")
    keeper.set_absence("b1@example.org", soon, soon + timedelta(days=2), "computer")
    settings = service.settings
    raw = (b"From: a1@example.org\r\nTo: x\r\nSubject: Re: your turn\r\n"
           b"Message-ID: <reply-1@example.org>\r\n\r\npass\r\n")
    queue_inbound(service.engine, settings,
                  reply_address(settings.secret_key, settings.mail_domain, race, 1), raw,
                  sender="a1@example.org")
    ask_link(service, "a0@example.org", "192.0.2.1", "en")  # a sign-in link, mailed
    friends = standings_groups.make(service, "a0@example.org", "Friday")  # a standings group
    standings_groups.add(service, "a0@example.org", friends["group"], "a1@example.org")
    with service.session(write=True) as s:  # an address that bounced for good
        record_bounce(s, "c0@example.org", "550 5.1.1 no such user", datetime.now(UTC),
                      permanent=True)
        s.commit()
    keeper.process_due(datetime.now(UTC))  # the clock's last tick (nothing is due yet)
    return world


def subscribe_devices(service: GameService, uid: str) -> None:
    """A Web Push subscription for each seat of game ``uid`` (its turns then write push rows),
    and the server's VAPID key."""
    vapid_keys(service.engine)
    with service.session() as s:
        seat_ids = [seat.id for seat in service.load(s, uid).seats]
    for number, seat_id in enumerate(seat_ids):
        assert seat_id is not None
        point = ec.generate_private_key(ec.SECP256R1()).public_key().public_bytes(
            serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)
        subscribe(service, seat_id, {"endpoint": f"https://192.0.43.10/push/{number}",
                                     "keys": {"p256dh": b64url(point),
                                              "auth": b64url(os.urandom(16))}})


def check_world_is_rich(url: str) -> None:
    """Every table holds rows worth restoring: open deadlines, unsent mail, snapshots..."""
    rows = table_rows(url)
    # sealed_orders fills only in a Great Race game's planning, which the service does not host
    # yet (issue 13); its rows are still backed up and compared like every other table's.
    assert all(rows[name] for name in TABLES if name != "sealed_orders"), {
        n: len(r) for n, r in rows.items()}
    assert any(r["done_at"] is None for r in rows["deadlines"])
    assert any(r["sent_at"] is None for r in rows["outbox"])
    assert {r["kind"] for r in rows["moves"]} >= {"move", "resign", "pause"}
    assert {r["actor"] for r in rows["moves"]} >= {"player", "computer", "owner"}
    assert {r["status"] for r in rows["games"]} == {"active", "abandoned", "open", "finished"}


# ---------------------------------------------------------------------- the round trip


@pytest.mark.parametrize("target_kind", ["same", "other"])
def test_a_restore_replays_identically(migrated_database_url: str, tmp_path: Path,
                                       target_kind: str) -> None:
    source = service_on(migrated_database_url)
    world = build_world(source)
    check_world_is_rich(migrated_database_url)
    before = table_rows(migrated_database_url)
    file = tmp_path / "titanpost.backup.gz"

    result = ok(migrated_database_url, "backup", str(file))
    assert f"backed up 5 game(s), {len(before['moves'])} log entries" in result.stdout
    assert file.stat().st_mode & 0o777 == 0o600
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
    header = backups.read_header(file)
    assert header["format"] == "titanpost-backup" and header["schema"] == head()
    assert {t["name"]: t["rows"] for t in header["tables"]} == {n: len(r)
                                                                for n, r in before.items()}

    kind = kind_of(migrated_database_url)
    other = next(k for k in KINDS if k != kind) if target_kind == "other" else kind
    with fresh(other, tmp_path / "target") as target:
        if target_kind == "same":
            upgrade(target)  # an empty database at the current schema
        # (the other kind gets no schema: restore creates it)
        result = ok(target, "restore", str(file))
        started = len(source.started_games())
        assert f"every game replays to its log, its hash chain and its snapshots ({started} " \
               "checked)" in result.stdout
        assert current(target) == head()

        assert table_rows(target) == before
        restored = service_on(target)
        try:
            for uid in world.uids:
                assert restored.replay(uid) == source.replay(uid), uid
                assert restored.log(uid) == source.log(uid), uid
            assert restored.verify_all() == {}
            for token, seat in world.tokens.items():
                assert restored.seat_for_token(token) == seat
            # New rows get new ids (PostgreSQL's sequences were moved past the restored ones)
            race = world.uids[0]
            assert play(restored, race, 2) == 2
            added = new_game(restored, World(), "z")
            assert play(restored, added, 1) == 1
            after = table_rows(target)
            for name in ("games", "seats", "api_tokens", "outbox", "deadlines"):
                assert len(after[name]) > len(before[name]), name
            assert restored.verify_all() == {}
        finally:
            restored.engine.dispose()
    source.engine.dispose()


def test_without_snapshots(tmp_path: Path) -> None:
    with fresh("sqlite", tmp_path / "source") as url, fresh("sqlite", tmp_path / "t") as target:
        upgrade(url)
        service = service_on(url)
        build_world(service)
        file = tmp_path / "small.gz"
        ok(url, "backup", "--without-snapshots", str(file))
        assert "snapshots" not in {t["name"] for t in backups.read_header(file)["tables"]}
        ok(target, "restore", str(file))
        restored = counts(target)
        assert restored["snapshots"] == 0
        assert restored == counts(url) | {"snapshots": 0}
        service.engine.dispose()


# ---------------------------------------------------------------------- refusals


def test_a_database_with_games_is_refused_unchanged(
        migrated_database_url: str, tmp_path: Path) -> None:
    source = service_on(migrated_database_url)
    build_world(source)
    file = tmp_path / "backup.gz"
    ok(migrated_database_url, "backup", str(file))
    before = table_rows(migrated_database_url)
    line = error_line(run(migrated_database_url, "restore", str(file)))
    assert "already holds data" in line and "games: 5" in line
    assert table_rows(migrated_database_url) == before

    with fresh(kind_of(migrated_database_url), tmp_path / "one-game") as target:
        upgrade(target)
        other = service_on(target)
        new_game(other, World(), "q", start=False)
        held = table_rows(target)
        line = error_line(run(target, "restore", str(file)))
        assert "games: 1, seats: 3" in line
        assert table_rows(target) == held
        other.engine.dispose()
    source.engine.dispose()


def _damaged(good: Path, folder: Path) -> dict[str, Path]:
    """Ways a backup file can be broken, each in its own file."""
    folder.mkdir()
    data = good.read_bytes()
    lines = gzip.decompress(data).splitlines(keepends=True)
    header = json.loads(lines[0])

    def write(name: str, content: bytes, *, compress: bool = True) -> None:
        (folder / name).write_bytes(gzip.compress(content) if compress else content)

    write("truncated", data[: len(data) // 2], compress=False)
    write("cut-at-a-line", b"".join(lines[: len(lines) // 2]))
    write("no-end-line", b"".join(lines[:-1]))
    flipped = bytearray(data)
    flipped[len(data) // 2] ^= 0xFF
    write("flipped-byte", bytes(flipped), compress=False)
    write("not-gzip", b"".join(lines), compress=False)
    write("empty", b"", compress=False)
    write("not-json", lines[0] + b"{this is not json\n" + b"".join(lines[1:]))
    write("unknown-table", lines[0] + b'{"t":"nope","r":[1]}\n' + b"".join(lines[1:]))
    write("short-row", lines[0] + b'{"t":"games","r":[1]}\n' + b"".join(lines[1:]))
    write("extra-row", b"".join(lines[:-1]) + lines[-2] + lines[-1])
    newer = header | {"schema": "9999"}
    write("newer-schema", json.dumps(newer).encode() + b"\n" + b"".join(lines[1:]))
    write("other-format", json.dumps(header | {"format": "x"}).encode() + b"\n")
    return {p.name: p for p in folder.iterdir()} | {"missing": folder / "missing"}


def test_a_damaged_backup_is_refused_with_one_line(
        migrated_database_url: str, tmp_path: Path) -> None:
    source = service_on(migrated_database_url)
    build_world(source)
    good = tmp_path / "good.gz"
    ok(migrated_database_url, "backup", str(good))
    with fresh(kind_of(migrated_database_url), tmp_path / "target") as target:
        upgrade(target)
        empty = counts(target)
        assert not any(empty.values())
        for name, path in sorted(_damaged(good, tmp_path / "damaged").items()):
            line = error_line(run(target, "restore", str(path)))
            expected = {"newer-schema": "does not know", "other-format": "not a Titan Post",
                        "empty": "not a Titan Post", "missing": "cannot read"}
            assert expected.get(name, "not a complete Titan Post backup") in line, (name, line)
            assert counts(target) == empty, name
        ok(target, "restore", str(good))  # and the good one still restores
    source.engine.dispose()


# ---------------------------------------------------------------------- consistency


class _Slow:
    """A progress report that dawdles, so that the other thread moves during the backup."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    def start(self, total: int) -> None:
        pass

    def advance(self, table: str, rows: int) -> None:
        self.seen.append(table)
        time.sleep(0.01)


def test_a_backup_while_players_move_is_consistent(
        migrated_database_url: str, tmp_path: Path) -> None:
    service = service_on(migrated_database_url)
    world = World()
    new_game(service, world, "r", bots=3)  # a whole race of computers: many rows to read
    uid = new_game(service, world, "m")
    stop = threading.Event()
    moved = threading.Event()
    errors: list[BaseException] = []

    def keep_moving() -> None:
        mover = service_on(migrated_database_url)
        current_uid, made = uid, 0
        try:
            while not stop.is_set():
                try:
                    answered = play(mover, current_uid, 1)
                except (GameMovedOn, NotPlaying):
                    continue
                if not answered:  # the race is over: another one
                    current_uid = new_game(mover, World(), f"n{made}")
                made += 1
                if made % 15 == 0:  # and now and then a whole race of computers
                    new_game(mover, World(), f"k{made}", bots=3)
                if made >= 5:
                    moved.set()
        except BaseException as exc:
            errors.append(exc)
            moved.set()
        finally:
            mover.engine.dispose()

    thread = threading.Thread(target=keep_moving, daemon=True)
    thread.start()
    try:
        assert moved.wait(60)
        file = tmp_path / "busy.gz"
        slow = _Slow()
        summary = backups.backup(service.engine, file, progress=slow, batch=5)
        moves_after = counts(migrated_database_url)["moves"]
    finally:
        stop.set()
        thread.join(60)
    assert not errors, errors
    assert len(slow.seen) > 20
    assert moves_after > summary.tables["moves"], "nothing moved while the backup ran"

    # The dump itself: every move, seat and snapshot belongs to a game in it, and its hash
    # chains are whole (the restore replays every game).
    rows: dict[str, list[list[Any]]] = {}
    with gzip.open(file, "rt", encoding="utf-8") as lines:
        header = json.loads(next(lines))
        for line in lines:
            entry = json.loads(line)
            if "t" in entry:
                rows.setdefault(entry["t"], []).append(entry["r"])
    columns = {t["name"]: [c for c, _ in t["columns"]] for t in header["tables"]}
    games = {row[columns["games"].index("id")] for row in rows["games"]}
    for table in ("seats", "moves", "snapshots", "deadlines"):
        index = columns[table].index("game_id")
        assert {row[index] for row in rows.get(table, [])} <= games, table
    with fresh("sqlite", tmp_path / "restored") as target:
        result = ok(target, "restore", str(file))
        assert "every game replays" in result.stdout
        restored = service_on(target)
        assert restored.verify_all() == {}
        heads = dict(restored.engine.connect().execute(sa.text(
            "SELECT game_id, max(seq) FROM moves GROUP BY game_id")).all())
        assert sum(heads.values()) == summary.tables["moves"]
        restored.engine.dispose()
    service.engine.dispose()


# ---------------------------------------------------------------------- an older schema


def test_a_backup_of_an_older_schema_restores_upgraded(tmp_path: Path) -> None:
    """A database still at revision 0002 (before the clock) is backed up; the restore into a
    new database creates the schema at 0002, loads it and upgrades it, and the game replays."""
    with fresh("sqlite", tmp_path / "now") as now_url, \
            fresh("sqlite", tmp_path / "old") as old_url:
        upgrade(now_url)
        service = service_on(now_url)
        world = World()
        uid = new_game(service, world, "o")
        assert play(service, uid, 5) == 5
        upgrade(old_url, "0002")
        # Copy the game into the old schema (its moves are all players' moves: their hashes
        # do not depend on the columns added since).
        now_engine, old_engine = make_engine(now_url), make_engine(old_url)
        old = sa.MetaData()
        old.reflect(bind=old_engine)
        with now_engine.connect() as reading, old_engine.begin() as writing:
            for name in ("games", "seats", "moves", "api_tokens"):
                table = old.tables[name]
                rows = [_older(name, dict(row)) for row in
                        reading.execute(sa.text(f"SELECT * FROM {name}")).mappings().all()]
                writing.execute(table.insert(), [{c.name: _typed(c, row[c.name])
                                                  for c in table.columns} for row in rows])
        now_engine.dispose()
        old_engine.dispose()
        file = tmp_path / "old.gz"
        ok(old_url, "backup", str(file))
        assert backups.read_header(file)["schema"] == "0002"

        with fresh("sqlite", tmp_path / "at-head") as at_head:
            upgrade(at_head)
            line = error_line(run(at_head, "restore", str(file)))
            assert "restore into a new database without a schema" in line
        with fresh("sqlite", tmp_path / "new") as target:
            result = ok(target, "restore", str(file))
            assert "upgraded the schema from 0002 to" in result.stdout
            assert "every game replays" in result.stdout
            assert current(target) == head()
            restored = service_on(target)
            assert restored.replay(uid) == service.replay(uid)
            for token, seat in world.tokens.items():
                assert restored.seat_for_token(token) == seat
            restored.engine.dispose()
        service.engine.dispose()


def _older(table: str, row: dict[str, Any]) -> dict[str, Any]:
    """A Titan Race game's row with the columns it had before 0013: its circuits, a seat's
    titans and team (where it now has its setup and pieces)."""
    if table == "games":
        row["circuits"] = json.dumps(json.loads(row["setup"])["circuits"])
    elif table == "seats":
        pieces = json.loads(row["pieces"])
        row["titans"], row["team"] = json.dumps(pieces["titans"]), pieces.get("team")
    return row


def _typed(column: sa.Column[Any], value: Any) -> Any:
    """A raw SQLite value for a reflected column (JSON text parsed, times read)."""
    if value is None:
        return None
    if isinstance(column.type, sa.JSON) and isinstance(value, str):
        return json.loads(value)
    if isinstance(column.type, sa.DateTime) and isinstance(value, str):
        return datetime.fromisoformat(value)
    if isinstance(column.type, sa.Boolean):
        return bool(value)
    return value


def test_backup_refuses_a_database_without_schema(tmp_path: Path) -> None:
    with fresh("sqlite", tmp_path / "none") as url:
        line = error_line(run(url, "backup", str(tmp_path / "x.gz")))
        assert "There is no database at sqlite:///" in line  # (and none is made on the way)
        assert not list((tmp_path / "none").glob("*.db"))
        sa.create_engine(url).connect().close()  # an empty SQLite file
        line = error_line(run(url, "backup", str(tmp_path / "x.gz")))
        assert "no Titan Post schema" in line
        assert not list(tmp_path.glob("x.gz*")) and not list(tmp_path.glob(".x.gz*"))
        line = error_line(run(url, "backup", str(tmp_path / "no" / "such" / "x.gz")))
        assert "does not exist" in line


def test_ids_kept(tmp_path: Path) -> None:
    """Ids with gaps (rows deleted from the outbox, say) come back as they were."""
    with fresh("sqlite", tmp_path / "a") as url, fresh("sqlite", tmp_path / "b") as target:
        upgrade(url)
        service = service_on(url)
        build_world(service)
        with service.session(write=True) as s:
            first = s.exec(select(OutboxMail).order_by(col(OutboxMail.id))).first()
            assert first is not None
            s.delete(first)
            s.commit()
        file = tmp_path / "gaps.gz"
        ok(url, "backup", str(file))
        ok(target, "restore", str(file))
        assert table_rows(target) == table_rows(url)
        service.engine.dispose()
