"""``titanpost admin new-game``: a game created in the database, from its flags (the game,
its board, its seats and its clock), with its creator token and invitation links printed (the
shared pieces are in cli/admin.py)."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

import click

from app.core.i18n import LANGUAGES
from app.features.clock.arithmetic import HANDOVERS, TIMEOUT_ACTIONS
from app.games import GAMES as ALL_GAMES
from app.games.apiwords import OLDER_PIECES, OLDER_TEAM
from app.games.base import BOT_LEVELS, EASY
from app.games.commandline import FlagsRefused, SetupFlags, commandline
from app.games.ui import DEFAULT_GAME, game_ui, winners_named
from app.web.api.schemas import GAME_VARIANTS
from cli.admin import database_option, fail, join_link, one_line, open_service, status_words
from cli.setupflags import RegisteredGame, fill_help_values, game_setup_options
from cli.speech import N_, help_values, lang, tr

SEAT_SPEC = re.compile(r"(?P<who>[^:]+?)(?::(?P<pieces>[^:@]*))?(?:@(?P<team>\d+))?")
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
                    form="EMAIL[:piece1,piece2][@team]", bot="bot[=LEVEL][:piece][@team]"))
        who, _, level = match["who"].strip().partition("=")
        spec: dict[str, Any] = ({"bot": True} if who.strip().lower() in COMPUTER_SEATS
                                else {"email": who.strip()})
        if level.strip() and not spec.get("bot"):
            fail(tr("--seat '{text}': only a computer seat has a level", text=text))
        if level.strip():
            spec["level"] = _level(level, text)
        pieces = [p.strip().lower() for p in (match["pieces"] or "").split(",") if p.strip()]
        if pieces:
            spec[OLDER_PIECES] = pieces
        if match["team"] is not None:
            spec[OLDER_TEAM] = int(match["team"])
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


def _setup_and_variant(game: str, flags: SetupFlags) -> tuple[dict[str, Any], str]:
    """The setup and variant of a new game of ``game`` from the flags that name them (the
    games' own and ``--variant``), as the game reads them (its ``commandline`` module:
    :mod:`app.games.commandline`)."""
    try:
        setup, chosen = commandline(game).setup_of(flags, lang())
    except FlagsRefused as exc:
        fail(str(exc))
    return setup, chosen


@click.command("new-game", help=N_(
        "Create a game; print its id, the creator token (shown once) and each invitation "
        "link."))
@click.option("--game", "game_name", type=RegisteredGame(), default=DEFAULT_GAME,
              show_default=True, help=N_("The game to play."))
@click.option("--variant", type=click.Choice(GAME_VARIANTS), default=None,
              help=N_("The game's variant; by default the one its set-up flags imply, else "
                   "standard."))
@game_setup_options("new-game")
@click.option("--name", default="", help=N_("The game's name."))
@click.option("--seat", "seats", multiple=True, metavar="EMAIL[:PIECES][@TEAM]",
              help=N_("A player's seat, in seating order: their address, optionally the names "
                   "of their pieces (comma-separated, as the game names them: {pieces}) and "
                   "team number. 'bot' instead of an address is a computer seat, "
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
def new_game(game_name: str, variant: str | None, name: str, seats: tuple[str, ...],
             bots: tuple[str, ...], languages: tuple[str, ...], deadline_hours: int | None,
             reaction_hours: int | None, bank_hours: int | None, increment_hours: int | None,
             reminders: tuple[str, ...], no_reminders: bool, on_timeout: str | None,
             max_missed: int | None, after_missed: str | None, no_spectators: bool,
             owner_email: str | None, seed: int | None, start_with_bots: bool, as_json: bool,
             database_url: str | None, **game_flags: Any) -> None:
    if reminders and no_reminders:
        fail(tr("give --reminder or --no-reminders, not both"))
    specs = _seat_specs(seats, bots, languages)
    if start_with_bots and any(not spec.get("bot") for spec in specs):
        fail(tr("--start-with-bots starts a game of computer seats only: the computer would "
                "play every invited player's seat (and the whole race at once); start the game "
                "once its players have accepted"))
    setup, variant = _setup_and_variant(game_name, SetupFlags(game_flags, variant=variant))
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
            line += tr(", won by {winner}", winner=winners_named(ui, started["winner"], lang()))
        click.echo(line)


fill_help_values(new_game, "new-game")
help_values(new_game, "seats", pieces="; ".join(
    f"{game.title}: {', '.join(list(game_ui(name).pieces)[:2])}..."
    for name, game in ALL_GAMES.items()))
