"""The Alembic migrations build exactly the schema of the tables in app/core/models/, on SQLite
and PostgreSQL."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from click.testing import CliRunner
from sqlalchemy.exc import IntegrityError
from sqlmodel import SQLModel

import app.core.models  # noqa: F401  (registers the tables)
from app.core import migrate
from app.core.db import make_engine
from cli.db import db

ROOT = Path(__file__).resolve().parent.parent
APP_TABLES = set(SQLModel.metadata.tables)
APPEND_ONLY = "the move log is append-only: moves cannot be changed or deleted"
HEAD = "0023"  # the newest revision in migrations/versions


@pytest.fixture
def engine(database_url: str) -> Iterator[sa.Engine]:
    eng = make_engine(database_url)
    yield eng
    eng.dispose()


def _tables(engine: sa.Engine) -> set[str]:
    with engine.connect() as conn:
        return set(sa.inspect(conn).get_table_names())


def _diff(engine: sa.Engine, metadata: sa.MetaData) -> list[Any]:
    with engine.connect() as conn:
        context = MigrationContext.configure(
            conn, opts={"compare_type": True, "compare_server_default": True}
        )
        return list(compare_metadata(context, metadata))


def _guard_objects(engine: sa.Engine) -> set[str]:
    """The append-only triggers (and PostgreSQL function) present in the database."""
    with engine.connect() as conn:
        if engine.dialect.name == "sqlite":
            rows = conn.exec_driver_sql("SELECT name FROM sqlite_master WHERE type = 'trigger'")
            return {row[0] for row in rows}
        triggers = conn.exec_driver_sql(
            "SELECT tgname FROM pg_trigger WHERE NOT tgisinternal"
        ).fetchall()
        functions = conn.exec_driver_sql(
            "SELECT proname FROM pg_proc"
            " WHERE proname IN ('moves_append_only', 'sealed_orders_append_only',"
            " 'games_dealing_fixed')"
        ).fetchall()
        return {row[0] for row in triggers} | {row[0] + "()" for row in functions}


def _insert_game_and_move(engine: sa.Engine) -> dict[str, Any]:
    """A game and its first move, at the newest revision or at one before 0013 (whose games
    have ``circuits`` where they now have ``setup``)."""
    moves = SQLModel.metadata.tables["moves"]
    now = datetime.now(UTC)
    with engine.begin() as conn:
        older = "circuits" in {c["name"] for c in sa.inspect(conn).get_columns("games")}
        games = sa.Table("games", sa.MetaData(), autoload_with=conn)
        setup = {"circuits": ["kaldheira"]} if older else {"setup": {"circuits": ["kaldheira"]}}
        game_id = conn.execute(
            sa.insert(games).returning(games.c.id),
            {
                **setup,
                "uid": "g1",
                "name": "test",
                "ruleset": "titan-race",
                "engine_version": 1,
                "variant": "standard",
                "settings": {},
                "status": "active",
                "seed": 2**40,
                "creator_token_hash": "0" * 64,
                "created_at": now,
            },
        ).scalar_one()
        move = {
            "game_id": game_id,
            "seq": 1,
            "seat": 0,
            "input": "pick red",
            "outcomes": [[3]],
            "created_at": now,
            "prev_hash": "0" * 64,
            "hash": "1" * 64,
        }
        conn.execute(sa.insert(moves), move)
    return move


def _move_rows(engine: sa.Engine) -> list[tuple[Any, ...]]:
    moves = SQLModel.metadata.tables["moves"]
    with engine.connect() as conn:
        rows = conn.execute(sa.select(moves.c.game_id, moves.c.seq, moves.c.input, moves.c.hash))
        return [tuple(row) for row in rows]


def test_upgrade_creates_exactly_the_model_tables(database_url: str, engine: sa.Engine) -> None:
    assert _tables(engine) == set()
    assert migrate.current(database_url) is None
    migrate.upgrade(database_url)
    assert _tables(engine) == APP_TABLES | {"alembic_version"}
    assert migrate.current(database_url) == migrate.head() == HEAD


def test_migrated_schema_matches_the_models(database_url: str, engine: sa.Engine) -> None:
    migrate.upgrade(database_url)
    # Nothing is ignored: types, nullability, server defaults, indexes, unique constraints and
    # foreign keys are all compared. (On SQLite, DateTime(timezone=True) and DateTime() both
    # reflect as DATETIME, so the timezone flag is only checked on PostgreSQL: a limit of
    # SQLite, not something excluded here.)
    assert _diff(engine, SQLModel.metadata) == []


def test_schema_comparison_detects_drift(database_url: str, engine: sa.Engine) -> None:
    """Guard for the test above: the comparison does see a changed length or nullability."""
    migrate.upgrade(database_url)
    drifted = sa.MetaData(naming_convention=SQLModel.metadata.naming_convention)
    for table in SQLModel.metadata.sorted_tables:
        table.to_metadata(drifted)
    drifted.tables["games"].c.winner.type = sa.String(41)
    drifted.tables["seats"].c.bank_seconds.nullable = False
    kinds = sorted(diff[0][0] for diff in _diff(engine, drifted))
    assert kinds == ["modify_nullable", "modify_type"]


def test_constraint_and_index_names_follow_the_naming_convention(
    database_url: str, engine: sa.Engine
) -> None:
    # compare_metadata matches primary and foreign keys by their columns, not their names, so
    # check every name directly: later migrations refer to constraints by name.
    migrate.upgrade(database_url)
    with engine.connect() as conn:
        inspector = sa.inspect(conn)
        for table in SQLModel.metadata.sorted_tables:
            name = table.name
            assert inspector.get_pk_constraint(name)["name"] == table.primary_key.name
            expected_fks = {fk.name for fk in table.foreign_key_constraints}
            assert {fk["name"] for fk in inspector.get_foreign_keys(name)} == expected_fks
            expected_uqs = {c.name for c in table.constraints if isinstance(c, sa.UniqueConstraint)}
            assert {uq["name"] for uq in inspector.get_unique_constraints(name)} == expected_uqs
            expected_ix = {(ix.name, bool(ix.unique)) for ix in table.indexes}
            found_ix = {
                (ix["name"], bool(ix["unique"]))
                for ix in inspector.get_indexes(name)
                # PostgreSQL reports the unique constraints' backing indexes too.
                if ix["name"] not in expected_uqs
            }
            assert found_ix == expected_ix, name


def test_moves_are_append_only(database_url: str, engine: sa.Engine) -> None:
    migrate.upgrade(database_url)
    move = _insert_game_and_move(engine)
    before = _move_rows(engine)
    assert before == [(move["game_id"], 1, "pick red", "1" * 64)]

    moves = SQLModel.metadata.tables["moves"]
    statements = [
        sa.update(moves).where(moves.c.seq == 1).values(input="pick blue"),
        sa.delete(moves).where(moves.c.seq == 1),
        sa.delete(moves),
    ]
    if engine.dialect.name == "postgresql":
        statements.append(sa.text("TRUNCATE moves"))
    for statement in statements:
        # RAISE(ABORT) on SQLite and SQLSTATE 23001 on PostgreSQL: both an IntegrityError.
        with pytest.raises(IntegrityError, match=APPEND_ONLY), engine.begin() as conn:
            conn.execute(statement)
        assert _move_rows(engine) == before

    # Appending stays allowed.
    with engine.begin() as conn:
        conn.execute(sa.insert(moves), {**move, "seq": 2, "prev_hash": "1" * 64})
    assert [row[1] for row in _move_rows(engine)] == [1, 2]


def test_downgrade_to_base_and_upgrade_again(database_url: str, engine: sa.Engine) -> None:
    migrate.upgrade(database_url)
    migrate.upgrade(database_url)  # already at head: a no-op
    assert _guard_objects(engine)

    migrate.downgrade(database_url)
    # Alembic keeps its (now empty) version table at base.
    assert _tables(engine) - {"alembic_version"} == set()
    assert _guard_objects(engine) == set()
    assert migrate.current(database_url) is None

    migrate.upgrade(database_url)
    assert _tables(engine) == APP_TABLES | {"alembic_version"}
    assert _diff(engine, SQLModel.metadata) == []
    if engine.dialect.name == "sqlite":
        assert _guard_objects(engine) == {
            "moves_no_update",
            "moves_no_delete",
            "sealed_orders_no_update",
            "sealed_orders_no_delete",
            "games_dealing_fixed",
        }
    else:
        assert _guard_objects(engine) == {
            "moves_no_update_or_delete",
            "moves_no_truncate",
            "moves_append_only()",
            "sealed_orders_no_update_or_delete",
            "sealed_orders_no_truncate",
            "sealed_orders_append_only()",
            "games_dealing_fixed",
            "games_dealing_fixed()",
        }
    _insert_game_and_move(engine)
    with pytest.raises(IntegrityError, match=APPEND_ONLY), engine.begin() as conn:
        conn.execute(sa.delete(SQLModel.metadata.tables["moves"]))


def test_upgrade_on_a_given_connection(database_url: str, engine: sa.Engine) -> None:
    """env.py runs on a connection passed in config.attributes; the caller commits."""
    from alembic import command

    config = migrate.alembic_config(database_url)
    with engine.connect() as conn:
        config.attributes["connection"] = conn
        command.upgrade(config, "head")
        conn.commit()
    assert _tables(engine) == APP_TABLES | {"alembic_version"}
    assert migrate.current(database_url) == HEAD


def test_url_with_percent_sign(tmp_path: Path) -> None:
    """Alembic's config interpolates '%': percent-encoded URLs must reach env.py intact."""
    secret = "postgresql+psycopg://titan:p%40ss%25word@db.example/titanpost"
    assert migrate.alembic_config(secret).get_main_option("sqlalchemy.url") == secret
    folder = tmp_path / "odd name"
    folder.mkdir()
    url = f"sqlite:///{tmp_path}/odd%20name/titanpost.db"  # SQLAlchemy decodes the %20
    migrate.upgrade(url)
    assert migrate.current(url) == HEAD
    assert (folder / "titanpost.db").is_file()


# --- the command line -------------------------------------------------------------------------


def test_db_group_upgrade_current_downgrade(database_url: str, engine: sa.Engine) -> None:
    runner = CliRunner()
    env = {"TITANPOST_DATABASE_URL": database_url}

    result = runner.invoke(db, ["current"], env=env)
    assert result.exit_code == 0, result.output
    assert result.output.startswith("none")

    result = runner.invoke(db, ["upgrade"], env=env)
    assert result.exit_code == 0, result.output
    assert f"at revision {HEAD}" in result.output
    assert _tables(engine) == APP_TABLES | {"alembic_version"}

    result = runner.invoke(db, ["current"], env=env)
    assert result.exit_code == 0, result.output
    assert result.output.strip() == f"{HEAD} (head)"

    result = runner.invoke(db, ["downgrade"], env=env)
    assert result.exit_code == 2
    assert "--yes" in result.output
    assert _tables(engine) == APP_TABLES | {"alembic_version"}

    result = runner.invoke(db, ["downgrade", "--yes"], env=env)
    assert result.exit_code == 0, result.output
    assert _tables(engine) - {"alembic_version"} == set()


def test_db_group_database_url_option(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'option.db'}"
    runner = CliRunner()
    result = runner.invoke(db, ["upgrade", "--revision", "0001", "--database-url", url])
    assert result.exit_code == 0, result.output
    assert migrate.current(url) == "0001"
    result = runner.invoke(db, ["current", "--database-url", url])
    assert result.output.strip() == f"0001 (head is {HEAD}: run titanpost db upgrade)"


def _run(*args: str, url: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "TITANPOST_DATABASE_URL": url}
    return subprocess.run(
        args, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, check=False
    )


def test_db_module_upgrade_in_a_subprocess(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'sub.db'}"
    result = _run(sys.executable, "-m", "cli.db", "upgrade", url=url)
    assert result.returncode == 0, result.stdout + result.stderr
    assert migrate.current(url) == HEAD


def test_titanpost_db_upgrade(titanpost: str, tmp_path: Path) -> None:
    probe = _run(titanpost, "db", "--help", url="sqlite://")
    assert probe.returncode == 0, probe.stdout + probe.stderr
    url = f"sqlite:///{tmp_path / 'cli.db'}"
    result = _run(titanpost, "db", "upgrade", url=url)
    assert result.returncode == 0, result.stdout + result.stderr
    assert migrate.current(url) == HEAD
    result = _run(titanpost, "db", "current", url=url)
    assert result.stdout.strip() == f"{HEAD} (head)"


def test_a_failing_upgrade_rolls_back_entirely(
    database_url: str, engine: sa.Engine, tmp_path: Path
) -> None:
    """The whole upgrade is one transaction on both databases (SQLite too: make_engine's
    explicit BEGIN makes its DDL transactional), so a failing revision leaves nothing behind."""
    scripts = tmp_path / "migrations"
    shutil.copytree(migrate.migrations_folder(), scripts,
                    ignore=shutil.ignore_patterns("__pycache__"))
    (scripts / "versions" / "9999_broken.py").write_text(
        "import sqlalchemy as sa\n"
        "from alembic import op\n"
        "revision = '9999'\n"
        f"down_revision = '{HEAD}'\n"
        "def upgrade():\n"
        "    op.create_table('scratch', sa.Column('id', sa.Integer, primary_key=True))\n"
        "    raise RuntimeError('broken revision')\n"
        "def downgrade():\n"
        "    pass\n"
    )
    config = migrate.alembic_config(database_url)
    config.set_main_option("script_location", str(scripts))
    from alembic import command

    with pytest.raises(RuntimeError, match="broken revision"):
        command.upgrade(config, "head")
    assert _tables(engine) == set()
    assert migrate.current(database_url) is None


def test_concurrent_upgrades(database_url: str, engine: sa.Engine) -> None:
    """Several processes may start at once (gunicorn workers each running serve's upgrade):
    the upgrades queue up, one migrates and the others find the database at head. (Processes,
    not threads: Alembic's context and op proxies are module globals.)"""
    env = {**os.environ, "TITANPOST_DATABASE_URL": database_url}
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "cli.db", "upgrade"],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for _ in range(4)
    ]
    outputs = [proc.communicate(timeout=120)[0] for proc in procs]
    assert [proc.returncode for proc in procs] == [0] * 4, "\n".join(outputs)
    assert migrate.current(database_url) == HEAD
    assert _diff(engine, SQLModel.metadata) == []


def test_sealed_orders_are_append_only(database_url: str, engine: sa.Engine) -> None:
    """A sealed plan cannot be changed or withdrawn; one seat seals once per decision."""
    migrate.upgrade(database_url)
    game_id = _insert_game_and_move(engine)["game_id"]
    sealed = SQLModel.metadata.tables["sealed_orders"]
    row = {"game_id": game_id, "decision_seq": 1, "seat": 0, "input": "plan french P5",
           "actor": "player", "created_at": datetime.now(UTC)}
    with engine.begin() as conn:
        conn.execute(sa.insert(sealed), row)
    for statement in (
        sa.update(sealed).values(input="plan french F5"),
        sa.delete(sealed),
    ):
        with pytest.raises(IntegrityError, match="append-only"), engine.begin() as conn:
            conn.execute(statement)
    with pytest.raises(IntegrityError), engine.begin() as conn:
        conn.execute(sa.insert(sealed), {**row, "input": "plan french M5"})
    with engine.connect() as conn:
        assert conn.execute(sa.select(sealed.c.input)).scalars().all() == ["plan french P5"]


def test_webhooks_made_before_0010_speak_english(database_url: str, engine: sa.Engine) -> None:
    """0010 gives every existing webhook the language English (what its posts were worded
    in), and its downgrade drops the column but keeps the webhooks and their outbox rows."""
    migrate.upgrade(database_url, "0009")
    game_id = _insert_game_and_move(engine)["game_id"]
    now = datetime.now(UTC)
    with engine.begin() as conn:
        hook_id = conn.execute(sa.text(
            "INSERT INTO webhooks (game_id, url, format, created_at) "
            "VALUES (:game, 'https://example.org/hook', 'json', :now) RETURNING id"),
            {"game": game_id, "now": now}).scalar_one()
        conn.execute(sa.text(
            "INSERT INTO webhook_outbox (webhook_id, event_key, event, payload, created_at, "
            "attempts) VALUES (:hook, 'k', 'turn', '{}', :now, 0)"), {"hook": hook_id, "now": now})
    migrate.upgrade(database_url)
    with engine.connect() as conn:
        assert conn.execute(sa.text("SELECT id, language FROM webhooks")).all() == [
            (hook_id, "en")]
    migrate.downgrade(database_url, "0009")
    with engine.connect() as conn:
        columns = {c["name"] for c in sa.inspect(conn).get_columns("webhooks")}
        assert "language" not in columns
        assert conn.execute(sa.text("SELECT id FROM webhooks")).scalars().all() == [hook_id]
        assert conn.execute(sa.text("SELECT count(*) FROM webhook_outbox")).scalar_one() == 1
    migrate.upgrade(database_url)
    assert _diff(engine, SQLModel.metadata) == []


def test_webhooks_made_before_0011_stay_unsigned(database_url: str, engine: sa.Engine) -> None:
    """0011 gives the webhooks it finds no secret (nobody was ever shown one, so no receiver
    could check a signature made with it): they post unsigned, as before. Its downgrade drops
    the column and keeps the webhooks and their outbox rows."""
    migrate.upgrade(database_url, "0010")
    game_id = _insert_game_and_move(engine)["game_id"]
    now = datetime.now(UTC)
    with engine.begin() as conn:
        hook_ids = [conn.execute(sa.text(
            "INSERT INTO webhooks (game_id, url, format, language, created_at) "
            "VALUES (:game, :url, :format, 'en', :now) RETURNING id"),
            {"game": game_id, "url": f"https://example.org/{fmt}", "format": fmt,
             "now": now}).scalar_one() for fmt in ("json", "discord")]
        conn.execute(sa.text(
            "INSERT INTO webhook_outbox (webhook_id, event_key, event, payload, created_at, "
            "attempts) VALUES (:hook, 'k', 'turn', '{}', :now, 0)"),
            {"hook": hook_ids[0], "now": now})
    migrate.upgrade(database_url)
    with engine.connect() as conn:
        assert conn.execute(sa.text("SELECT id, format, secret FROM webhooks ORDER BY id")
                            ).all() == [(hook_ids[0], "json", None), (hook_ids[1], "discord", None)]
        conn.execute(sa.text("UPDATE webhooks SET secret = :s WHERE id = :id"),
                     {"s": "whsec_" + "A" * 43 + "=", "id": hook_ids[0]})
        conn.commit()
    migrate.downgrade(database_url, "0010")
    with engine.connect() as conn:
        columns = {c["name"] for c in sa.inspect(conn).get_columns("webhooks")}
        assert "secret" not in columns and "language" in columns
        assert conn.execute(sa.text("SELECT id FROM webhooks ORDER BY id")).scalars().all() == (
            hook_ids)
        assert conn.execute(sa.text("SELECT count(*) FROM webhook_outbox")).scalar_one() == 1
    migrate.upgrade(database_url)
    assert _diff(engine, SQLModel.metadata) == []
