"""``titanpost``'s commands are imported only when run (cli/lazy.py): the tables of short helps
match the commands' own, the listings are click's, and neither ``--help`` nor the engine's or a
player's commands load the server (Flask, SQLAlchemy, SQLModel, Jinja2, the game service)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import click
import pytest

from app.games import GAMES
from cli.lazy import LazyGroup
from cli.main import main
from tests.gamefixtures import GameFixture, each_game, folder, game_fixture

ROOT = Path(__file__).resolve().parent.parent
SERVER_MODULES = re.compile(r"^(flask|sqlalchemy|sqlmodel|jinja2|apiflask|app\.service)(\.|$)")


def lazy_groups() -> list[tuple[str, LazyGroup]]:
    """Every lazy group of ``titanpost`` (the top one and the groups among its commands)."""
    found: list[tuple[str, LazyGroup]] = []
    pending: list[tuple[str, click.Command]] = [("titanpost", main)]
    while pending:
        path, command = pending.pop()
        if isinstance(command, LazyGroup):
            found.append((path, command))
        if isinstance(command, click.Group):
            context = click.Context(command)
            for name in command.list_commands(context):
                sub = command.get_command(context, name)
                assert sub is not None, f"{path} {name}"
                pending.append((f"{path} {name}", sub))
    return found


def test_the_tables_of_short_helps_match_the_commands() -> None:
    groups = lazy_groups()
    assert {path for path, _ in groups} >= {"titanpost", "titanpost admin", "titanpost mail"}
    for path, group in groups:
        for name, entry in group.lazy.items():
            command = entry.load()
            assert command.name == name, f"{path} {name} is {command.name}"
            for limit in (30, 45, 80, 10**6):
                assert entry.stand_in(name).get_short_help_str(limit) == \
                    command.get_short_help_str(limit), f"{path} {name} (width {limit})"


@pytest.mark.parametrize("width", [50, 80, 200])
def test_the_listings_are_those_of_the_commands_loaded(width: int) -> None:
    for path, group in lazy_groups():
        own = {name: c for name, c in group.commands.items() if name not in group.lazy}
        fresh = LazyGroup(group.name, help=group.help, lazy=group.lazy, params=group.params,
                          commands=dict(own))
        context = click.Context(fresh, info_name=path, terminal_width=width)
        listed = fresh.get_help(context)
        assert fresh.commands == own, "the listing imported no command"
        eager = click.Group(group.name, help=group.help, params=group.params,
                            commands={name: e.load() for name, e in group.lazy.items()})
        eager.commands.update(group.commands)
        assert listed == eager.get_help(click.Context(eager, info_name=path,
                                                      terminal_width=width))


def test_completion_lists_the_commands_from_the_table() -> None:
    context = click.Context(main)
    fresh = LazyGroup("titanpost", lazy=main.lazy)
    items = fresh.shell_complete(context, "lo")
    assert [item.value for item in items] == ["log", "login", "logout"]
    assert items[1].help == main.lazy["login"].stand_in("login").get_short_help_str()
    assert fresh.commands == {}


def imported(*args: str, env: dict[str, str] | None = None
             ) -> tuple[subprocess.CompletedProcess[str], list[str]]:
    """Run the installed ``titanpost`` with ``args``; its result and the modules it imported
    (Python's own import-time report, ``-X importtime``)."""
    titanpost = shutil.which("titanpost", path=str(Path(sys.executable).parent)) or "titanpost"
    done = subprocess.run([titanpost, *args], capture_output=True, text=True, cwd=ROOT,
                          env={**os.environ, "PYTHONPROFILEIMPORTTIME": "1", "COLUMNS": "100",
                               **(env or {})},
                          timeout=120, check=False)
    modules = [line.rsplit("|", 1)[1].strip() for line in done.stderr.splitlines()
               if line.startswith("import time:") and "|" in line]
    assert "click" in modules, done.stderr[-2000:]
    return done, modules


def server_modules(modules: list[str]) -> list[str]:
    return [name for name in modules if SERVER_MODULES.match(name)]


def test_help_imports_no_server() -> None:
    done, modules = imported("--help")
    assert done.returncode == 0 and "verify-fair" in done.stdout
    assert server_modules(modules) == []
    loaded = {name for name in modules if name == "app" or name.startswith("app.")}
    assert loaded <= {"app", "app.games"}, "nor any game: the registry alone (its titles)"


ENGINE_MODULES = re.compile(
    r"^app(\.core|\.games(\.(errors|rng|scenario_file|logged|cached|commandline|pieces)|\.("
    + "|".join(re.escape(folder(name)) for name in GAMES) + r")(\.engine(\..+)?)?)?)?$")
"""The engines and what the games share (app/games/*.py but the ruleset protocol), and the
core's package itself (its docstring: a module of it is named where it may be read)."""
SHARED_DRAWING = ("app.games.svg", "app.core.i18n")
"""What ``engine demo`` may import besides a game's own modules that play, draw and word its
race (its fixture's ``demo_modules``: Titan Race's board, with the words that name Titans, dice,
cards and options; The Great Race's, with its picture's words and colours, and the words of its
options): the pictures' shared kit and the catalogue, with the modules under them."""


def engine_commands() -> list[tuple[str, tuple[str, ...]]]:
    """``engine run`` (the full view and a seat's), ``engine options`` and ``engine demo`` of
    every registered game, on a scenario and with the arguments its fixture gives."""
    def commands(name: str, fixture: GameFixture) -> list[tuple[str, tuple[str, ...]]]:
        scenario = str(fixture.scenarios / fixture.command_scenarios[-1])
        return [(name, args) for args in (
            ("engine", "run", scenario), ("engine", "run", "--view", "1", scenario),
            ("engine", "options", scenario),
            ("engine", "demo", "--game", name, *fixture.demo, "--seed", "4", "--every", "end"))]

    return each_game(commands)


def demo_drawing(name: str) -> tuple[str, ...]:
    """What ``engine demo`` of game ``name`` may import to play, draw and word it."""
    package = GAMES[name].package
    return (*(f"{package}.{module}" for module in game_fixture(name).demo_modules),
            *SHARED_DRAWING)


@pytest.mark.parametrize(("game", "args"), engine_commands())
def test_the_engine_commands_import_only_the_engines(game: str, args: tuple[str, ...]) -> None:
    game_fixture(game)  # (fails for a game that brings no test fixture)
    done, modules = imported(*args)
    assert done.returncode in (0, 2), done.stdout + done.stderr[-2000:]
    if args[1] != "demo":
        assert json.loads(done.stdout)
    assert server_modules(modules) == []
    others = {name for name in modules if name.startswith("app") and not ENGINE_MODULES.match(name)}
    if args[1] == "demo":
        drawing = demo_drawing(game)
        others = {name for name in others
                  if not any(name == drawn or name.startswith(f"{drawn}.")
                             for drawn in drawing)}
    assert others == set()


def test_a_players_command_imports_no_server(tmp_path: Path) -> None:
    env = {"TITANPOST_CONFIG": str(tmp_path / "client.json"),
           "TITANPOST_SERVER": "http://127.0.0.1:9", "TITANPOST_TOKEN": "not-a-token"}
    done, modules = imported("show", "x", env=env)
    assert done.returncode == 1 and "cannot reach" in done.stderr
    assert server_modules(modules) == []
    done, modules = imported("games", env={"TITANPOST_CONFIG": env["TITANPOST_CONFIG"]})
    assert "not logged in" in done.stdout
    assert server_modules(modules) == []
