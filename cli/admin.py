"""``titanpost admin``: the games in the database, worked on directly (no server needed).

``new-game``, ``games``, ``start``, ``tick``, ``resend``, ``seat`` and ``rollback`` are here (with
the pieces every admin command shares); ``replay`` and ``verify`` in cli/admin_history.py,
``export`` / ``import`` and ``backup`` / ``restore`` in cli/admin_files.py, imported when run
(:data:`ELSEWHERE`). Every command takes ``--database-url`` (default
TITANPOST_DATABASE_URL) and works through the game service built as the server builds it, so that
a change made here writes its mails to the outbox and its deadlines like any other. A refusal is
one line on standard error with exit status 1; progress bars go to standard error.

A game's own words and boards come from its :class:`app.games.ui.GameUI`: this module knows no
game. A GAME argument is a game's id, a unique start of it (4 characters or more: ``admin games``
shows 8) or the game's name. Seats are numbered from 0, as the JSON API numbers them; log
entries from 1 (0 is the start).
"""

from __future__ import annotations

import functools
import json
import re
import sys
from collections.abc import Callable, Iterator, Sequence
from datetime import datetime
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
from app.core.i18n import LANGUAGES
from app.core.models import (
    ACTIVE,
    FINISHED,
    GAME_STATUSES,
    Game,
    Move,
    Seat,
)
from app.features.clock.arithmetic import HANDOVERS, TIMEOUT_ACTIONS
from app.games import ruleset
from app.games.base import BOT_LEVEL_WORDS, BOT_LEVELS, EASY
from app.games.commandline import BoardFlags, FlagsRefused, commandline
from app.games.ui import DEFAULT_GAME, game_ui
from app.listeners import build_service
from app.service import (
    GameService,
    ServiceError,
)
from app.web.api.schemas import GAME_VARIANTS, GAMES
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


def open_service(database_url: str | None) -> GameService:
    try:
        settings = Settings.from_env()
    except ConfigError as exc:
        raise click.ClickException(str(exc)) from None
    service = build_service(settings, database_url)
    context = click.get_current_context(silent=True)
    if context is not None:  # close the pooled connections when the command ends
        context.call_on_close(service.engine.dispose)
    return service


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
    """The id of the game named by ``text``: its id, a unique prefix of it (4 characters or
    more, as ``admin games`` shows 8), or its exact name (case does not matter)."""
    wanted = text.strip().lower()
    if re.fullmatch(r"[0-9a-f]{32}", wanted):
        return wanted
    query = select(Game.uid, Game.name).order_by(col(Game.id))
    if re.fullmatch(r"[0-9a-f]{4,31}", wanted):
        query = query.where(or_(col(Game.uid).startswith(wanted, autoescape=True),
                                func.lower(Game.name) == wanted))
    else:
        query = query.where(func.lower(Game.name) == wanted)
    with service.session() as s:
        found = list(s.exec(query.limit(6)).all())
    if not found:
        fail(tr("no game '{text}' (give its id, the start of its id or its name; {command} "
                "lists them)", text=text, command="'titanpost admin games'"))
    if len(found) > 1:
        listed = ", ".join(f"{uid[:8]} ({name or tr('no name')})" for uid, name in found[:5])
        fail(tr("'{text}' names more than one game: {games}; give more of the id", text=text,
                games=listed + (" ..." if len(found) > 5 else "")))
    return str(found[0][0])


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


ELSEWHERE: Final[dict[str, Lazy]] = {
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


# ---------------------------------------------------------------------- new-game

SEAT_SPEC = re.compile(r"(?P<who>[^:]+?)(?::(?P<titans>[^:@]*))?(?:@(?P<team>\d+))?")
COMPUTER_SEATS = ("bot", "computer")


def _level(text: str, seat: str) -> str:
    """A computer seat's level as ``--seat bot=LEVEL`` names it."""
    level = text.strip().lower()
    if level not in BOT_LEVELS:
        fail(tr("--seat '{text}': the computer's level is {levels}", text=seat,
                levels=", ".join(BOT_LEVELS)))
    return level


def _seat_specs(seats: Sequence[str], bots: Sequence[str],
                languages: Sequence[str]) -> list[dict[str, Any]]:
    """The service's seat objects from ``--seat`` (in order), then ``--bot`` computer seats
    (each at the level it names)."""
    if len(languages) > 1 and len(languages) != len(seats):
        fail(tr("give one --language for every seat, or one for all: {seats} --seat but "
                "{languages} --language", seats=len(seats), languages=len(languages)))
    specs: list[dict[str, Any]] = []
    for index, text in enumerate(seats):
        match = SEAT_SPEC.fullmatch(text.strip())
        if match is None:
            fail(tr("--seat '{text}': give {form}, or {bot}", text=text,
                    form="EMAIL[:titan1,titan2][@team]", bot="bot[=LEVEL][:titan][@team]"))
        who, _, level = match["who"].strip().partition("=")
        spec: dict[str, Any] = ({"bot": True} if who.strip().lower() in COMPUTER_SEATS
                                else {"email": who.strip()})
        if level.strip() and not spec.get("bot"):
            fail(tr("--seat '{text}': only a computer seat has a level", text=text))
        if level.strip():
            spec["level"] = _level(level, text)
        titans = [t.strip().lower() for t in (match["titans"] or "").split(",") if t.strip()]
        if titans:
            spec["titans"] = titans
        if match["team"] is not None:
            spec["team"] = int(match["team"])
        if languages and not spec.get("bot"):
            spec["language"] = languages[0] if len(languages) == 1 else languages[index]
        specs.append(spec)
    specs += [{"bot": True, "level": level} for level in bots]
    if not specs:
        fail(tr("give the seats: --seat EMAIL (one per player) and/or --bot"))
    return specs


def _clock_settings(**given: Any) -> dict[str, Any]:
    settings = {key: value for key, value in given.items()
                if value is not None and key not in ("reminders", "no_reminders", "spectators")}
    if given["no_reminders"]:
        settings["reminders"] = []
    elif given["reminders"]:
        settings["reminders"] = list(given["reminders"])
    if not given["spectators"]:
        settings["spectators"] = False
    return settings


def _setup_and_variant(game: str, circuits: Sequence[str], start: str | None,
                       leaders: bool, variant: str | None) -> tuple[dict[str, Any], str]:
    """The setup and variant of a new game of ``game`` from the flags that name them, as the
    game reads them (its ``commandline`` module: :mod:`app.games.commandline`)."""
    flags = BoardFlags(circuits=tuple(circuits), start=start, leaders=leaders, variant=variant)
    try:
        setup, chosen = commandline(game).setup_of(flags, lang())
    except FlagsRefused as exc:
        fail(str(exc))
    return setup, chosen


@admin.command("new-game", help=N_(
        "Create a game; print its id, the creator token (shown once) and each invitation "
        "link."))
@click.option("--game", "game_name", type=click.Choice(GAMES), default=DEFAULT_GAME,
              show_default=True, help=N_("The game to play."))
@click.option("--variant", type=click.Choice(GAME_VARIANTS), default=None,
              help=N_("Titan Race: default grand-slam with three circuits, else standard. The "
                   "Great Race: standard or leaders."))
@click.option("--circuit", "-c", "circuits", multiple=True, metavar="NAME|FILE.toml",
              help=N_("Titan Race: one circuit, or three for grand-slam (built-in name or a TOML "
                   "file)."))
@click.option("--start", "start", default=None, metavar="CITY",
              help=N_("The Great Race: the start city, alger (the default) or le-cap."))
@click.option("--leaders", is_flag=True, help=N_("The Great Race: with the Leader module."))
@click.option("--name", default="", help=N_("The game's name."))
@click.option("--seat", "seats", multiple=True, metavar="EMAIL[:TITANS][@TEAM]",
              help=N_("A player's seat, in seating order: their address, optionally their "
                   "Titan(s) (two for two-player, comma-separated) or crew (The Great Race) "
                   "and team number. 'bot' instead of an address is a computer seat, "
                   "'bot=strong' one at a level (easy, normal or strong; default easy). "
                   "Repeat for each seat."))
@click.option("--bot", "bots", multiple=True, is_flag=False, flag_value=EASY,
              type=click.Choice(BOT_LEVELS), metavar="[LEVEL]",
              help=N_("Add a computer seat after the --seat ones, at LEVEL: easy (the "
                      "default), normal or strong (repeatable)."))
@click.option("--language", "languages", multiple=True, type=click.Choice(LANGUAGES),
              help=N_("The mail language: once for every player, or once per --seat in order."))
@click.option("--deadline-hours", type=int, default=None,
              help=N_("Hours for a decision of one's own turn (0: no clock; default 48)."))
@click.option("--reaction-hours", type=int, default=None,
              help=N_("Hours for a reaction window or pirate choice (default 12)."))
@click.option("--bank-hours", type=int, default=None, help=N_("Each player's time bank (hours)."))
@click.option("--increment-hours", type=int, default=None,
              help=N_("Hours added to the bank after each turn."))
@click.option("--reminder", "reminders", multiple=True, metavar="POINT",
              help=N_("A reminder: a share of the time ('50%') or hours before the deadline "
                   "('2h'); repeatable, at most 5 (default 50% and 2h)."))
@click.option("--no-reminders", is_flag=True, help=N_("Send no reminders."))
@click.option("--on-timeout", type=click.Choice([*TIMEOUT_ACTIONS]), default=None,
              help=N_("What a missed deadline does (default bot)."))
@click.option("--max-missed", type=int, default=None,
              help=N_("Missed deadlines after which the seat is handed over (0: never)."))
@click.option("--after-missed", type=click.Choice([*HANDOVERS]), default=None,
              help=N_("Who takes a seat over after --max-missed (default computer)."))
@click.option("--no-spectators", is_flag=True, help=N_("Only the players may look at the game."))
@click.option("--owner-email", default=None,
              help=N_("Who is told about the game's clock (default: the first player)."))
@click.option("--seed", type=click.IntRange(0, 2**62), default=None,
              help=N_("Deal from this seed (a tournament, a test): every seat is told the seed "
                   "was chosen. Default: a secret drawn with the players (fair dealing)."))
@click.option("--start-with-bots", is_flag=True,
              help=N_("Start the game at once (a game of computer seats only: no player could "
                   "have accepted an invitation yet)."))
@click.option("--json", "as_json", is_flag=True, help=N_("Print the result as JSON."))
@database_option
@one_line
def new_game(game_name: str, variant: str | None, circuits: tuple[str, ...], start: str | None,
             leaders: bool, name: str, seats: tuple[str, ...],
             bots: tuple[str, ...], languages: tuple[str, ...], deadline_hours: int | None,
             reaction_hours: int | None, bank_hours: int | None, increment_hours: int | None,
             reminders: tuple[str, ...], no_reminders: bool, on_timeout: str | None,
             max_missed: int | None, after_missed: str | None, no_spectators: bool,
             owner_email: str | None, seed: int | None, start_with_bots: bool, as_json: bool,
             database_url: str | None) -> None:
    if reminders and no_reminders:
        fail(tr("give --reminder or --no-reminders, not both"))
    specs = _seat_specs(seats, bots, languages)
    if start_with_bots and any(not spec.get("bot") for spec in specs):
        fail(tr("--start-with-bots starts a game of computer seats only: the computer would "
                "play every invited player's seat (and the whole race at once); start the game "
                "once its players have accepted"))
    setup, variant = _setup_and_variant(game_name, circuits, start, leaders, variant)
    settings = _clock_settings(
        deadline_hours=deadline_hours, reaction_hours=reaction_hours, bank_hours=bank_hours,
        increment_hours=increment_hours, max_missed=max_missed, on_timeout=on_timeout,
        after_missed=after_missed, reminders=reminders, no_reminders=no_reminders,
        spectators=not no_spectators)
    service = open_service(database_url)
    created = service.create_game(seats=specs, variant=variant, setup=setup, name=name,
                                  settings=settings, seed=seed, owner_email=owner_email,
                                  rules_name=game_name)
    uid = created["game"]
    invitations = [invitation | {"link": join_link(service, invitation["invite_token"])}
                   for invitation in created["invitations"]]
    started = None
    if start_with_bots:
        started = service.start(uid, created["creator_token"], fill_with_bots=True)
    if as_json:
        click.echo(json.dumps({"game": uid, "creator_token": created["creator_token"],
                               "ruleset": game_name, "variant": variant, "invitations": invitations,
                               "started": started}, indent=2))
        return
    _print_created(uid, name, game_name, variant, setup, len(specs), created["creator_token"],
                   invitations, started)


def _print_created(uid: str, name: str, game_name: str, variant: str, setup: Any, seats: int,
                   creator_token: str, invitations: Sequence[dict[str, Any]],
                   started: dict[str, Any] | None) -> None:
    """What ``new-game`` says of the game it made."""
    ui = game_ui(game_name)
    title = f" '{name.strip()}'" if name.strip() else ""
    what = "" if game_name == DEFAULT_GAME else f"{ui.title}, "
    click.echo(tr("game {id}{title} created: {game}{variant} on {boards}, {seats} seats",
                  id=uid, title=title, game=what, variant=variant,
                  boards=", ".join(ui.setup_titles(setup)), seats=seats))
    click.echo(tr("creator token (shown once; it starts, invites and abandons the game): "
                  "{token}", token=creator_token))
    by_position = {invitation["position"]: invitation for invitation in invitations}
    for position in range(seats):
        invitation = by_position.get(position)
        if invitation is None:
            click.echo(tr("seat {number}: the computer", number=position + 1))
        else:
            click.echo(tr("seat {number}: {address} {link}", number=position + 1,
                          address=invitation["email"], link=invitation["link"]))
    if started is not None:
        line = tr("started: the game is {status} after {count} entries",
                  status=status_words(started["status"]), count=started["seq"])
        if started["winner"]:
            line += tr(", won by {winner}", winner=ui.piece_name(started["winner"], lang()))
        click.echo(line)


# ---------------------------------------------------------------------- games


def _game_list(service: GameService, statuses: Sequence[str]) -> list[dict[str, Any]]:
    head = (select(func.coalesce(func.max(Move.seq), 0)).where(Move.game_id == Game.id)
            .correlate(Game).scalar_subquery())
    query = select(Game, head).order_by(col(Game.created_at), col(Game.id))
    if statuses:
        query = query.where(col(Game.status).in_(list(statuses)))
    result = []
    with service.session() as s:
        rows = s.exec(query).all()
        ids = [game.id for game, _ in rows]
        seats: dict[int, list[Seat]] = {}
        for seat in s.exec(select(Seat).where(col(Seat.game_id).in_(ids))
                           .order_by(col(Seat.game_id), col(Seat.position))).all():
            seats.setdefault(seat.game_id, []).append(seat)
        for game, seq in rows:
            assert game.id is not None
            mine = seats.get(game.id, [])
            to_act: list[int] = []
            decision = None
            if game.status == ACTIVE:
                loaded = service.load(s, game.uid)
                if loaded.state is not None:
                    to_act = loaded.to_act()
                    pending = loaded.rules.pending(loaded.state) or {}
                    decision = {"kind": pending.get("kind"), "titan": pending.get("titan"),
                                "words": game_ui(game.ruleset).describe_decision(pending,
                                                                                 lang())}
            result.append({
                "game": game.uid,
                "name": game.name,
                "status": game.status,
                "ruleset": game.ruleset,
                "variant": game.variant,
                "players": [
                    {"position": seat.position, "name": seat.player_name, "email": seat.email,
                     "bot": seat.is_bot, "level": seat.bot_level if seat.is_bot else None,
                     "accepted": seat.accepted_at is not None,
                     "titans": ruleset(game.ruleset).piece_names(seat.pieces)}
                    for seat in mine
                ],
                "seq": int(seq),
                "to_act": to_act,
                "decision": decision,
                "paused": game.paused_at is not None,
                "pause_reason": game.pause_reason,
                "winner": game.winner,
                "created": game.created_at.strftime("%Y-%m-%d %H:%M"),
            })
    return result


def _player_words(player: dict[str, Any]) -> str:
    level = player.get("level") or EASY
    if player["bot"] and not player["email"]:
        return tr("computer ({level})", level=tr(BOT_LEVEL_WORDS[level]))
    who = player["name"] or player["email"]
    if player["bot"]:
        return tr("{name} (computer, {level})", name=who, level=tr(BOT_LEVEL_WORDS[level]))
    return who if player["accepted"] else tr("{name} (invited)", name=who)


@admin.command("games", help=N_(
        "List the games: id, name, status, variant, players, log length, whose turn, "
        "paused."))
@click.option("--status", "statuses", type=click.Choice(GAME_STATUSES), multiple=True,
              help=N_("Only games of this status (repeatable)."))
@click.option("--json", "as_json", is_flag=True, help=N_("Print the list as JSON."))
@database_option
@one_line
def games(statuses: tuple[str, ...], as_json: bool, database_url: str | None) -> None:
    listed = _game_list(open_service(database_url), statuses)
    if as_json:
        click.echo(json.dumps(listed, indent=2))
        return
    if not listed:
        click.echo(tr("no games") + (" (" + ", ".join(status_words(s) for s in statuses) + ")"
                                     if statuses else ""))
        return
    for game in listed:
        _print_game(game)


GAME_FIELDS: Final = (N_("name"), N_("players"), N_("turn"), N_("paused"), N_("winner"),
                      N_("created"))
"""The lines of a game in ``admin games``: each field's name."""


def _print_game(game: dict[str, Any]) -> None:
    """One game of ``admin games``: its head line, then a line per field it has."""
    ui = game_ui(game["ruleset"])
    players = {p["position"]: p for p in game["players"]}
    kind = "" if game["ruleset"] == DEFAULT_GAME else f"{ui.title}  "
    head = (f"{game['game']}  {status_words(game['status'])}  {kind}{game['variant']}  "
            + tr("seq {number}", number=game["seq"]))
    click.echo(click.style(head, bold=True) + ("  " + tr("paused") if game["paused"] else ""))
    fields: dict[str, str] = {}
    if game["name"]:
        fields["name"] = game["name"]
    fields["players"] = ", ".join(f"{p['position'] + 1} {_player_words(p)}"
                                  for p in game["players"])
    if game["decision"] is not None and game["to_act"]:
        who = ", ".join(tr("seat {number}", number=p + 1)
                        + (f" {_player_words(players[p])}" if p in players else "")
                        for p in game["to_act"])
        fields["turn"] = f"{game['decision']['words'].rstrip('.')}: {who}"
    if game["paused"]:
        fields["paused"] = pause_words(game["pause_reason"],
                                       {p: str(s["name"]) for p, s in players.items()})
    if game["winner"]:
        fields["winner"] = ui.piece_name(game["winner"], lang())
    fields["created"] = game["created"]
    width = max(len(tr(field)) for field in GAME_FIELDS)
    for field, value in fields.items():
        click.echo(f"  {tr(field):<{width}}  {value}")


STATUS_WORDS: Final = {"open": N_("open"), "active": N_("active"), "finished": N_("finished"),
                       "abandoned": N_("abandoned")}
"""The games' statuses in words (the names ``--status`` takes are the statuses' own)."""


def status_words(status: str) -> str:
    return tr(STATUS_WORDS[status]) if status in STATUS_WORDS else status



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
    from datetime import UTC, timedelta

    from app.features.clock.timekeeper import install

    now = None
    if now_text:
        try:
            now = datetime.fromisoformat(now_text)
        except ValueError:
            raise click.BadParameter(tr("'{text}' is not an ISO time", text=now_text),
                                     param_hint="--now") from None
        if now.tzinfo is None:
            now = now.replace(tzinfo=UTC)
    service = open_service(database_url)
    gap = _tick_gap(max_gap, now, service.settings.max_tick_gap_minutes)
    report = install(service).process_due(now, max_gap=timedelta(minutes=gap) if gap else None)
    click.echo(tr("tick at {time}: {summary}", time=report.now.isoformat(),
                  summary=report.summary()))
    for action in report.actions:
        click.echo(f"  {action}")
    if report.failed:
        sys.exit(1)


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
        return tr("nothing: the game is over, won by {winner}", winner=game_ui(
            summary["ruleset"]).piece_name(summary["winner"], lang()))
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
