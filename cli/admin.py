"""``titanpost admin``: replay checks, export and import of games."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import IO

import click

from app.config import Settings
from app.db import make_engine
from app.service import GameService, ServiceError


def _service(database_url: str | None) -> GameService:
    settings = Settings.from_env()
    url = database_url or settings.database_url
    return GameService(make_engine(url), settings)


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
