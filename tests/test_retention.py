"""Retention (issue 41): games never started and invitations never accepted are purged after
``TITANPOST_RETENTION_DAYS`` (30), mail bodies after ``TITANPOST_MAIL_BODY_DAYS`` (90), the
outbox's rows kept for the audit; ``titanpost admin purge --dry-run`` lists what would go and
changes nothing; the scheduler's nightly job runs it; a started game loses nothing of its own.
Each on SQLite and PostgreSQL, the command in English and Polish.
"""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import timedelta
from typing import Any

import sqlalchemy as sa
from click.testing import CliRunner

from app.core.models import utcnow
from app.features.clock.scheduler import Jobs
from app.features.retention.purge import UNSENT_PURGED, find, purge
from app.features.webhooks.hooks import add_webhook
from cli.main import main
from tests.apifixtures import Api, bot_game

pytest_plugins = ["tests.apifixtures"]


def _open_game(api: Api, name: str, *, accept: int = 0) -> dict[str, Any]:
    created = api.service.create_game(
        seats=[{"email": f"{name}{i}@example.com"} for i in range(3)], name=name)
    for invitation in created["invitations"][:accept]:
        api.service.accept(invitation["invite_token"])
    return created


def _everything(api: Api) -> dict[str, list[tuple[Any, ...]]]:
    with api.engine.connect() as conn:
        names = sa.inspect(conn).get_table_names()
        return {name: sorted(map(tuple, conn.execute(sa.text(f"SELECT * FROM {name}"))),
                             key=repr) for name in names if name != "alembic_version"}


def _back_dated(api: Api, table: str, column: str, days: int, where: str, **params: Any) -> None:
    with api.engine.begin() as conn:
        conn.execute(sa.text(f"UPDATE {table} SET {column} = :when WHERE {where}"),
                     {"when": utcnow() - timedelta(days=days), **params})


def _game_id(api: Api, uid: str) -> int | None:
    found = api.rows("SELECT id FROM games WHERE uid = :uid", uid=uid)
    return int(found[0][0]) if found else None


def _world(api: Api) -> dict[str, Any]:
    """Games of every kind, some of them old."""
    stale = _open_game(api, "stale", accept=1)  # open, nothing for 40 days: goes
    add_webhook(api.service, stale["game"], stale["creator_token"], "https://192.0.43.10/h",
                "json")
    lively = _open_game(api, "lively")  # open since 40 days, someone invited 5 days ago: stays
    dropped = _open_game(api, "dropped")  # abandoned before its start, 40 days ago: goes
    api.service.abandon(dropped["game"], dropped["creator_token"])
    running = api.service.create_game(seats=[{"email": "r0@example.com"},
                                             {"email": "r1@example.com"}, {"bot": True}],
                                      name="running")
    for invitation in running["invitations"]:
        api.service.accept(invitation["invite_token"])
    api.service.start(running["game"], running["creator_token"])
    handed = api.service.replace_seat(running["game"], running["creator_token"], 0,
                                      "late@example.com")  # an invitation never accepted
    finished = bot_game(api.service)
    for uid in (stale["game"], lively["game"], dropped["game"]):
        _back_dated(api, "games", "created_at", 40, "uid = :uid", uid=uid)
        _back_dated(api, "seats", "invited_at", 40,
                    "game_id = (SELECT id FROM games WHERE uid = :uid)", uid=uid)
        _back_dated(api, "seats", "accepted_at", 40,
                    "accepted_at IS NOT NULL AND game_id = (SELECT id FROM games WHERE uid = :uid)",
                    uid=uid)
    _back_dated(api, "games", "finished_at", 40, "uid = :uid", uid=dropped["game"])
    _back_dated(api, "seats", "invited_at", 5,
                "position = 2 AND game_id = (SELECT id FROM games WHERE uid = :uid)",
                uid=lively["game"])
    _back_dated(api, "seats", "invited_at", 31,
                "position = 0 AND game_id = (SELECT id FROM games WHERE uid = :uid)",
                uid=running["game"])
    _back_dated(api, "outbox", "created_at", 100, "game_id = (SELECT id FROM games WHERE "
                "uid = :uid)", uid=running["game"])
    return {"stale": stale, "lively": lively, "dropped": dropped, "running": running,
            "handed": handed, "finished": finished}


def test_a_dry_run_lists_what_would_go_and_changes_nothing(api: Api) -> None:
    world = _world(api)
    before = _everything(api)
    with api.service.session() as s:
        report = find(s, api.service.settings, utcnow())
    assert [g["game"] for g in report.games] == [world["stale"]["game"],
                                                 world["dropped"]["game"]]
    lively, running = world["lively"]["game"], world["running"]["game"]
    assert [(i["game"], i["seat"]) for i in report.invitations] == [
        (lively, 1), (lively, 2), (running, 1)]  # (lively's third invitation is 5 days old)
    running_mail = api.scalar("SELECT count(*) FROM outbox WHERE game_id = :id",
                              id=_game_id(api, world["running"]["game"]))
    assert report.mail_bodies == running_mail > 0
    result = CliRunner().invoke(main, ["admin", "purge", "--dry-run", "--json"],
                                env={"TITANPOST_DATABASE_URL": api.service.settings.database_url,
                                     "LANG": "C", "LANGUAGE": None, "LC_ALL": None})
    assert result.exit_code == 0, result.output
    said = json.loads(result.output)
    assert said["done"] is False and len(said["games"]) == 2 and said["mail_bodies"] == running_mail
    assert _everything(api) == before


def test_the_purge_removes_the_never_started_and_keeps_the_rest(api: Api) -> None:
    world = _world(api)
    stale_id = _game_id(api, world["stale"]["game"])
    stale_mail = api.scalar("SELECT count(*) FROM outbox WHERE game_id = :id", id=stale_id)
    assert stale_mail > 0
    finished_moves = api.scalar("SELECT count(*) FROM moves")
    with api.service.session(write=True) as s:
        report = purge(s, api.service.settings, utcnow())
    assert report.done and len(report.games) == 2
    for gone in ("stale", "dropped"):
        assert _game_id(api, world[gone]["game"]) is None
    for table in ("seats", "webhooks", "api_tokens"):
        assert api.scalar(f"SELECT count(*) FROM {table} WHERE "
                          f"{'game_id' if table != 'api_tokens' else 'seat_id'} NOT IN "
                          f"(SELECT id FROM {'games' if table != 'api_tokens' else 'seats'})"
                          ) == 0
    kept = api.rows("SELECT payload, body_purged_at, game_id FROM outbox WHERE "
                    "recipient LIKE 'stale%'")
    assert len(kept) == stale_mail
    assert all(row[1] is not None and row[2] is None and json.loads(row[0]) in ({}, "{}")
               if isinstance(row[0], str) else row[0] == {} for row in kept)
    assert _game_id(api, world["lively"]["game"]) is not None
    assert api.scalar("SELECT count(*) FROM moves") == finished_moves  # the log untouched
    late = api.client.get(f"/join/{world['handed']['invite_token']}")
    assert late.status_code == 404  # the invitation never accepted no longer works
    purged_mail = api.rows("SELECT sent_at, last_error FROM outbox WHERE body_purged_at IS "
                           "NOT NULL AND game_id = :id",
                           id=_game_id(api, world["running"]["game"]))
    assert purged_mail and all(row[1] == UNSENT_PURGED for row in purged_mail if row[0] is None)
    with api.service.session(write=True) as s:  # twice: nothing more
        assert purge(s, api.service.settings, utcnow()).empty


def test_the_settings_choose_the_times_and_zero_keeps_everything(api: Api) -> None:
    _world(api)
    before = _everything(api)
    never = replace(api.service.settings, retention_days=0, mail_body_days=0)
    with api.service.session(write=True) as s:
        assert purge(s, never, utcnow()).empty
    assert _everything(api) == before
    later = replace(api.service.settings, retention_days=3, mail_body_days=1)
    with api.service.session() as s:
        report = find(s, later, utcnow() + timedelta(days=4))
    assert {g["name"] for g in report.games} == {"stale", "lively", "dropped"}
    assert report.mail_bodies == api.scalar("SELECT count(*) FROM outbox")


def test_the_nightly_job_purges(api: Api) -> None:
    world = _world(api)
    Jobs(api.service).purge()
    assert _game_id(api, world["stale"]["game"]) is None
    assert _game_id(api, world["lively"]["game"]) is not None


def test_the_command_says_it_in_polish(api: Api) -> None:
    _world(api)
    env = {"TITANPOST_DATABASE_URL": api.service.settings.database_url, "LANG": "pl_PL.UTF-8",
           "LANGUAGE": None, "LC_ALL": None, "LC_MESSAGES": None}
    dry = CliRunner().invoke(main, ["admin", "purge", "--dry-run"], env=env)
    assert dry.exit_code == 0, dry.output
    assert "Zostałoby usunięte:" in dry.output and "„stale”" in dry.output
    done = CliRunner().invoke(main, ["admin", "purge"], env=env)
    assert "Usunięto:" in done.output
    again = CliRunner().invoke(main, ["admin", "purge"], env=env)
    assert "Nie ma nic do usunięcia." in again.output
