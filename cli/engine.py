"""``titanpost engine``: the rules engines driven directly (scenario files, demo games).

Only the engines are imported here (``app.games.*.engine`` and what the games share): no Flask,
no database, no templates, so that a scenario runs as fast as the engine allows.
"""

from __future__ import annotations

import json
import random
import sys
import time
from importlib import import_module
from typing import Any

import click

from app.games import GAMES
from app.games.errors import ScenarioError
from app.games.scenario_file import UnknownSeat
from app.games.titanrace.engine import BUILT_IN, VARIANTS, EngineError, local_circuit, new_game
from app.games.titanrace.engine.bot import choose
from app.games.titanrace.engine.scenario import read_scenario
from cli.speech import N_, help_values, lang, tr


def _emit(payload: dict[str, Any]) -> None:
    click.echo(json.dumps(payload, indent=2, ensure_ascii=False))


@click.group(help=N_(
        "Drive the rules engine directly (scenario files, demo games)."))
def engine() -> None:
    pass


def _scenario(file: str, options: bool, seat: int | None = None) -> tuple[int, dict[str, Any]]:
    """Read scenario FILE once and run it with the engine of its ``game`` (Titan Race when it
    names none; every game of the registry, :data:`app.games.GAMES`, has its engine's
    ``scenario`` module); the state as ``seat`` sees it when given."""
    try:
        data = read_scenario(file)
        game = data.get("game", "titan-race") if isinstance(data, dict) else "titan-race"
        if game not in GAMES:
            raise ScenarioError(f"scenario: unknown game '{game}' ({' or '.join(GAMES)})")
        scenario = import_module(f"{GAMES[game].package}.engine.scenario")
        if options:
            answer: tuple[int, dict[str, Any]] = scenario.scenario_options(data)
        else:
            answer = scenario.run_scenario(data, seat)
        return answer
    except ScenarioError as exc:
        return 1, {"error": str(exc)}
    except UnknownSeat as exc:
        raise click.BadParameter(str(exc), param_hint="'--view'") from None


@engine.command("run", help=N_(
        "Set up the scenario FILE (or - for standard input), apply its inputs, print the "
        "state.\n"
        "\n"
        "Exit 0 with the state view; exit 2 with {\"error\", \"input\", \"legal\", \"state\"} on "
        "an illegal input (\"state\": the view the game was left in, unchanged); exit 1 "
        "when the scenario itself is malformed. With --view SEAT both views are that "
        "seat's. A scenario with \"game\": \"great-race\" is run by The Great Race engine."))
@click.argument("file")
@click.option("--view", "seat", type=int, default=None, metavar="SEAT",
              help=N_("Print the state as seat SEAT sees it (seats are numbered from 0, as the "
                   "state view's \"seat\" numbers them): the other hands as counts, sealed "
                   "plans hidden, the options only when the decision is that seat's."))
def engine_run(file: str, seat: int | None) -> None:
    code, payload = _scenario(file, options=False, seat=seat)
    _emit(payload)
    sys.exit(code)


@engine.command("options", help=N_(
        "Print the pending decision of scenario FILE (after its inputs) with its legal "
        "options."))
@click.argument("file")
def engine_options(file: str) -> None:
    code, payload = _scenario(file, options=True)
    _emit(payload)
    sys.exit(code)


@engine.command("demo", help=N_(
        "Play a whole race between computer players, drawing the board as it goes."))
@click.option("--game", "game_name", type=click.Choice(["titan-race", "great-race"]),
              default="titan-race", show_default=True, help=N_("The game to play."))
@click.option(
    "--titans",
    "-t",
    default=None,
    help=N_("Comma-separated Titans (The Great Race: crews) in seating order. Default: "
    "grinder,rassik,craken,slaugg (french,belgian,italian,english)."),
)
@click.option(
    "--circuit",
    "-c",
    "circuits",
    multiple=True,
    help=N_("Circuit name or TOML file; give three for Grand Slam. Built in: {circuits}"),
)
@click.option("--variant", type=click.Choice(VARIANTS), default=None,
              help=N_("Titan Race's variant."))
@click.option("--start", default="alger", show_default=True,
              help=N_("The Great Race: the start city (alger or le-cap)."))
@click.option("--leaders", is_flag=True, help=N_("The Great Race: with the Leader module."))
@click.option("--seed", type=int, default=None, help=N_("Seed for a repeatable game."))
@click.option("--delay", type=float, default=0.0, help=N_("Seconds to pause after each turn."))
@click.option(
    "--every",
    type=click.Choice(["turn", "input", "end"]),
    default="turn",
    help=N_("Draw the board after every turn (The Great Race: every crew's convoy sequence and "
    "phase), every input, or only at the end."),
)
def engine_demo(
    game_name: str,
    titans: str | None,
    circuits: tuple[str, ...],
    variant: str | None,
    start: str,
    leaders: bool,
    seed: int | None,
    delay: float,
    every: str,
) -> None:
    seed = seed if seed is not None else random.SystemRandom().randrange(1 << 31)
    if game_name == "great-race":
        if circuits or variant:
            raise click.UsageError(tr("--circuit and --variant are Titan Race's: The Great Race "
                                      "takes --start and --leaders"))
        crews = titans or "french,belgian,italian,english"
        _great_race_demo(crews, start, leaders, seed, delay, every)
        return
    _titan_race_demo(titans or "grinder,rassik,craken,slaugg", circuits, variant, seed, delay,
                     every)


def _titan_race_demo(titans: str, circuits: tuple[str, ...], variant: str | None, seed: int,
                     delay: float, every: str) -> None:
    """A race between computer Titans, drawn and worded in the command's language."""
    from rich.console import Console

    from app.games.titanrace.describe import describe_option, titan_name
    from app.games.titanrace.textboard import render_board

    console, language = Console(), lang()
    names = [n.strip() for n in titans.split(",") if n.strip()]
    chosen = list(circuits) or [random.Random(seed).choice(BUILT_IN)]
    if variant is None:
        variant = "grand-slam" if len(chosen) == 3 else "standard"
    teams = None
    if variant == "teams":
        teams = [names[0::2], names[1::2]]
    try:
        boards = [local_circuit(c) for c in chosen]
        race = new_game(names, circuits=boards, variant=variant, teams=teams, seed=seed)
    except EngineError as exc:
        raise click.UsageError(str(exc)) from None
    console.rule(tr("Titan Race demo - {circuits} - seed {seed}",
                    circuits=", ".join(b.title for b in boards), seed=seed))
    last_turn = None
    while not race.is_over:
        move = choose(race)
        titan = (race.pending() or {}).get("titan")
        race.apply(move)
        console.print(_move_line(titan_name(titan, language),
                                 describe_option(move, language, titan), move))
        turn_key = (race.state.round, race.state.turn_index)
        if every == "input" or (every == "turn" and turn_key != last_turn):
            console.print(render_board(race.view(), boards, lang=language))
            if delay:
                time.sleep(delay)
        last_turn = turn_key
    console.print(render_board(race.view(), boards, lang=language))
    console.rule(tr("{winner} wins after {rounds} rounds ({inputs} inputs) - replay with "
                    "--seed {seed}", winner=titan_name(race.winner, language),
                    rounds=race.state.round, inputs=len(race.inputs), seed=seed))


def _move_line(who: str, words: str, move: str) -> Any:
    """One input of a demo: who played it, what it does in words, and its notation (a rich
    ``Text``: rich is imported by the demo only, not by ``engine run``)."""
    from rich.text import Text

    line = Text(who, style="bold")
    line.append(f": {words} ")
    line.append(f"({move})", style="grey62")
    return line


def _great_race_demo(crews: str, start: str, leaders: bool, seed: int, delay: float,
                     every: str) -> None:
    """A race between computer crews, drawn and worded in the command's language."""
    from rich.console import Console

    from app.games.greatrace.describe import crew_name, describe_option
    from app.games.greatrace.engine.bot import choose as choose_for_crew
    from app.games.greatrace.engine.game import GreatRace
    from app.games.greatrace.textboard import board_text

    console, language = Console(), lang()
    names = [n.strip().lower() for n in crews.split(",") if n.strip()]
    try:
        race = GreatRace.new(names, start=start.strip().lower(), leaders=leaders, seed=seed)
    except EngineError as exc:
        raise click.UsageError(str(exc)) from None
    console.rule(tr("The Great Race demo - from {start} - seed {seed}", start=start, seed=seed))
    last_key = None
    while not race.is_over:
        crew = (race.pending() or {}).get("crew")
        move = choose_for_crew(race)
        words = describe_option(move, race.view(), language)
        race.apply(move)
        console.print(_move_line(crew_name(crew, language), words, move))
        view = race.view()
        key = (view.get("turn"), view.get("phase"), (view.get("pending") or {}).get("active"))
        if every == "input" or (every == "turn" and key != last_key):
            console.print(board_text(view, lang=language))
            if delay:
                time.sleep(delay)
        last_key = key
    console.print(board_text(race.view(), lang=language))
    console.rule(tr("{crew} wins after {turns} turns ({inputs} inputs) - replay with "
                    "--seed {seed}", crew=crew_name(str(race.winner), language),
                    turns=race.state.turn, inputs=len(race.inputs), seed=seed))


help_values(engine_demo, "circuits", circuits=", ".join(BUILT_IN))
