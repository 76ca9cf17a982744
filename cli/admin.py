"""``titanpost admin``: the games in the database, worked on directly (no server needed).

``start``, ``tick``, ``resend``, ``seat`` and ``rollback`` are here (with the pieces every admin
command shares); ``new-game`` in cli/admin_new_game.py, ``games`` in cli/admin_listing.py,
``replay`` and ``verify`` in cli/admin_history.py, ``export`` / ``import`` and ``backup`` /
``restore`` in cli/admin_files.py, imported when run (:data:`ELSEWHERE`). Every command takes
``--database-url`` (default TITANPOST_DATABASE_URL) and works through the game service built as
the server builds it, so that a change made here writes its mails to the outbox and its deadlines
like any other. A refusal is one line on standard error with exit status 1; progress bars go to
standard error.

A game's own words and boards come from its :class:`app.games.ui.GameUI`: this module knows no
game. A GAME argument is a game's id, a unique start of it (4 characters or more: ``admin games``
shows 8) or the game's name. Seats are numbered from 0, as the JSON API numbers them; log
entries from 1 (0 is the start).
"""

from __future__ import annotations

import functools
import re
import sys
from collections.abc import Callable, Iterator, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, Final, NoReturn, ParamSpec, TypeVar

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
from sqlalchemy import func, or_
from sqlalchemy.exc import SQLAlchemyError
from sqlmodel import col, select

from app.core.config import ConfigError, Settings
from app.core.models import (
    ACTIVE,
    FINISHED,
    Game,
    Move,
    Seat,
)
from app.games.base import BOT_LEVELS, EASY
from app.games.ui import game_ui, winners_named
from app.listeners import build_service
from app.service import (
    GameService,
    ServiceError,
)
from cli.lazy import Lazy, LazyGroup
from cli.speech import N_, lang, pause_words, tr, tr_plural

P = ParamSpec("P")
R = TypeVar("R")
T = TypeVar("T")


# ---------------------------------------------------------------------- shared pieces


def fail(message: str) -> NoReturn:
    raise click.ClickException(" ".join(str(message).split()))


def one_line(command: Callable[P, R]) -> Callable[P, R]:
    """Turn the refusals a command meets (the service's, the settings', the database's) into
    one line on standard error and exit status 1, without a traceback."""

    @functools.wraps(command)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return command(*args, **kwargs)
        except ServiceError as exc:
            fail(exc.say(lang()))
        except ConfigError as exc:
            fail(str(exc))
        except SQLAlchemyError as exc:
            cause = getattr(exc, "orig", None) or exc
            first = (str(cause).strip().splitlines() or [type(cause).__name__])[0]
            if "no such table" in first or "does not exist" in first:
                fail(tr("the database refused: {problem} (is its schema there? {command})",
                        problem=first, command="titanpost db upgrade"))
            fail(tr("the database refused: {problem}", problem=first))

    return wrapper


CURRENT: Final = "current"
"""A database migrated to this version's schema (every command but the ones below)."""
EXISTING: Final = "existing"
"""A database that exists, at whatever revision (a backup: it records its schema)."""
ANY: Final = "any"
"""Any database, even none yet (a restore makes or fills an empty one)."""


def open_service(database_url: str | None, *, needs: str = CURRENT) -> GameService:
    """The service on the settings' database (or ``database_url``). A database that does not
    exist, or (``needs`` CURRENT) is not migrated to this version, is refused first, naming the
    URL tried, instead of an empty SQLite file made on the way and "no such table" after it."""
    try:
        settings = Settings.from_env()
    except ConfigError as exc:
        raise click.ClickException(str(exc)) from None
    if needs != ANY:
        refuse_unready_database(database_url or settings.database_url, schema=needs == CURRENT)
    service = build_service(settings, database_url)
    context = click.get_current_context(silent=True)
    if context is not None:  # close the pooled connections when the command ends
        context.call_on_close(service.engine.dispose)
    return service


def refuse_unready_database(url: str, *, schema: bool = True) -> None:
    """Fail, naming ``url`` (its password hidden) and how to set it, unless it is a database
    (with ``schema``: migrated to this version's schema)."""
    from sqlalchemy.engine import make_url

    from app.core import migrate

    parsed = make_url(url)
    shown = parsed.render_as_string(hide_password=True)
    how = tr("Set TITANPOST_DATABASE_URL (or --database-url) to the server's database, "
             "as the server's settings do.")
    path = parsed.database if parsed.get_backend_name() == "sqlite" else None
    if path and path != ":memory:" and not path.startswith("file:") and not Path(path).exists():
        fail(tr("There is no database at {url}. {how}", url=shown, how=how))
    if not schema:
        return
    try:
        revision, newest = migrate.current(url), migrate.head()
    except SQLAlchemyError as exc:
        fail(tr("Cannot open the database at {url}: {error}. {how}", url=shown,
                error=str(getattr(exc, "orig", None) or exc).splitlines()[0], how=how))
    if revision is None:
        fail(tr("The database at {url} has no Titan Post tables. {how} A new database is made "
                "with: titanpost db upgrade", url=shown, how=how))
    if revision != newest:
        fail(tr("The database at {url} is at schema revision {revision}, this version needs "
                "{head}: run titanpost db upgrade", url=shown, revision=revision, head=newest))


database_option = click.option(
    "--database-url", default=None, help=N_("Overrides TITANPOST_DATABASE_URL.")
)


def track(items: Sequence[T], label: str, name: Callable[[T], str] = str) -> Iterator[T]:
    """Iterate ``items`` with a progress bar on standard error (gone once done)."""
    console = Console(stderr=True)
    columns = (SpinnerColumn(), TextColumn("{task.description}"), BarColumn(),
               MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=console, transient=True) as progress:
        task = progress.add_task(label, total=len(items))
        for item in items:
            progress.update(task, description=f"{label} {name(item)}")
            yield item
            progress.advance(task)


def game_row(service: GameService, uid: str) -> tuple[Game, list[Seat], int]:
    """The game ``uid``, its seats and the length of its log (NotFound if there is none)."""
    service.ensure_exists(uid)
    with service.session() as s:
        game = s.exec(select(Game).where(Game.uid == uid)).one()
        seats = service.seats(s, game)
        head = s.exec(select(func.coalesce(func.max(Move.seq), 0))
                      .where(Move.game_id == game.id)).one()
        return game, seats, int(head)


def find_game_id(service: GameService, text: str) -> str:
    """The id of the game named by ``text``, as the player's commands find one: its id, a
    unique prefix of it (4 characters or more, as ``admin games`` shows 8), its exact name, or
    a unique prefix of its name (case does not matter). A name that several games share (a
    rematch kept its game's name before rematches were numbered) means the newest of them,
    and a note on standard error says which and lists the others; a prefix that several games
    start with is refused, naming them."""
    wanted = text.strip().lower()
    if re.fullmatch(r"[0-9a-f]{32}", wanted):
        return wanted
    found = _games_named(service, wanted) if wanted else []
    if not found:
        fail(tr("no game '{text}' (give its id, the start of its id or its name; {command} "
                "lists them)", text=text, command="'titanpost admin games'"))
    if len(found) > 1 and all((name or "").lower() == wanted for _, name in found):
        others = ", ".join(uid[:8] for uid, _ in found[1:5]) + (" ..." if len(found) > 5 else "")
        click.echo(tr("'{text}' names {count} games: the newest, {id}, is meant (the others: "
                      "{others})", text=text, count=len(found) if len(found) < 6 else "6+",
                      id=found[0][0][:8], others=others), err=True)
    elif len(found) > 1:
        listed = ", ".join(f"{uid[:8]} ({name or tr('no name')})" for uid, name in found[:5])
        fail(tr("'{text}' names more than one game: {games}; give more of the id", text=text,
                games=listed + (" ..." if len(found) > 5 else "")))
    return str(found[0][0])


def _games_named(service: GameService, wanted: str) -> list[tuple[str, str]]:
    """The games (id, name; newest first, six at most) ``wanted`` names, by the first test
    that finds any: the start of an id or the exact name, then the start of a name."""
    name = func.lower(Game.name)
    tests = [name == wanted, name.startswith(wanted, autoescape=True)]
    if re.fullmatch(r"[0-9a-f]{4,31}", wanted):
        tests[0] = or_(col(Game.uid).startswith(wanted, autoescape=True), tests[0])
    with service.session() as s:
        for test in tests:
            query = select(Game.uid, Game.name).where(test).order_by(col(Game.id).desc())
            found = [(str(uid), str(named or "")) for uid, named in s.exec(query.limit(6))]
            if found:
                return found
    return []


def game_uids(service: GameService, statuses: Sequence[str], *, started: bool = False) -> list[str]:
    """The ids of the games (of these statuses; only those that started), oldest first."""
    query = select(Game.uid).order_by(col(Game.id))
    if statuses:
        query = query.where(col(Game.status).in_(list(statuses)))
    if started:  # (initial_state is JSON: a game not started holds a JSON null there)
        query = query.where(col(Game.started_at).is_not(None))
    with service.session() as s:
        return list(s.exec(query).all())


def join_link(service: GameService, token: str) -> str:
    return f"{service.settings.base_url}/join/{token}"


STATUS_WORDS: Final = {"open": N_("open"), "active": N_("active"), "finished": N_("finished"),
                       "abandoned": N_("abandoned")}
"""The games' statuses in words (the names ``--status`` takes are the statuses' own)."""


def status_words(status: str) -> str:
    return tr(STATUS_WORDS[status]) if status in STATUS_WORDS else status


def fail_with(report: dict[str, list[str]], when: str) -> None:
    """Name every game that disagrees with its log and what is wrong; exit 1."""
    for uid, problems in report.items():
        click.echo(tr("game {id}:", id=uid), err=True)
        for problem in problems:
            click.echo(f"  - {problem}", err=True)
    click.echo(tr_plural("{n} game disagrees with its log{when}",
                         "{n} games disagree with their log{when}", len(report),
                         when=" " + when if when else ""), err=True)
    sys.exit(1)


ELSEWHERE: Final[dict[str, Lazy]] = {
    "new-game": Lazy("cli.admin_new_game", "new_game",
        N_("Create a game; print its id, the creator token (shown once) and each invitation "
        "link.")),
    "games": Lazy("cli.admin_listing", "games",
        N_("List the games: id, name, status, variant, players, log length, whose turn, "
        "paused.")),
    "replay": Lazy("cli.admin_history", "replay",
        N_("Replay GAME from its log: each entry (who made it, input, outcomes) and the board "
        "after.")),
    "verify": Lazy("cli.admin_history", "verify",
        N_("Replay every game (or GAMES) and check its hash chain and snapshots; exit 1 naming any"
        " that differ.")),
    "export": Lazy("cli.admin_files", "export",
        N_("Export GAME (its id, the start of it or its name) as JSON with its full log, or every "
        "game with --all DIR.")),
    "import": Lazy("cli.admin_files", "import_",
        N_("Import games exported by ``titanpost admin export`` (FILES; a folder's *.json files; -"
        " for standard input).")),
    "backup": Lazy("cli.admin_files", "backup",
        N_("Write the whole database to FILE (gzip-compressed JSON lines, mode 0600: it holds the "
        "seats' secrets), read in one transaction so that it is one consistent moment even "
        "while players move.")),
    "mail-status": Lazy("cli.admin_mail", "mail_status_command",
        N_("Count the undeliverable addresses, the bounced mails and the mails whose hand-over "
        "to the relay was not confirmed; list each undeliverable address with since when and "
        "why.")),
    "purge": Lazy("cli.admin_purge", "purge_command",
        N_("Purge what the server keeps no longer: games never started and invitations never "
        "accepted after TITANPOST_RETENTION_DAYS, mail bodies after TITANPOST_MAIL_BODY_DAYS.")),
    "restore": Lazy("cli.admin_files", "restore",
        N_("Load FILE, a backup made by ``titanpost admin backup``, into an EMPTY database (a new "
        "one, with or without its schema), in one transaction and with every id kept, so that "
        "links and API tokens go on working; then replay every started game and check it "
        "against its log (exit 1 naming any that differ).")),
}
"""The admin commands kept in other modules, with their short helps (tests/test_cli_lazy.py
checks them against the commands' own)."""


@click.group(cls=LazyGroup, lazy=ELSEWHERE, help=N_(
        "Administer the games in the database (directly: the server need not run)."))
def admin() -> None:
    pass


# ---------------------------------------------------------------------- tick


@admin.command("tick", help=N_(
        "Send due reminders and act on passed deadlines, as the scheduler does (once)."))
@click.option("--now", "now_text", default=None, metavar="ISO-TIME",
              help=N_("Process as of this time (e.g. 2026-12-01T18:00:00+01:00; default: now). "
                   "A time without a zone is UTC."))
@click.option("--max-gap", type=click.IntRange(min=0), default=None, metavar="MINUTES",
              help=N_("A longer time since the last tick is an outage: deadlines are extended "
                   "instead of fired (0: never; default TITANPOST_MAX_TICK_GAP_MINUTES, or "
                   "never with --now: the time skipped to is no outage)."))
@database_option
@one_line
def tick(now_text: str | None, max_gap: int | None, database_url: str | None) -> None:
    from datetime import timedelta

    from app.features.clock.timekeeper import install

    now = read_now(now_text)
    service = open_service(database_url)
    gap = _tick_gap(max_gap, now, service.settings.max_tick_gap_minutes)
    report = install(service).process_due(now, max_gap=timedelta(minutes=gap) if gap else None)
    click.echo(tr("tick at {time}: {summary}", time=report.now.isoformat(),
                  summary=report.summary()))
    for action in report.actions:
        click.echo(f"  {action}")
    if report.failed:
        sys.exit(1)


def read_now(now_text: str | None) -> datetime | None:
    """The time a ``--now ISO-TIME`` option gives (UTC when it has no zone; None: not given)."""
    from datetime import UTC

    if not now_text:
        return None
    try:
        now = datetime.fromisoformat(now_text)
    except ValueError:
        raise click.BadParameter(tr("'{text}' is not an ISO time", text=now_text),
                                 param_hint="--now") from None
    return now if now.tzinfo is not None else now.replace(tzinfo=UTC)


def _tick_gap(given: int | None, now: datetime | None, configured: int) -> int:
    """The outage threshold of a tick, in minutes (0: none). A tick at a given time (``--now``,
    e.g. to try a game's clock out) skips to it on purpose: that is no outage, unless
    ``--max-gap`` asks for the check."""
    if given is not None:
        return given
    return 0 if now is not None else configured


# ---------------------------------------------------------------------- resend, seat, rollback


@admin.command("resend", help=N_(
        "Write the mail of GAME's pending decision again (to each player who is to answer "
        "it), with a new Message-ID; the outbox sends it as any other."))
@click.argument("game")
@database_option
@one_line
def resend(game: str, database_url: str | None) -> None:
    from app.mail.notify import resend_current

    service = open_service(database_url)
    recipients = resend_current(service, find_game_id(service, game))
    click.echo(tr("the mail of the pending decision is written again for {addresses}",
                  addresses=", ".join(recipients)))


@admin.command("start", help=N_(
        "Start GAME once its players have accepted (or with computers in the seats left "
        "open): deal, find the first player and mail them their first decision."))
@click.argument("game")
@click.option("--fill-with-bots", is_flag=True,
              help=N_("Give the seats whose invitation is not accepted yet to the computer."))
@click.option("--bot-level", type=click.Choice(BOT_LEVELS), default=EASY, show_default=True,
              help=N_("The level the computer plays the seats --fill-with-bots gives it at."))
@database_option
@one_line
def start(game: str, fill_with_bots: bool, bot_level: str, database_url: str | None) -> None:
    service = open_service(database_url)
    game = find_game_id(service, game)
    summary = service.start(game, None, fill_with_bots=fill_with_bots, bot_level=bot_level)
    click.echo(tr("game {id} started; pending: {pending}", id=game,
                  pending=_pending_words(service, game, summary)))


@admin.command("seat", help=N_(
        "Replace the player of SEAT (numbered from 1, as the pages do) in the running "
        "GAME: by someone new (--email) or by the computer (--computer). The old player's "
        "links and API tokens stop working."))
@click.argument("game")
@click.argument("seat", type=int)
@click.option("--email", default=None, metavar="ADDRESS",
              help=N_("Invite this address to take the seat over (the computer plays it until "
                   "the invitation is accepted)."))
@click.option("--computer", is_flag=True, help=N_("Give the seat to the computer for good."))
@click.option("--level", type=click.Choice(BOT_LEVELS), default=None,
              help=N_("The level the computer plays the seat at (default: the seat's own, "
                      "easy unless the clock handed it over at normal)."))
@database_option
@one_line
def seat(game: str, seat: int, email: str | None, computer: bool, level: str | None,
         database_url: str | None) -> None:
    if (email is None) == (not computer):
        fail(tr("give --email ADDRESS (a new player) or --computer"))
    if seat < 1:
        fail(tr("there is no seat {number}: seats are numbered from 1", number=seat))
    service = open_service(database_url)
    game = find_game_id(service, game)
    result = service.replace_seat(game, None, seat - 1, email, level=level)
    if email is None:
        click.echo(tr("seat {number} of game {id}: the computer plays it from now on (log "
                      "entry {entry})", number=seat, id=game, entry=result["seq"]))
        return
    click.echo(tr("seat {number} of game {id}: {address} is invited to take it over; the "
                  "computer plays it until they accept", number=seat, id=game,
                  address=result["email"]))
    click.echo(tr("invitation link: {link}", link=join_link(service, result["invite_token"])))


def _pending_words(service: GameService, uid: str, summary: dict[str, Any]) -> str:
    if summary["status"] == FINISHED:
        return tr("nothing: the game is over, won by {winner}", winner=winners_named(
            game_ui(summary["ruleset"]), summary["winner"], lang()))
    view = service.state_at(uid, summary["seq"]).get("view") or {}
    pending = view.get("pending") or {}
    names = {s["position"]: s["name"] or "?" for s in summary["seats"]}
    who = ", ".join(tr("seat {number}", number=p + 1) + f" ({names.get(p, '?')})"
                    for p in summary["to_act"]) or tr("nobody")
    sentence = game_ui(summary["ruleset"]).describe_decision(pending, lang()).rstrip(".")
    words = tr("{decision}, by {players}", decision=sentence, players=who)
    if summary["paused"]:
        words += tr("; the game is paused ({reason})",
                    reason=pause_words(summary["pause_reason"], names))
    return words


@admin.command("rollback", help=N_(
        "Take GAME back to the state after log entry N: a 'rollback N' entry is appended "
        "(the log stays append-only: the entries after N stay in it, no longer counting), "
        "and the players are told. The decision pending then is asked anew."))
@click.argument("game")
@click.option("--to", "to", type=int, required=True, metavar="N",
              help=N_("The log entry whose state the game goes back to (0: the start)."))
@click.option("--yes", is_flag=True, help=N_("Do not ask for confirmation."))
@database_option
@one_line
def rollback(game: str, to: int, yes: bool, database_url: str | None) -> None:
    service = open_service(database_url)
    game = find_game_id(service, game)
    row, _, head = game_row(service, game)
    if row.status not in (ACTIVE, FINISHED) or row.initial_state is None:
        fail(tr("game {id} is {status}: there is nothing to roll back", id=game,
                status=status_words(row.status)))
    if not 0 <= to < head:
        fail(tr("roll back to an entry from 0 to {last} (the game has {count})", last=head - 1,
                count=head))
    if not yes:
        click.confirm(tr("Take game {id} back to the state after entry {entry}? Entries {first} "
                         "to {last} stay in its log but no longer count", id=game, entry=to,
                         first=to + 1, last=head), abort=True)
    summary = service.rollback(game, to)
    click.echo(tr("appended entry {number}: {entry} (by an admin)", number=head + 1,
                  entry="rollback " + str(to)))
    if summary["seq"] > head + 1:
        click.echo(tr("the computer then made entries {first} to {last}", first=head + 2,
                      last=summary["seq"]))
    click.echo(tr("pending now: {pending}", pending=_pending_words(service, game, summary)))
