"""A click group whose commands are imported only when one is run (or its own help asked).

``titanpost`` serves two kinds of user: players and scripts that want an answer at once
(``titanpost --help``, ``titanpost show``, ``titanpost engine run``), and the server's admin,
whose commands load Flask, SQLAlchemy and the whole service. Importing every command's module
to print the list of commands cost seconds; a :class:`LazyGroup` instead keeps a small table of
its commands (:class:`Lazy`: where each is and its one-line help), lists and completes them from
that table, and imports a command's module only when that command is looked up to run.

The table's short helps are copies of the commands' own; ``tests/test_cli_lazy.py`` checks they
match, so they cannot drift. Both are message ids, put in the command's language
(:mod:`cli.speech`) when they are shown.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from importlib import import_module
from typing import Any

import click
from click.shell_completion import CompletionItem

from cli.speech import install_click_words, localise, speak, tr


@dataclass(frozen=True)
class Lazy:
    """Where a command lives (``module``'s attribute ``attribute``) and its short help: the first
    sentence of its help, as click shortens it with no width limit."""

    module: str
    attribute: str
    short_help: str

    def load(self) -> click.Command:
        command = getattr(import_module(self.module), self.attribute)
        if not isinstance(command, click.Command):
            raise TypeError(f"{self.module}.{self.attribute} is not a click command")
        return command

    def stand_in(self, name: str) -> click.Command:
        """A command with the same short help, for the listing (nothing imported)."""
        return click.Command(name, help=tr(self.short_help))


class LazyGroup(click.Group):
    """A :class:`click.Group` whose commands are listed from ``lazy`` and imported on demand.

    Commands added the ordinary way (``add_command``) are kept too."""

    def __init__(self, *args: Any, lazy: Mapping[str, Lazy], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.lazy: dict[str, Lazy] = dict(lazy)

    def main(self, *args: Any, **kwargs: Any) -> Any:
        """Run the command line, in the language of the environment (and click's own words
        too) until a command chooses another."""
        speak(None)  # (one process may run several command lines: the tests do)
        install_click_words()
        localise(self)
        return super().main(*args, **kwargs)

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*self.commands, *self.lazy})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        command = self.commands.get(cmd_name)
        if command is None and cmd_name in self.lazy:
            command = self.lazy[cmd_name].load()
            self.commands[cmd_name] = command
        return localise(command) if command is not None else None

    def _listed(self, name: str) -> click.Command | None:
        """The command ``name`` as the listing needs it: itself when already loaded, else a
        stand-in carrying its short help."""
        if name in self.commands:
            return self.commands[name]
        if name in self.lazy:
            return self.lazy[name].stand_in(name)
        return None

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """Click's own listing (same layout and shortening), from the table."""
        rows = [(name, command) for name in self.list_commands(ctx)
                if (command := self._listed(name)) is not None and not command.hidden]
        if not rows:
            return
        limit = formatter.width - 6 - max(len(name) for name, _ in rows)
        with formatter.section(tr("Commands")):  # (click's own heading)
            formatter.write_dl([(name, command.get_short_help_str(limit))
                                for name, command in rows])

    def shell_complete(self, ctx: click.Context, incomplete: str) -> list[CompletionItem]:
        """The subcommands starting with ``incomplete`` (from the table), then the options."""
        results = [CompletionItem(name, help=command.get_short_help_str())
                   for name in self.list_commands(ctx) if name.startswith(incomplete)
                   if (command := self._listed(name)) is not None and not command.hidden]
        results.extend(click.Command.shell_complete(self, ctx, incomplete))
        return results
