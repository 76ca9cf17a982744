"""The health endpoint, request ids and structured logs, and the 503 while the database is away."""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Iterator
from datetime import timedelta

import pytest
from flask.testing import FlaskClient
from sqlmodel import update

from app import create_app
from app.core.config import Settings
from app.core.migrate import upgrade
from app.core.models import ClockTick, utcnow
from app.core.observability import JsonFormatter, RequestIdFilter, redact_path
from app.features.clock.timekeeper import install
from tests.dbutil import PG_SERVER, _libpq, pg_unavailable_reason


def settings_for(url: str, **extra: str) -> Settings:
    return Settings.from_env({"TITANPOST_DATABASE_URL": url, "TITANPOST_ENV": "test", **extra})


@pytest.fixture
def client(migrated_database_url: str) -> Iterator[FlaskClient]:
    app = create_app(settings_for(migrated_database_url, TITANPOST_TICK_SECONDS="30"))
    yield app.test_client()
    app.extensions["titanpost.service"].engine.dispose()


def test_health_reports_the_database_and_the_workers_last_tick(client: FlaskClient) -> None:
    answer = client.get("/healthz")
    assert answer.status_code == 200
    body = answer.get_json()
    assert body["status"] == "ok" and body["database"]["ok"] is True
    assert body["worker"] == {"last_tick": None, "age_seconds": None, "ok": False}
    assert client.get("/healthz?worker=1").status_code == 503  # no scheduler has ticked
    service = client.application.extensions["titanpost.service"]
    install(service).process_due(worker="test-worker")
    body = client.get("/healthz?worker=1").get_json()
    assert body["worker"]["ok"] is True and body["worker"]["by"] == "test-worker"
    assert body["worker"]["age_seconds"] < 30
    # the last tick was five minutes ago (ten intervals): the scheduler is stale
    with service.session(write=True) as s:
        s.execute(update(ClockTick).values(last_tick_at=utcnow() - timedelta(minutes=5)))
        s.commit()
    stale = client.get("/healthz?worker=1")
    assert stale.status_code == 503 and stale.get_json()["status"] == "worker stale"
    assert client.get("/healthz").status_code == 200  # the web process itself is fine


def test_every_answer_carries_a_request_id(client: FlaskClient) -> None:
    mine = "abc123-request-id"
    assert client.get("/healthz", headers={"X-Request-ID": mine}).headers["X-Request-ID"] == mine
    made = client.get("/api/").headers["X-Request-ID"]
    assert len(made) == 32 and made != mine
    # an unusable id from outside is replaced, not echoed
    weird = client.get("/healthz", headers={"X-Request-ID": "<script>"}).headers["X-Request-ID"]
    assert weird != "<script>" and len(weird) == 32


def test_access_log_lines_are_json_with_the_request_id_and_no_secrets(
    client: FlaskClient, caplog: pytest.LogCaptureFixture
) -> None:
    secret = uuid.uuid4().hex
    with caplog.at_level(logging.INFO, logger="titanpost.access"):
        client.get(f"/l/{secret}", headers={"X-Request-ID": "trace-0000001"})
        client.get(f"/join/{secret}")
    records = [r for r in caplog.records if r.name == "titanpost.access"]
    assert len(records) == 2
    formatter = JsonFormatter()
    lines = []
    for record in records:
        RequestIdFilter().filter(record)
        lines.append(formatter.format(record))
    assert all(secret not in line for line in lines)
    first = json.loads(lines[0])
    assert first["path"] == "/l/…" and first["method"] == "GET"
    assert isinstance(first["status"], int) and first["ms"] >= 0
    assert first["level"] == "info" and first["logger"] == "titanpost.access"
    assert all(secret not in r.getMessage() for r in records)


def test_redact_path_cuts_every_secret_segment() -> None:
    assert redact_path("/l/abc.def/confirm") == "/l/…/confirm"
    assert redact_path("/g/token") == "/g/…"
    assert redact_path("/join/tok") == "/join/…"
    assert redact_path("/games/0123") == "/games/0123"


def test_a_missing_database_answers_503_and_recovers_by_itself() -> None:
    """A PostgreSQL database that is not there yet: every request gets 503 with Retry-After
    (JSON for the API, a page for a browser), and once the database exists the same app serves
    again without a restart."""
    reason = pg_unavailable_reason()
    if reason is not None:
        pytest.skip(reason)
    import psycopg

    name = f"titanpost_test_{uuid.uuid4().hex[:12]}"
    url = f"{PG_SERVER}/{name}"
    app = create_app(settings_for(url))
    client = app.test_client()
    admin = _libpq(PG_SERVER, "postgres")
    try:
        health = client.get("/healthz")
        assert health.status_code == 503 and health.get_json()["database"]["ok"] is False
        api = client.get("/api/games/" + "0" * 32)
        assert api.status_code == 503 and api.headers["Retry-After"] == "30"
        assert "database" in api.get_json()["error"]
        page = client.get("/games/" + "0" * 32, headers={"Accept": "text/html"})
        assert page.status_code == 503 and "try again in a minute" in page.text
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        upgrade(url)
        assert client.get("/healthz").status_code == 200
        assert client.get("/api/games/" + "0" * 32).status_code == 404
    finally:
        app.extensions["titanpost.service"].engine.dispose()
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def test_the_health_command(migrated_database_url: str) -> None:
    from click.testing import CliRunner

    from cli.main import main

    env = {"TITANPOST_DATABASE_URL": migrated_database_url, "TITANPOST_ENV": "test"}
    plain = CliRunner().invoke(main, ["health"], env=env)
    assert plain.exit_code == 0 and "never" in plain.output
    stale = CliRunner().invoke(main, ["health", "--worker"], env=env)
    assert stale.exit_code == 1 and "stale" in stale.output
    service = create_app(settings_for(migrated_database_url)).extensions["titanpost.service"]
    install(service).process_due()
    service.engine.dispose()
    fresh = CliRunner().invoke(main, ["health", "--worker"], env=env)
    assert fresh.exit_code == 0 and "ago" in fresh.output
    away = CliRunner().invoke(main, ["health"], env={
        **env, "TITANPOST_DATABASE_URL": "postgresql://nobody@127.0.0.1:1/none"})
    assert away.exit_code == 1 and "does not answer" in away.output


def test_health_counts_mail_due_and_mail_given_up(client: FlaskClient) -> None:
    from app.mail.notify import insert_rows
    from app.mail.send import MAX_ATTEMPTS

    service = client.application.extensions["titanpost.service"]
    with service.session(write=True) as s:
        insert_rows(s, [
            {"kind": "digest", "recipient": "a@example.org", "message_id": "<due@x>"},
            {"kind": "digest", "recipient": "b@example.org", "message_id": "<later@x>",
             "next_attempt_at": utcnow() + timedelta(hours=1)},
            {"kind": "digest", "recipient": "c@example.org", "message_id": "<dead@x>",
             "attempts": MAX_ATTEMPTS},
        ])
        s.commit()
    assert client.get("/healthz").get_json()["outbox"] == {"due": 1, "given_up": 1,
                                                           "unconfirmed": 0}
