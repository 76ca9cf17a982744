"""``titanpost admin export`` / ``import`` (games as JSON files) and ``backup`` / ``restore``
(the whole database in one file); the shared pieces are in cli/admin.py."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TextColumn,
    TimeElapsedColumn,
)

from app.models import (
    GAME_STATUSES,
)
from app.service import (
    GameService,
    ServiceError,
)
from cli.admin import (
    database_option,
    fail,
    fail_with,
    find_game_id,
    game_uids,
    one_line,
    open_service,
    track,
)

# ---------------------------------------------------------------------- export / import


def _write(path: Path, text: str) -> None:
    try:
        path.write_text(text + "\n", encoding="utf-8")
    except OSError as exc:
        fail(f"cannot write {path}: {exc.strerror}")


@click.command("export")
@click.argument("game", required=False)
@click.option("--output", "-o", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="File to write (standard output by default).")
@click.option("--all", "folder", type=click.Path(file_okay=False, path_type=Path),
              default=None, metavar="DIR",
              help="Export every game (or those of --status) to DIR, one GAME.json each.")
@click.option("--status", "statuses", type=click.Choice(GAME_STATUSES), multiple=True,
              help="With --all: only games of this status (repeatable).")
@database_option
@one_line
def export(game: str | None, output: Path | None, folder: Path | None,
           statuses: tuple[str, ...], database_url: str | None) -> None:
    """Export GAME (its id, the start of it or its name) as JSON with its full log, or every
    game with --all DIR."""
    if (game is None) == (folder is None):
        fail("give a GAME to export, or --all DIR for every game")
    if folder is None and statuses:
        fail("--status goes with --all")
    if folder is not None and output is not None:
        fail("--output goes with one GAME; --all writes one file per game into DIR")
    service = open_service(database_url)
    if game is not None:
        game = find_game_id(service, game)
        data = service.export(game)
        text = json.dumps(data, indent=2, ensure_ascii=False)
        if output is None:
            click.echo(text)
        else:
            _write(output, text)
            click.echo(f"exported game {game} ({len(data['moves'])} moves) to {output}", err=True)
        return
    assert folder is not None
    uids = game_uids(service, statuses)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        fail(f"cannot create {folder}: {exc.strerror}")
    entries = 0
    for uid in track(uids, "exporting", lambda uid: uid[:8]):
        data = service.export(uid)
        entries += len(data["moves"])
        _write(folder / f"{uid}.json", json.dumps(data, indent=2, ensure_ascii=False))
    which = f" ({', '.join(statuses)})" if statuses else ""
    click.echo(f"exported {len(uids)} game(s){which}, {entries} log entries, to {folder}")


def _sources(names: Sequence[str]) -> list[str]:
    """The files to import: each name, or a folder's *.json files ("-": standard input)."""
    found: list[str] = []
    for name in names:
        path = Path(name)
        if name != "-" and path.is_dir():
            found += sorted(str(p) for p in path.glob("*.json"))
        else:
            found.append(name)
    return found


def _import_one(service: GameService, name: str) -> dict[str, Any]:
    try:
        text = sys.stdin.read() if name == "-" else Path(name).read_text(encoding="utf-8")
    except OSError as exc:
        raise ValueError(f"cannot read: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise ValueError("not UTF-8 text") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"not valid JSON: {exc}") from None
    try:
        return service.import_game(data)
    except ServiceError as exc:
        raise ValueError(exc.message) from None


@click.command("import")
@click.argument("files", nargs=-1, required=True)
@database_option
@one_line
def import_(files: tuple[str, ...], database_url: str | None) -> None:
    """Import games exported by ``titanpost admin export`` (FILES; a folder's *.json files;
    - for standard input). Each gets a new id and a new creator token.

    One file prints its result as a JSON object; several print a list (with each file's name),
    and a file that cannot be imported is named on standard error (exit 1) while the others
    are imported."""
    sources = _sources(files)
    if not sources:
        fail(f"no *.json file in {', '.join(files)}")
    service = open_service(database_url)
    if len(sources) == 1:
        try:
            result = _import_one(service, sources[0])
        except ValueError as exc:
            fail(str(exc))
        click.echo(json.dumps(result, indent=2))
        return
    results: list[dict[str, Any]] = []
    failed: list[str] = []
    for name in track(sources, "importing", lambda n: Path(n).name):
        try:
            results.append({"file": name} | _import_one(service, name))
        except ValueError as exc:
            failed.append(f"{name}: {' '.join(str(exc).split())}")
    click.echo(json.dumps(results, indent=2))
    for line in failed:
        click.echo(f"Error: {line}", err=True)
    if failed:
        click.echo(f"{len(failed)} of {len(sources)} file(s) not imported", err=True)
        sys.exit(1)


# ---------------------------------------------------------------------- backup / restore


class _Bar:
    """A progress bar on standard error for app.backup (rows copied, by table)."""

    def __init__(self, label: str) -> None:
        self.label = label
        columns = (SpinnerColumn(), TextColumn("{task.description}"), BarColumn(),
                   MofNCompleteColumn(), TimeElapsedColumn())
        self.progress = Progress(*columns, console=Console(stderr=True), transient=True)
        self.task = self.progress.add_task(label, total=None)

    def __enter__(self) -> _Bar:
        self.progress.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.progress.stop()

    def start(self, total: int) -> None:
        self.progress.update(self.task, total=total, completed=0)

    def advance(self, table: str, rows: int) -> None:
        self.progress.update(self.task, description=f"{self.label} {table}", advance=rows)


def _size(size: int) -> str:
    if size < 1024:
        return f"{size} bytes"
    amount = float(size)
    for unit in ("KB", "MB", "GB"):
        amount /= 1024
        if amount < 1024 or unit == "GB":
            break
    return f"{amount:.1f} {unit}"


def _contents(tables: dict[str, int]) -> str:
    return ", ".join(f"{name} {count}" for name, count in tables.items())


@click.command("backup")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--without-snapshots", is_flag=True,
              help="Leave out the cached engine states (rebuilt from the log when needed).")
@database_option
@one_line
def backup(file: Path, without_snapshots: bool, database_url: str | None) -> None:
    """Write the whole database to FILE (gzip-compressed JSON lines, mode 0600: it holds the
    seats' secrets), read in one transaction so that it is one consistent moment even while
    players move. ``titanpost admin restore`` loads it into an empty database."""
    from app.backup import BackupError
    from app.backup import backup as write_backup

    service = open_service(database_url)
    try:
        with _Bar("backing up") as bar:
            summary = write_backup(service.engine, file, snapshots=not without_snapshots,
                                   progress=bar)
    except BackupError as exc:
        fail(str(exc))
    tables = summary.tables
    click.echo(f"backed up {tables.get('games', 0)} game(s), {tables.get('moves', 0)} log "
               f"entries, {summary.rows} rows in all (schema revision {summary.schema}) to "
               f"{file} ({_size(summary.size)})")
    click.echo(f"  {_contents(tables)}")


@click.command("restore")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@database_option
@one_line
def restore(file: Path, database_url: str | None) -> None:
    """Load FILE, a backup made by ``titanpost admin backup``, into an EMPTY database (a new one,
    with or without its schema), in one transaction and with every id kept, so that links and
    API tokens go on working; then replay every started game and check it against its log
    (exit 1 naming any that differ). A database that holds games is refused, unchanged."""
    from app.backup import BackupError
    from app.backup import restore as load_backup

    service = open_service(database_url)
    try:
        with _Bar("restoring") as bar:
            summary = load_backup(service.engine, file, progress=bar)
    except BackupError as exc:
        fail(str(exc))
    tables = summary.tables
    made = (f"made {summary.created_at[:19].replace('T', ' ')} UTC, "
            if summary.created_at else "")
    click.echo(f"restored {tables.get('games', 0)} game(s), {tables.get('moves', 0)} log "
               f"entries, {summary.rows} rows in all from {file} ({made}schema revision "
               f"{summary.schema})")
    click.echo(f"  {_contents(tables)}")
    if summary.upgraded_to is not None:
        click.echo(f"upgraded the schema from {summary.schema} to {summary.upgraded_to}")
    uids = game_uids(service, [], started=True)
    report: dict[str, list[str]] = {}
    for uid in track(uids, "verifying", lambda uid: uid[:8]):
        problems = service.verify(uid)
        if problems:
            report[uid] = problems
    if not report:
        click.echo(f"every game replays to its log, its hash chain and its snapshots "
                   f"({len(uids)} checked)")
        return
    fail_with(report, " after the restore")
