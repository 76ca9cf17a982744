"""``titanpost admin``: the games in the database, worked on directly (no server needed).

``new-game``, ``games``, ``start``, ``tick``, ``resend``, ``seat`` and ``rollback`` are here (with
the pieces every admin command shares); ``replay`` and ``verify`` in cli/admin_history.py,
``export`` / ``import`` and ``backup`` / ``restore`` in cli/admin_files.py, imported when run
(:data:`ELSEWHERE`). Every command takes ``--database-url`` (default
TITANPOST_DATABASE_URL) and works through the game service built as the server builds it, so that
a change made here writes its mails to the outbox and its deadlines like any other. A refusal is
one line on standard error with exit status 1; progress bars go to standard error.

A game's own words and boards come from its :class:`app.gameui.GameUI`: this module knows no
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

from app.api import GAME_VARIANTS, GAMES
from app.clock import HANDOVERS, TIMEOUT_ACTIONS
from app.config import ConfigError, Settings
from app.games import ruleset
from app.games.titanrace.engine import CircuitError, local_circuit
from app.gameui import DEFAULT_GAME, game_ui
from app.i18n import LANGUAGES
from app.models import (
    ACTIVE,
    FINISHED,
    GAME_STATUSES,
    Game,
    Move,
    Seat,
)
from app.pausewords import pause_said
from app.service import (
    GameService,
    ServiceError,
)
from app.wiring import build_service
from cli.lazy import Lazy, LazyGroup

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
            fail(exc.message)
        except ConfigError as exc:
            fail(str(exc))
        except SQLAlchemyError as exc:
            cause = getattr(exc, "orig", None) or exc
            first = (str(cause).strip().splitlines() or [type(cause).__name__])[0]
            hint = (" (is its schema there? titanpost db upgrade)"
                    if "no such table" in first or "does not exist" in first else "")
            fail(f"the database refused: {first}{hint}")

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
    "--database-url", default=None, help="Overrides TITANPOST_DATABASE_URL."
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
        fail(f"no game '{text}' (give its id, the start of its id or its name; "
              "'titanpost admin games' lists them)")
    if len(found) > 1:
        listed = ", ".join(f"{uid[:8]} ({name or 'no name'})" for uid, name in found[:5])
        fail(f"'{text}' names more than one game: {listed}{' ...' if len(found) > 5 else ''}; "
              "give more of the id")
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
        "Replay GAME from its log: each entry (who made it, input, outcomes) and the board "
        "after."),
    "verify": Lazy("cli.admin_history", "verify",
        "Replay every game (or GAMES) and check its hash chain and snapshots; exit 1 naming any"
        " that differ."),
    "export": Lazy("cli.admin_files", "export",
        "Export GAME (its id, the start of it or its name) as JSON with its full log, or every "
        "game with --all DIR."),
    "import": Lazy("cli.admin_files", "import_",
        "Import games exported by ``titanpost admin export`` (FILES; a folder's *.json files; -"
        " for standard input)."),
    "backup": Lazy("cli.admin_files", "backup",
        "Write the whole database to FILE (gzip-compressed JSON lines, mode 0600: it holds the "
        "seats' secrets), read in one transaction so that it is one consistent moment even "
        "while players move."),
    "restore": Lazy("cli.admin_files", "restore",
        "Load FILE, a backup made by ``titanpost admin backup``, into an EMPTY database (a new "
        "one, with or without its schema), in one transaction and with every id kept, so that "
        "links and API tokens go on working; then replay every started game and check it "
        "against its log (exit 1 naming any that differ)."),
}
"""The admin commands kept in other modules, with their short helps (tests/test_cli_lazy.py
checks them against the commands' own)."""


@click.group(cls=LazyGroup, lazy=ELSEWHERE)
def admin() -> None:
    """Administer the games in the database (directly: the server need not run)."""


# ---------------------------------------------------------------------- new-game

SEAT_SPEC = re.compile(r"(?P<who>[^:]+?)(?::(?P<titans>[^:@]*))?(?:@(?P<team>\d+))?")
COMPUTER_SEATS = ("bot", "computer")


def _seat_specs(seats: Sequence[str], bots: int, languages: Sequence[str]) -> list[dict[str, Any]]:
    """The service's seat objects from ``--seat`` (in order), then ``--bot`` computer seats."""
    if len(languages) > 1 and len(languages) != len(seats):
        fail(f"give one --language for every seat, or one for all: {len(seats)} --seat but "
              f"{len(languages)} --language")
    specs: list[dict[str, Any]] = []
    for index, text in enumerate(seats):
        match = SEAT_SPEC.fullmatch(text.strip())
        if match is None:
            fail(f"--seat '{text}': give EMAIL[:titan1,titan2][@team], or bot[:titan][@team]")
        who = match["who"].strip()
        spec: dict[str, Any] = ({"bot": True} if who.lower() in COMPUTER_SEATS
                                else {"email": who})
        titans = [t.strip().lower() for t in (match["titans"] or "").split(",") if t.strip()]
        if titans:
            spec["titans"] = titans
        if match["team"] is not None:
            spec["team"] = int(match["team"])
        if languages and not spec.get("bot"):
            spec["language"] = languages[0] if len(languages) == 1 else languages[index]
        specs.append(spec)
    specs += [{"bot": True} for _ in range(bots)]
    if not specs:
        fail("give the seats: --seat EMAIL (one per player) and/or --bot")
    return specs


def _circuit_specs(game: str, circuits: Sequence[str], variant: str | None) -> list[Any]:
    """The game's boards: built-in ones by name, a TOML file read and stored in the game
    (inline); the game's default board(s) when none is given."""
    ui = game_ui(game)
    if not circuits:
        if variant == "grand-slam":
            return list(ui.board_choices[:3])
        rules = ruleset(game)
        return rules.circuits_of(rules.default_setup(variant or "standard"))
    specs: list[Any] = []
    for circuit in circuits:
        if circuit.strip().lower() in ui.board_choices:
            specs.append(circuit.strip().lower())
            continue
        try:  # (the admin's own file, read here: the server takes a circuit inline only)
            specs.append(local_circuit(circuit).to_data())
        except CircuitError as exc:
            fail(str(exc))
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
    """The setup and variant of a new game of ``game`` from the options that name them."""
    if game == "great-race":
        if circuits:
            fail("The Great Race is played on the Africa map: give its start city with "
                  "--start, not --circuit")
        if leaders and variant not in (None, "leaders"):
            fail(f"--leaders is the leaders variant: it goes with no --variant {variant}")
        variant = "leaders" if leaders else (variant or "standard")
        rules = ruleset(game)
        setup = (rules.setup_from_circuits([start.strip().lower()]) if start
                 else rules.default_setup(variant))
        return setup, variant
    if start or leaders:
        fail("--start and --leaders are The Great Race's (--game great-race)")
    boards = _circuit_specs(game, circuits, variant)
    variant = variant or ("grand-slam" if len(boards) == 3 else "standard")
    return ruleset(game).setup_from_circuits(boards), variant


@admin.command("new-game")
@click.option("--game", "game_name", type=click.Choice(GAMES), default=DEFAULT_GAME,
              show_default=True, help="The game to play.")
@click.option("--variant", type=click.Choice(GAME_VARIANTS), default=None,
              help="Titan Race: default grand-slam with three circuits, else standard. The "
                   "Great Race: standard or leaders.")
@click.option("--circuit", "-c", "circuits", multiple=True, metavar="NAME|FILE.toml",
              help="Titan Race: one circuit, or three for grand-slam (built-in name or a TOML "
                   "file).")
@click.option("--start", "start", default=None, metavar="CITY",
              help="The Great Race: the start city, alger (the default) or le-cap.")
@click.option("--leaders", is_flag=True, help="The Great Race: with the Leader module.")
@click.option("--name", default="", help="The game's name.")
@click.option("--seat", "seats", multiple=True, metavar="EMAIL[:TITANS][@TEAM]",
              help="A player's seat, in seating order: their address, optionally their "
                   "Titan(s) (two for two-player, comma-separated) or crew (The Great Race) "
                   "and team number. 'bot' instead of an address is a computer seat. Repeat "
                   "for each seat.")
@click.option("--bot", "bots", count=True, help="Add a computer seat after the --seat ones "
                                                "(repeatable).")
@click.option("--language", "languages", multiple=True, type=click.Choice(LANGUAGES),
              help="The mail language: once for every player, or once per --seat in order.")
@click.option("--deadline-hours", type=int, default=None,
              help="Hours for a decision of one's own turn (0: no clock; default 48).")
@click.option("--reaction-hours", type=int, default=None,
              help="Hours for a reaction window or pirate choice (default 12).")
@click.option("--bank-hours", type=int, default=None, help="Each player's time bank (hours).")
@click.option("--increment-hours", type=int, default=None,
              help="Hours added to the bank after each turn.")
@click.option("--reminder", "reminders", multiple=True, metavar="POINT",
              help="A reminder: a share of the time ('50%') or hours before the deadline "
                   "('2h'); repeatable, at most 5 (default 50% and 2h).")
@click.option("--no-reminders", is_flag=True, help="Send no reminders.")
@click.option("--on-timeout", type=click.Choice([*TIMEOUT_ACTIONS]), default=None,
              help="What a missed deadline does (default bot).")
@click.option("--max-missed", type=int, default=None,
              help="Missed deadlines after which the seat is handed over (0: never).")
@click.option("--after-missed", type=click.Choice([*HANDOVERS]), default=None,
              help="Who takes a seat over after --max-missed (default computer).")
@click.option("--no-spectators", is_flag=True, help="Only the players may look at the game.")
@click.option("--owner-email", default=None,
              help="Who is told about the game's clock (default: the first player).")
@click.option("--seed", type=click.IntRange(0, 2**62), default=None,
              help="Deal from this seed (a tournament, a test): every seat is told the seed "
                   "was chosen. Default: a secret drawn with the players (fair dealing).")
@click.option("--start-with-bots", is_flag=True,
              help="Start the game at once (a game of computer seats only: no player could "
                   "have accepted an invitation yet).")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@database_option
@one_line
def new_game(game_name: str, variant: str | None, circuits: tuple[str, ...], start: str | None,
             leaders: bool, name: str, seats: tuple[str, ...],
             bots: int, languages: tuple[str, ...], deadline_hours: int | None,
             reaction_hours: int | None, bank_hours: int | None, increment_hours: int | None,
             reminders: tuple[str, ...], no_reminders: bool, on_timeout: str | None,
             max_missed: int | None, after_missed: str | None, no_spectators: bool,
             owner_email: str | None, seed: int | None, start_with_bots: bool, as_json: bool,
             database_url: str | None) -> None:
    """Create a game; print its id, the creator token (shown once) and each invitation link."""
    if reminders and no_reminders:
        fail("give --reminder or --no-reminders, not both")
    specs = _seat_specs(seats, bots, languages)
    if start_with_bots and any(not spec.get("bot") for spec in specs):
        fail("--start-with-bots starts a game of computer seats only: the computer would play "
              "every invited player's seat (and the whole race at once); start the game once "
              "its players have accepted")
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
    title = f" '{name.strip()}'" if name.strip() else ""
    shown = game_ui(game_name).setup_titles(setup)
    what = "" if game_name == DEFAULT_GAME else f"{game_ui(game_name).title}, "
    click.echo(f"game {uid}{title} created: {what}{variant} on {', '.join(shown)}, "
               f"{len(specs)} seats")
    click.echo(f"creator token (shown once; it starts, invites and abandons the game): "
               f"{created['creator_token']}")
    by_position = {invitation["position"]: invitation for invitation in invitations}
    for position in range(len(specs)):
        invitation = by_position.get(position)
        if invitation is None:
            click.echo(f"seat {position + 1}: the computer")
        else:
            click.echo(f"seat {position + 1}: {invitation['email']} {invitation['link']}")
    if started is not None:
        click.echo(f"started: the game is {started['status']} after {started['seq']} entries"
                   + (f", won by {started['winner']}" if started["winner"] else ""))


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
                                "words": game_ui(game.ruleset).describe_decision(pending, "en")}
            result.append({
                "game": game.uid,
                "name": game.name,
                "status": game.status,
                "ruleset": game.ruleset,
                "variant": game.variant,
                "players": [
                    {"position": seat.position, "name": seat.player_name, "email": seat.email,
                     "bot": seat.is_bot, "accepted": seat.accepted_at is not None,
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
    if player["bot"] and not player["email"]:
        return "computer"
    who = player["name"] or player["email"]
    if player["bot"]:
        return f"{who} (computer)"
    return who if player["accepted"] else f"{who} (invited)"


@admin.command("games")
@click.option("--status", "statuses", type=click.Choice(GAME_STATUSES), multiple=True,
              help="Only games of this status (repeatable).")
@click.option("--json", "as_json", is_flag=True, help="Print the list as JSON.")
@database_option
@one_line
def games(statuses: tuple[str, ...], as_json: bool, database_url: str | None) -> None:
    """List the games: id, name, status, variant, players, log length, whose turn, paused."""
    listed = _game_list(open_service(database_url), statuses)
    if as_json:
        click.echo(json.dumps(listed, indent=2))
        return
    if not listed:
        click.echo("no games" + (f" ({', '.join(statuses)})" if statuses else ""))
        return
    for game in listed:
        players = {p["position"]: p for p in game["players"]}
        kind = "" if game["ruleset"] == DEFAULT_GAME else f"{game_ui(game['ruleset']).title}  "
        head = f"{game['game']}  {game['status']}  {kind}{game['variant']}  seq {game['seq']}"
        click.echo(click.style(head, bold=True) + ("  paused" if game["paused"] else ""))
        if game["name"]:
            click.echo(f"  name     {game['name']}")
        click.echo("  players  " + ", ".join(f"{p['position'] + 1} {_player_words(p)}"
                                             for p in game["players"]))
        if game["decision"] is not None and game["to_act"]:
            who = ", ".join(f"seat {p + 1} {_player_words(players[p])}" if p in players
                            else f"seat {p + 1}" for p in game["to_act"])
            click.echo(f"  turn     {game['decision']['words'].rstrip('.')}: {who}")
        if game["paused"]:
            said = pause_said(game["pause_reason"], {p: str(s["name"]) for p, s in players.items()})
            click.echo(f"  paused   {said}")
        if game["winner"]:
            click.echo(f"  winner   {game['winner']}")
        click.echo(f"  created  {game['created']}")


# ---------------------------------------------------------------------- tick


@admin.command("tick")
@click.option("--now", "now_text", default=None, metavar="ISO-TIME",
              help="Process as of this time (e.g. 2026-12-01T18:00:00+01:00; default: now). "
                   "A time without a zone is UTC.")
@click.option("--max-gap", type=click.IntRange(min=0), default=None, metavar="MINUTES",
              help="A longer time since the last tick is an outage: deadlines are extended "
                   "instead of fired (0: never; default TITANPOST_MAX_TICK_GAP_MINUTES, or "
                   "never with --now: the time skipped to is no outage).")
@database_option
@one_line
def tick(now_text: str | None, max_gap: int | None, database_url: str | None) -> None:
    """Send due reminders and act on passed deadlines, as the scheduler does (once)."""
    from datetime import UTC, timedelta

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
    service = open_service(database_url)
    gap = _tick_gap(max_gap, now, service.settings.max_tick_gap_minutes)
    report = install(service).process_due(now, max_gap=timedelta(minutes=gap) if gap else None)
    click.echo(f"tick at {report.now.isoformat()}: {report.summary()}")
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


@admin.command("resend")
@click.argument("game")
@database_option
@one_line
def resend(game: str, database_url: str | None) -> None:
    """Write the mail of GAME's pending decision again (to each player who is to answer it),
    with a new Message-ID; the outbox sends it as any other."""
    from app.mail.notify import resend_current

    service = open_service(database_url)
    recipients = resend_current(service, find_game_id(service, game))
    click.echo(f"the mail of the pending decision is written again for {', '.join(recipients)}")


@admin.command("start")
@click.argument("game")
@click.option("--fill-with-bots", is_flag=True,
              help="Give the seats whose invitation is not accepted yet to the computer.")
@database_option
@one_line
def start(game: str, fill_with_bots: bool, database_url: str | None) -> None:
    """Start GAME once its players have accepted (or with computers in the seats left open):
    deal, find the first player and mail them their first decision."""
    service = open_service(database_url)
    game = find_game_id(service, game)
    summary = service.start(game, None, fill_with_bots=fill_with_bots)
    click.echo(f"game {game} started; pending: {_pending_words(service, game, summary)}")


@admin.command("seat")
@click.argument("game")
@click.argument("seat", type=int)
@click.option("--email", default=None, metavar="ADDRESS",
              help="Invite this address to take the seat over (the computer plays it until "
                   "the invitation is accepted).")
@click.option("--computer", is_flag=True, help="Give the seat to the computer for good.")
@database_option
@one_line
def seat(game: str, seat: int, email: str | None, computer: bool,
         database_url: str | None) -> None:
    """Replace the player of SEAT (numbered from 1, as the pages do) in the running GAME: by
    someone new (--email) or by the computer (--computer). The old player's links and API
    tokens stop working."""
    if (email is None) == (not computer):
        fail("give --email ADDRESS (a new player) or --computer")
    if seat < 1:
        fail(f"there is no seat {seat}: seats are numbered from 1")
    service = open_service(database_url)
    game = find_game_id(service, game)
    result = service.replace_seat(game, None, seat - 1, email)
    if email is None:
        click.echo(f"seat {seat} of game {game}: the computer plays it from now on "
                   f"(log entry {result['seq']})")
        return
    click.echo(f"seat {seat} of game {game}: {result['email']} is invited to take it over; "
               "the computer plays it until they accept")
    click.echo(f"invitation link: {join_link(service, result['invite_token'])}")


def _pending_words(service: GameService, uid: str, summary: dict[str, Any]) -> str:
    if summary["status"] == FINISHED:
        return f"nothing: the game is over, won by {summary['winner']}"
    view = service.state_at(uid, summary["seq"]).get("view") or {}
    pending = view.get("pending") or {}
    names = {s["position"]: s["name"] or "?" for s in summary["seats"]}
    who = ", ".join(f"seat {p + 1} ({names.get(p, '?')})" for p in summary["to_act"]) or "nobody"
    sentence = game_ui(summary["ruleset"]).describe_decision(pending, "en").rstrip(".")
    words = f"{sentence}, by {who}"
    if summary["paused"]:
        words += f"; the game is paused ({pause_said(summary['pause_reason'], names)})"
    return words


@admin.command("rollback")
@click.argument("game")
@click.option("--to", "to", type=int, required=True, metavar="N",
              help="The log entry whose state the game goes back to (0: the start).")
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
@database_option
@one_line
def rollback(game: str, to: int, yes: bool, database_url: str | None) -> None:
    """Take GAME back to the state after log entry N: a 'rollback N' entry is appended (the log
    stays append-only: the entries after N stay in it, no longer counting), and the players are
    told. The decision pending then is asked anew."""
    service = open_service(database_url)
    game = find_game_id(service, game)
    row, _, head = game_row(service, game)
    if row.status not in (ACTIVE, FINISHED) or row.initial_state is None:
        fail(f"game {game} is {row.status}: there is nothing to roll back")
    if not 0 <= to < head:
        fail(f"roll back to an entry from 0 to {head - 1} (the game has {head})")
    if not yes:
        click.confirm(f"Take game {game} back to the state after entry {to}? Entries "
                      f"{to + 1} to {head} stay in its log but no longer count", abort=True)
    summary = service.rollback(game, to)
    click.echo(f"appended entry {head + 1}: rollback {to} (by an admin)")
    if summary["seq"] > head + 1:
        click.echo(f"the computer then made entries {head + 2} to {summary['seq']}")
    click.echo(f"pending now: {_pending_words(service, game, summary)}")




def fail_with(report: dict[str, list[str]], when: str) -> None:
    """Name every game that disagrees with its log and what is wrong; exit 1."""
    for uid, problems in report.items():
        click.echo(f"game {uid}:", err=True)
        for problem in problems:
            click.echo(f"  - {problem}", err=True)
    click.echo(f"{len(report)} game(s) disagree with their log{when}", err=True)
    sys.exit(1)
