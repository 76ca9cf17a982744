"""``titanpost admin``: replay checks, export and import of games."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import IO

import click

from app.config import ConfigError, Settings
from app.service import GameService, ServiceError
from app.wiring import build_service


def _service(database_url: str | None) -> GameService:
    try:
        settings = Settings.from_env()
    except ConfigError as exc:
        raise click.ClickException(str(exc)) from None
    return build_service(settings, database_url)


database_option = click.option(
    "--database-url", default=None, help="Overrides TITANPOST_DATABASE_URL."
)


@click.group()
def admin() -> None:
    """Administer the games in the database."""


@admin.command("verify")
@database_option
def verify(database_url: str | None) -> None:
    """Replay every game and check its hash chain and snapshots; exit 1 naming any that differ."""
    report = _service(database_url).verify_all()
    if not report:
        click.echo("every game replays to its log, its hash chain and its snapshots")
        return
    for uid, problems in report.items():
        click.echo(f"game {uid}:", err=True)
        for problem in problems:
            click.echo(f"  - {problem}", err=True)
    click.echo(f"{len(report)} game(s) disagree with their log", err=True)
    sys.exit(1)


@admin.command("export")
@click.argument("game")
@click.option("--output", "-o", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="File to write (standard output by default).")
@database_option
def export(game: str, output: Path | None, database_url: str | None) -> None:
    """Export GAME (its id) as JSON, with its full log."""
    try:
        data = _service(database_url).export(game)
    except ServiceError as exc:
        raise click.ClickException(exc.message) from None
    text = json.dumps(data, indent=2, ensure_ascii=False)
    if output is None:
        click.echo(text)
    else:
        output.write_text(text + "\n", encoding="utf-8")
        click.echo(f"exported game {game} ({len(data['moves'])} moves) to {output}", err=True)


@admin.command("import")
@click.argument("file", type=click.File("r", encoding="utf-8"))
@database_option
def import_(file: IO[str], database_url: str | None) -> None:
    """Import a game exported by ``titanpost admin export`` (FILE, or - for standard input)."""
    try:
        data = json.load(file)
    except json.JSONDecodeError as exc:
        raise click.ClickException(f"not valid JSON: {exc}") from None
    try:
        result = _service(database_url).import_game(data)
    except ServiceError as exc:
        raise click.ClickException(exc.message) from None
    click.echo(json.dumps(result, indent=2))


@admin.command("tick")
@click.option("--now", "now_text", default=None, metavar="ISO-TIME",
              help="Process as of this time (e.g. 2026-12-01T18:00:00+01:00; default: now). "
                   "A time without a zone is UTC.")
@click.option("--max-gap", type=click.IntRange(min=0), default=None, metavar="MINUTES",
              help="A longer time since the last tick is an outage: deadlines are extended "
                   "instead of fired (0: never; default TITANPOST_MAX_TICK_GAP_MINUTES).")
@database_option
def tick(now_text: str | None, max_gap: int | None, database_url: str | None) -> None:
    """Send due reminders and act on passed deadlines, as the scheduler does (once)."""
    from datetime import UTC, datetime, timedelta

    from app.timekeeper import install

    now = None
    if now_text:
        try:
            now = datetime.fromisoformat(now_text)
        except ValueError:
            raise click.BadParameter(f"'{now_text}' is not an ISO time",
                                     param_hint="--now") from None
        if now.tzinfo is None:
            now = now.replace(tzinfo=UTC)
    service = _service(database_url)
    gap = service.settings.max_tick_gap_minutes if max_gap is None else max_gap
    report = install(service).process_due(now, max_gap=timedelta(minutes=gap) if gap else None)
    click.echo(f"tick at {report.now.isoformat()}: {report.summary()}")
    for action in report.actions:
        click.echo(f"  {action}")
    if report.failed:
        sys.exit(1)
