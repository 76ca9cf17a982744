"""Tab completion of ``titanpost``: commands (click's own), games (from the config file, no
network) and the inputs of ``play`` (the legal options of the game, asked of its server).

``titanpost completion bash|zsh|fish`` prints the script to load in the shell.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

import click
from click.shell_completion import CompletionItem, get_completion_class

from cli.client import SHORT_ID, Api, ClientError, Config, Seat, match_games
from cli.speech import N_, tr

PROG: Final = "titanpost"
COMPLETE_VAR: Final = "_TITANPOST_COMPLETE"
SHELLS: Final = ("bash", "zsh", "fish")
VERBS: Final = ("pick", "start", "move", "trap", "hit", "ability", "play", "discard", "reroll",
                "end", "pass", "lose")
COMPLETION_TIMEOUT: Final = 3.0


def _known_seats() -> list[Seat]:
    try:
        return list(Config.load().seats.values())
    except ClientError:
        return []


def complete_game(ctx: click.Context, param: click.Parameter,
                  incomplete: str) -> list[CompletionItem]:
    """The games of the config file whose id or name starts with what is typed."""
    seats = _known_seats()
    wanted = incomplete.lower()
    items: dict[str, CompletionItem] = {}
    for seat in seats:
        if seat.game.startswith(wanted):
            short = seat.game if len(wanted) >= SHORT_ID else seat.short
            if sum(s.game.startswith(short) for s in seats) > 1:
                short = seat.game
            items.setdefault(short, CompletionItem(short, help=seat.name or None))
        name = seat.name
        if name and name.lower().startswith(wanted):
            if any(c.isspace() for c in name):  # a name with spaces: its id instead
                items.setdefault(seat.short, CompletionItem(seat.short, help=name))
            else:
                items.setdefault(name, CompletionItem(name, help=seat.short))
    return list(items.values())


class Legal:
    """The legal options of a game now, with what words them: the pending decision and the
    game's ruleset name."""

    def __init__(self, options: list[str], pending: Mapping[str, Any] | None = None,
                 ruleset: str | None = None) -> None:
        self.options = options
        self.pending = dict(pending or {})
        self.ruleset = ruleset


def legal_options(game: str | None) -> Legal:
    """The legal options of ``game`` now; none when the game is unknown, not yours to answer,
    or the server does not answer quickly."""
    if not game:
        return Legal([])
    seats = _known_seats()
    found = match_games(seats, game)
    if len(found) != 1:
        return Legal([])
    seat = found[0]
    api = Api(seat.server, seat.token, timeout=COMPLETION_TIMEOUT)
    try:
        _, body = api.get(f"/games/{seat.game}/options")
        if not body.get("yours"):
            return Legal([])
        _, state = api.get(f"/games/{seat.game}")
    except ClientError:
        return Legal([])
    return Legal([str(o) for o in body.get("options") or []], body.get("pending"),
                 (state.get("game") or {}).get("ruleset"))


def complete_inputs(ctx: click.Context, param: click.Parameter,
                    incomplete: str) -> list[CompletionItem]:
    """The next word of the legal options (``pick r`` -> ``red``); a quoted argument
    (``"pick r``) is completed whole. After a ';' the options depend on the inputs before it,
    which only the server can play out: the verbs are offered."""
    done = [str(word) for word in ctx.params.get("inputs") or ()]
    typed = " ".join([*done, incomplete])
    _, semicolon, part = typed.rpartition(";")
    part = part.lstrip()
    legal = legal_options(ctx.params.get("game")) if not semicolon else Legal([])
    candidates = legal.options or list(VERBS)
    if " " in incomplete or ";" in incomplete:  # one quoted argument: replace it whole
        keep = incomplete[: len(incomplete) - len(part)]
        return [CompletionItem(keep + option, help=_help(option, legal))
                for option in candidates if option.startswith(part)]
    words = part.split(" ")
    before, current = words[:-1], words[-1]
    items: dict[str, CompletionItem] = {}
    for option in candidates:
        option_words = option.split()
        if len(option_words) < len(words) or option_words[: len(before)] != before:
            continue
        word = option_words[len(before)]
        if word.startswith(current):
            whole = len(option_words) == len(words)
            items.setdefault(word, CompletionItem(
                word, help=_help(option, legal) if whole else None))
    return list(items.values())


def _help(option: str, legal: Legal) -> str | None:
    """The option in the game's words (its UI's)."""
    if option not in legal.options:
        return None
    try:
        from app.games.ui import DEFAULT_GAME, game_ui

        ui = game_ui(legal.ruleset or DEFAULT_GAME)
        return ui.describe_option(option, {"pending": legal.pending}, "en")
    except Exception:  # words are a nicety: never break completion
        return None


@click.command("completion", help=N_(
        "Print the tab-completion script of SHELL (default: your $SHELL).\n"
        "\n"
        "\b\n"
        "bash:  eval \"$(titanpost completion bash)\"    (in ~/.bashrc)\n"
        "zsh:   eval \"$(titanpost completion zsh)\"     (in ~/.zshrc)\n"
        "fish:  titanpost completion fish > ~/.config/fish/completions/titanpost.fish"))
@click.argument("shell", required=False, type=click.Choice(SHELLS))
@click.pass_context
def completion_command(ctx: click.Context, shell: str | None) -> None:
    if shell is None:
        shell = Path(os.environ.get("SHELL", "")).name
        if shell not in SHELLS:
            raise click.UsageError(tr("name the shell: {shells}", shells=", ".join(SHELLS)))
    completer = get_completion_class(shell)
    assert completer is not None
    root = ctx.find_root().command
    click.echo(completer(root, {}, PROG, COMPLETE_VAR).source())
