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

from app.games import DEFAULT_GAME, GAMES
from app.games.commandline import Demo, FlagsRefused, SetupFlags, commandline
from app.games.errors import ScenarioError
from app.games.scenario_file import UnknownSeat, read_scenario
from cli.setupflags import RegisteredGame, fill_help_values, game_setup_options
from cli.speech import N_, help_values, lang


def _emit(payload: dict[str, Any]) -> None:
    click.echo(json.dumps(payload, indent=2, ensure_ascii=False))


@click.group(help=N_(
        "Drive the rules engine directly (scenario files, demo games)."))
def engine() -> None:
    pass


def _scenario(file: str, options: bool, seat: int | None = None) -> tuple[int, dict[str, Any]]:
    """Read scenario FILE once and run it with the engine of its ``game`` (the registry's first
    when it names none; every game of the registry, :data:`app.games.GAMES`, has its engine's
    ``scenario`` module); the state as ``seat`` sees it when given."""
    try:
        data = read_scenario(file)
        game = data.get("game", DEFAULT_GAME) if isinstance(data, dict) else DEFAULT_GAME
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
        "Exit 0 with the state view; exit 2 with {{\"error\", \"input\", \"legal\", \"state\"}} on "
        "an illegal input (\"state\": the view the game was left in, unchanged); exit 1 "
        "when the scenario itself is malformed. With --view SEAT both views are that "
        "seat's. A scenario is run by the engine of the game it names (\"game\": {games}; "
        "{default} when it names none)."))
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
@click.option("--game", "game_name", type=RegisteredGame(), default=DEFAULT_GAME,
              show_default=True, help=N_("The game to play."))
@click.option("--variant", default=None, metavar="VARIANT",
              help=N_("The game's variant, where its demo takes one."))
@game_setup_options("demo")
@click.option("--seed", type=int, default=None, help=N_("Seed for a repeatable game."))
@click.option("--delay", type=float, default=0.0, help=N_("Seconds to pause after each turn."))
@click.option(
    "--every",
    type=click.Choice(["turn", "input", "end"]),
    default="turn",
    help=N_("Draw the board after every turn (as the game counts them), every input, or only "
    "at the end."),
)
def engine_demo(
    game_name: str,
    variant: str | None,
    seed: int | None,
    delay: float,
    every: str,
    **game_flags: Any,
) -> None:
    """The game's own demo (its ``commandline`` module: :mod:`app.games.commandline`), drawn
    and worded in the command's language."""
    from rich.console import Console

    seed = seed if seed is not None else random.SystemRandom().randrange(1 << 31)
    flags = SetupFlags(game_flags, variant=variant)
    try:
        demo: Demo = commandline(game_name).demo(flags, seed, lang())
    except FlagsRefused as exc:
        raise click.UsageError(str(exc)) from None
    console = Console()
    console.rule(demo.title())
    last_turn = None
    while not demo.over():
        console.print(_move_line(*demo.step()))
        turn = demo.turn()
        if every == "input" or (every == "turn" and turn != last_turn):
            console.print(demo.board())
            if delay:
                time.sleep(delay)
        last_turn = turn
    console.print(demo.board())
    console.rule(demo.result())


def _move_line(who: str, words: str, move: str) -> Any:
    """One input of a demo: who played it, what it does in words, and its notation (a rich
    ``Text``: rich is imported by the demo only, not by ``engine run``)."""
    from rich.text import Text

    line = Text(who, style="bold")
    line.append(f": {words} ")
    line.append(f"({move})", style="grey62")
    return line


fill_help_values(engine_demo, "demo")
help_values(engine_run, None, games=", ".join(f'"{name}"' for name in GAMES),
            default=f'"{DEFAULT_GAME}"')
