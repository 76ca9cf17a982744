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

from app.core.models import (
    GAME_STATUSES,
)
from app.service import (
    GameService,
    ServiceError,
)
from cli.admin import (
    ANY,
    EXISTING,
    database_option,
    fail,
    fail_with,
    find_game_id,
    game_uids,
    one_line,
    open_service,
    track,
)
from cli.speech import N_, tr

# ---------------------------------------------------------------------- export / import


def _write(path: Path, text: str) -> None:
    try:
        path.write_text(text + "\n", encoding="utf-8")
    except OSError as exc:
        fail(tr("cannot write {path}: {problem}", path=path, problem=exc.strerror))


@click.command("export", help=N_(
        "Export GAME (its id, the start of it or its name) as JSON with its full log, or "
        "every game with --all DIR.\n\nThe export holds the players' private notes, each "
        "marked private; --without-notes leaves them out (a file to share)."))
@click.argument("game", required=False)
@click.option("--output", "-o", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help=N_("File to write (standard output by default)."))
@click.option("--all", "folder", type=click.Path(file_okay=False, path_type=Path),
              default=None, metavar="DIR",
              help=N_("Export every game (or those of --status) to DIR, one GAME.json each."))
@click.option("--status", "statuses", type=click.Choice(GAME_STATUSES), multiple=True,
              help=N_("With --all: only games of this status (repeatable)."))
@click.option("--without-notes", is_flag=True,
              help=N_("Leave out the players' private notes."))
@database_option
@one_line
def export(game: str | None, output: Path | None, folder: Path | None,
           statuses: tuple[str, ...], without_notes: bool, database_url: str | None) -> None:
    if (game is None) == (folder is None):
        fail(tr("give a GAME to export, or --all DIR for every game"))
    if folder is None and statuses:
        fail(tr("--status goes with --all"))
    if folder is not None and output is not None:
        fail(tr("--output goes with one GAME; --all writes one file per game into DIR"))
    service = open_service(database_url)
    if game is not None:
        game = find_game_id(service, game)
        data = service.export(game, notes=not without_notes)
        text = json.dumps(data, indent=2, ensure_ascii=False)
        if output is None:
            click.echo(text)
        else:
            _write(output, text)
            click.echo(tr("exported game {id} ({count} moves) to {path}", id=game,
                          count=len(data["moves"]), path=output), err=True)
        return
    assert folder is not None
    uids = game_uids(service, statuses)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        fail(tr("cannot create {path}: {problem}", path=folder, problem=exc.strerror))
    entries = 0
    for uid in track(uids, tr("exporting"), lambda uid: uid[:8]):
        data = service.export(uid, notes=not without_notes)
        entries += len(data["moves"])
        _write(folder / f"{uid}.json", json.dumps(data, indent=2, ensure_ascii=False))
    which = f" ({', '.join(statuses)})" if statuses else ""
    click.echo(tr("exported {games} game(s){which}, {entries} log entries, to {path}",
                  games=len(uids), which=which, entries=entries, path=folder))


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


@click.command("import", help=N_(
        "Import games exported by ``titanpost admin export`` (FILES; a folder's *.json "
        "files; - for standard input). Each gets a new id and a new creator token.\n"
        "\n"
        "One file prints its result as a JSON object; several print a list (with each "
        "file's name), and a file that cannot be imported is named on standard error "
        "(exit 1) while the others are imported."))
@click.argument("files", nargs=-1, required=True)
@database_option
@one_line
def import_(files: tuple[str, ...], database_url: str | None) -> None:
    sources = _sources(files)
    if not sources:
        fail(tr("no *.json file in {paths}", paths=", ".join(files)))
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
    for name in track(sources, tr("importing"), lambda n: Path(n).name):
        try:
            results.append({"file": name} | _import_one(service, name))
        except ValueError as exc:
            failed.append(f"{name}: {' '.join(str(exc).split())}")
    click.echo(json.dumps(results, indent=2))
    for line in failed:
        click.echo(tr("Error: {message}", message=line), err=True)
    if failed:
        click.echo(tr("{count} of {total} file(s) not imported", count=len(failed),
                      total=len(sources)), err=True)
        sys.exit(1)


# ---------------------------------------------------------------------- backup / restore


class _Bar:
    """A progress bar on standard error for app.features.backup.backups (rows copied, by table)."""

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
        return tr("{count} bytes", count=size)
    amount = float(size)
    for unit in ("KB", "MB", "GB"):
        amount /= 1024
        if amount < 1024 or unit == "GB":
            break
    return f"{amount:.1f} {unit}"


def _contents(tables: dict[str, int]) -> str:
    return ", ".join(f"{name} {count}" for name, count in tables.items())


@click.command("backup", help=N_(
        "Write the whole database to FILE (gzip-compressed JSON lines, mode 0600: it "
        "holds the seats' secrets), read in one transaction so that it is one consistent "
        "moment even while players move. ``titanpost admin restore`` loads it into an "
        "empty database."))
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--without-snapshots", is_flag=True,
              help=N_("Leave out the cached engine states (rebuilt from the log when needed)."))
@database_option
@one_line
def backup(file: Path, without_snapshots: bool, database_url: str | None) -> None:
    from app.features.backup.backups import BackupError
    from app.features.backup.backups import backup as write_backup

    service = open_service(database_url, needs=EXISTING)  # (any schema: it is recorded)
    try:
        with _Bar(tr("backing up")) as bar:
            summary = write_backup(service.engine, file, snapshots=not without_snapshots,
                                   progress=bar)
    except BackupError as exc:
        fail(str(exc))
    tables = summary.tables
    click.echo(tr("backed up {games} game(s), {entries} log entries, {rows} rows in all "
                  "(schema revision {schema}) to {path} ({size})", games=tables.get("games", 0),
                  entries=tables.get("moves", 0), rows=summary.rows, schema=summary.schema,
                  path=file, size=_size(summary.size)))
    click.echo(f"  {_contents(tables)}")


@click.command("restore", help=N_(
        "Load FILE, a backup made by ``titanpost admin backup``, into an EMPTY database "
        "(a new one, with or without its schema), in one transaction and with every id "
        "kept, so that links and API tokens go on working; then replay every started game "
        "and check it against its log (exit 1 naming any that differ). A database that "
        "holds games is refused, unchanged."))
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@database_option
@one_line
def restore(file: Path, database_url: str | None) -> None:
    from app.features.backup.backups import BackupError
    from app.features.backup.backups import restore as load_backup

    service = open_service(database_url, needs=ANY)  # (an empty database, or none yet)
    try:
        with _Bar(tr("restoring")) as bar:
            summary = load_backup(service.engine, file, progress=bar)
    except BackupError as exc:
        fail(str(exc))
    tables = summary.tables
    made = (tr("made {time} UTC, ", time=summary.created_at[:19].replace("T", " "))
            if summary.created_at else "")
    click.echo(tr("restored {games} game(s), {entries} log entries, {rows} rows in all from "
                  "{path} ({made}schema revision {schema})", games=tables.get("games", 0),
                  entries=tables.get("moves", 0), rows=summary.rows, path=file, made=made,
                  schema=summary.schema))
    click.echo(f"  {_contents(tables)}")
    if summary.upgraded_to is not None:
        click.echo(tr("upgraded the schema from {old} to {new}", old=summary.schema,
                      new=summary.upgraded_to))
    uids = game_uids(service, [], started=True)
    report: dict[str, list[str]] = {}
    for uid in track(uids, tr("verifying"), lambda uid: uid[:8]):
        problems = service.verify(uid)
        if problems:
            report[uid] = problems
    if not report:
        click.echo(tr("every game replays to its log, its hash chain and its snapshots "
                      "({count} checked)", count=len(uids)))
        return
    fail_with(report, tr("after the restore"))
