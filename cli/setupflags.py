"""The games' own set-up flags (:func:`app.games.commandline.setup_flags`) as options of
``admin new-game`` and ``engine demo``: each registered game declares its flags, and both
commands take every game's, so a new game's flags need no change here."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Literal, TypeVar

import click

from app.games import GAMES
from app.games.commandline import SetupFlag, setup_flags
from cli.speech import help_values

Command = Literal["new-game", "demo"]
F = TypeVar("F", bound=Callable[..., Any])


def _option(flag: SetupFlag, command: Command) -> Callable[[F], F]:
    demo = command == "demo"
    decls = flag.decls if flag.dest in flag.decls else (*flag.decls, flag.dest)
    extra: dict[str, Any] = {"is_flag": True} if flag.is_flag else {"default": None}
    if flag.multiple:
        extra = {"multiple": True}
    metavar = flag.demo_metavar if demo else flag.metavar
    if metavar is not None:
        extra["metavar"] = metavar
    text = flag.demo_help if demo and flag.demo_help is not None else flag.help
    option: Callable[[F], F] = click.option(*decls, help=text, **extra)
    return option


def game_setup_options(command: Command) -> Callable[[F], F]:
    """Every game's set-up flags as options of ``command``, in their declared order."""
    flags = [flag for flag in setup_flags() if command == "demo" or not flag.demo_only]

    def decorate(function: F) -> F:
        for flag in reversed(flags):
            function = _option(flag, command)(function)
        return function

    return decorate


def fill_help_values(command: click.Command, which: Command) -> None:
    """The ``{fields}`` of the game flags' helps on ``command`` (the built-in boards...)."""
    for flag in setup_flags():
        if flag.demo_only and which != "demo":
            continue
        values = flag.demo_values if which == "demo" else flag.values
        if values:
            help_values(command, flag.dest, **values)


class RegisteredGame(click.Choice):  # type: ignore[type-arg]
    """``--game``: one of the registry's games (:data:`app.games.GAMES`), read when the flag is,
    not when the command is declared (a game registered later is one too)."""

    def __init__(self) -> None:
        super().__init__((), case_sensitive=True)

    @property  # type: ignore[override]
    def choices(self) -> Sequence[str]:
        return tuple(GAMES)

    @choices.setter
    def choices(self, value: Sequence[str]) -> None:
        """(click sets them once; the registry is read instead)"""
