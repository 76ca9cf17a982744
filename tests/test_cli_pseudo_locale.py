"""Untranslated text cannot hide on the command line either (issue 23): the player's and the
admin's main commands of every registered game, and the ``--help`` of every command, run in a
pseudo-locale where every catalogue message comes out wrapped in markers (``⟦…⟧``, as in
tests/test_pseudo_locale.py), and any word outside the markers is text no translator would see.

What may stand outside the markers is data, not words of ours: numbers, what the user types
(the game's notation such as ``move LRLR``, the commands, options, metavariables and choices of
``titanpost``), ids, addresses and paths, the names the test gave, the server's own refusal
(the API's words, relayed), the product's and the games' names and the boards' proper names.
The board drawn by ``show`` and ``admin replay`` (the game's terminal picture,
app/games/*/textboard.py) is checked with the rest: it speaks the command's language too.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import click
import pytest
import requests
from click.testing import CliRunner, Result

from app.core import i18n
from app.games import GAMES
from app.games.ui import game_ui
from cli import speech
from cli.main import main
from tests import test_cli_player
from tests.gamefixtures import game_fixture
from tests.test_cli_player import Cli, Server, address
from tests.test_pseudo_locale import CLOSE, NAMES, OPEN, _proper_names, _Pseudo

server = test_cli_player.server  # (the module's server and CLI, as fixtures here too)
cli = test_cli_player.cli

POLISH = {"LANG": "pl_PL.UTF-8", "LANGUAGE": None, "LC_ALL": None, "LC_MESSAGES": None}
"""The locale of every command here: Polish, so that what is not a catalogue message (a date,
a word of the game) would show in Polish rather than pass as English."""

TYPED = re.compile(r"(?<![\w-])--?[A-Za-z][\w-]*|\b[A-Z][A-Z_]+\b|\S*[/@\\]\S*|\S*\.\w+\b"
                   r'|"[\w-]+"')
"""What a user types or reads as data: options (``--json``), metavariables (``GAME``),
addresses, paths and file names (an extension after a metavariable in markers too:
``NAME|FILE.toml``), a JSON key in quotes (``"state"``)."""


@pytest.fixture
def pseudo(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Every language speaks the pseudo-locale."""
    monkeypatch.setattr(i18n, "_translations", lambda lang: _Pseudo())
    yield


def _commands() -> list[tuple[str, ...]]:
    """The path of every ``titanpost`` command (groups too), loaded."""
    found: list[tuple[str, ...]] = []
    pending: list[tuple[tuple[str, ...], click.Command]] = [((), main)]
    while pending:
        path, command = pending.pop()
        found.append(path)
        if isinstance(command, click.Group):
            context = click.Context(command)
            for name in command.list_commands(context):
                sub = command.get_command(context, name)
                assert sub is not None
                pending.append(((*path, name), sub))
    return sorted(found)


def _typed_words() -> set[str]:
    """The words of what a user types: the commands' names and their options' choices."""
    words = {"titanpost"}
    pending: list[click.Command] = [main]
    while pending:
        command = pending.pop()
        words.update(re.findall(r"[^\W\d_]+", command.name or ""))
        for param in command.params:
            values = [param.default, *param.__dict__.get(speech._HELP_VALUES, {}).values()]
            for value in values:  # (a default, a list of boards: typed values)
                if isinstance(value, str):
                    words.update(re.findall(r"[^\W\d_]+", value))
            if isinstance(param.type, click.Choice):
                for choice in param.type.choices:
                    words.update(re.findall(r"[^\W\d_]+", str(choice)))
        if isinstance(command, click.Group):
            context = click.Context(command)
            pending += [sub for name in command.list_commands(context)
                        if (sub := command.get_command(context, name)) is not None]
    return words


def unmarked(text: str, data: set[str]) -> list[str]:
    """The words of ``text`` outside every marker that are neither data nor typed (a message
    click cut short, ``...`` at a line's end, is closed there)."""
    text = re.sub(r"\.\.\.$", CLOSE, text, flags=re.MULTILINE)
    outside, depth = [], 0
    for char in text:
        if char == OPEN:
            depth += 1
            outside.append(" ")  # (a word is not joined across a message)
        elif char == CLOSE:
            depth = max(depth - 1, 0)
            outside.append(" ")
        elif depth == 0:
            outside.append(char)
    shown = TYPED.sub(" ", "".join(outside))
    words = re.findall(r"[^\W\d_]{2,}", shown)
    allowed = NAMES | _typed_words() | {w for item in data | _proper_names()
                                         for w in re.findall(r"[^\W\d_]+", item)}
    return sorted({w for w in words if w not in allowed})


def _notation(game: str) -> set[str]:
    """The words of ``game``'s input notation (``move``, ``take``, the cards' slugs: its test
    fixture's), which the replay shows as typed: the input of each entry, the legal inputs
    under the board."""
    return set(game_fixture(game).notation)


def _output(result: Result) -> str:
    return result.stdout + "\n" + result.stderr


def _player_outputs(server: Server, cli: Cli, game: str) -> tuple[dict[str, str], set[str]]:
    """What a Polish player reads from the main commands on a running game of ``game``; and
    the data the outputs may show (names, the options typed, the server's refusal)."""
    seats: list[dict[str, Any]] = [{"email": address(), "name": "Ania", "language": "pl"},
                                   *[{"bot": True}] * (game_fixture(game).seats - 1)]
    data = server.call("POST", "/games", seats=seats, name="Wyscig", seed=5, game=game)
    uid = str(data["game"])
    link = next(inv["link"] for inv in data["invitations"] if inv["position"] == 0)
    outputs = {"login": _output(cli("login", link, env=POLISH))}
    server.call("POST", f"/games/{uid}/start", creator=data["creator_token"])
    short = uid[:8]
    token = __import__("json").loads(cli.config.read_text())["games"][uid]["token"]
    options = server.call("GET", f"/games/{uid}/options", token)
    legal = [str(o) for o in options["options"]]
    refusal = requests.post(f"{server.url}/api/games/{uid}/moves", timeout=30,
                            headers={"Authorization": f"Bearer {token}",
                                     "Accept-Language": "pl"},
                            json={"expected_seq": options["seq"], "input": "fly away"}).json()
    outputs["show"] = _output(cli("show", short, env=POLISH))
    outputs["options"] = _output(cli("options", short, "--all", env=POLISH))
    outputs["refused play"] = _output(cli("play", short, "fly away", code=1, env=POLISH))
    outputs["play"] = _output(cli("play", short, legal[0], env=POLISH))
    outputs["log"] = _output(cli("log", short, env=POLISH))
    outputs["chat"] = _output(cli("chat", short, "Czesc", env=POLISH))
    outputs["chat list"] = _output(cli("chat", short, env=POLISH))
    outputs["games"] = _output(cli("games", env=POLISH))
    outputs["settings"] = _output(cli("settings", short, env=POLISH))
    outputs["no such game"] = _output(cli("show", "zzzz", code=1, env=POLISH))
    played = [str(move.get("input") or "")
              for move in server.call("GET", f"/games/{uid}/log", token)["moves"]]
    state = server.call("GET", f"/games/{uid}", token)
    cards = [str(card) for entry in state["view"].values() if isinstance(entry, dict)
             for piece in entry.values() if isinstance(piece, dict)
             if isinstance(piece.get("hand"), list)
             for card in piece["hand"]]  # (their names, as typed: "play quake")
    names = {"Ania", "Wyscig", "Czesc", uid, short, server.url, "UTC", "pl", "zzzz",
             str(refusal.get("error")), str(refusal.get("message")), "fly", "away", *legal,
             *played, *cards}
    return outputs, names


@pytest.mark.parametrize("game", sorted(GAMES))
def test_the_players_commands_show_no_words_outside_the_catalogue(server: Server, cli: Cli,
                                                                  pseudo: None,
                                                                  game: str) -> None:
    outputs, data = _player_outputs(server, cli, game)
    found = {name: unmarked(text, data) for name, text in outputs.items()}
    unmarked_words = {name: words for name, words in found.items() if words}
    assert not unmarked_words, "\n".join(f"{name}: {words}\n{outputs[name]}"
                                         for name, words in unmarked_words.items())
    assert OPEN in outputs["show"] and OPEN in outputs["options"]


def test_the_admins_commands_show_no_words_outside_the_catalogue(migrated_database_url: str,
                                                                 pseudo: None) -> None:
    env = POLISH | {"TITANPOST_DATABASE_URL": migrated_database_url, "TITANPOST_ENV": "test",
                    "TITANPOST_BASE_URL": "http://127.0.0.1:9", "COLUMNS": "120",
                    "NO_COLOR": "1"}
    runner = CliRunner()
    outputs: dict[str, str] = {}
    uids: list[str] = []
    tokens: list[str] = []
    for game in GAMES:
        seats = ["--bot"] * game_fixture(game).seats
        made = runner.invoke(main, ["admin", "new-game", "--game", game, "--name", "Wyscig",
                                    *seats, "--start-with-bots", "--seed", "3"], env=env)
        assert made.exit_code == 0, made.output
        uid = re.search(r"\b([0-9a-f]{32})\b", made.stdout)
        assert uid is not None, made.stdout
        uids.append(uid[1])
        outputs[f"new-game {game}"] = _output(made)
        tokens += re.findall(r"\S{30,}", made.stdout)  # (the creator token, shown once)
        replay = runner.invoke(main, ["admin", "replay", uid[1], "--to", "2"], env=env)
        assert replay.exit_code == 0, replay.output
        outputs[f"replay {game}"] = _output(replay)
    listed = runner.invoke(main, ["admin", "games"], env=env)
    assert listed.exit_code == 0, listed.output
    outputs["games"] = _output(listed)
    missing = runner.invoke(main, ["admin", "replay", "nosuchgame"], env=env)
    assert missing.exit_code == 1
    outputs["refused replay"] = _output(missing)
    data = {*uids, *(uid[:8] for uid in uids), "Wyscig", "UTC", "nosuchgame", "Computer",
            *tokens}
    # (the game's notation is typed in its replay only: its input, the legal inputs)
    found = {name: unmarked(text, data | _notation(name.split()[1])
                            if name.startswith("replay") else data)
             for name, text in outputs.items()}
    unmarked_words = {name: words for name, words in found.items() if words}
    assert not unmarked_words, "\n".join(f"{name}: {words}\n{outputs[name]}"
                                         for name, words in unmarked_words.items())


def test_every_help_shows_no_words_outside_the_catalogue(pseudo: None) -> None:
    runner = CliRunner()
    shown: dict[str, str] = {}
    for path in _commands():
        result = runner.invoke(main, [*path, "--help"], env=POLISH | {"COLUMNS": "100"},
                               prog_name="titanpost")
        assert result.exit_code == 0, (path, result.output)
        shown[" ".join(("titanpost", *path))] = result.stdout
    assert len(shown) > 30
    found = {name: unmarked(text, {"Titan", "Post"}) for name, text in shown.items()}
    unmarked_words = {name: words for name, words in found.items() if words}
    assert not unmarked_words, "\n".join(f"{name}: {words}\n{shown[name]}"
                                         for name, words in unmarked_words.items())


ENGLISH = {"LANG": "en_US.UTF-8", "LANGUAGE": None, "LC_ALL": None, "LC_MESSAGES": None}

@pytest.mark.parametrize("game", sorted(GAMES))
@pytest.mark.parametrize("width", ["80", "120"])
def test_a_polish_seat_sees_its_board_in_polish(server: Server, cli: Cli, game: str,
                                                width: str) -> None:
    """The seat's language, not the terminal's (English here), names everything on the board
    ``show`` draws, at 80 columns too, without cutting a line."""
    seats: list[dict[str, Any]] = [{"email": address(), "name": "Ania", "language": "pl"},
                                   {"bot": True}, {"bot": True}]
    data = server.call("POST", "/games", seats=seats, name="Wyscig", seed=5, game=game)
    uid = str(data["game"])
    link = next(inv["link"] for inv in data["invitations"] if inv["position"] == 0)
    cli("login", link, env=ENGLISH)
    server.call("POST", f"/games/{uid}/start", creator=data["creator_token"])
    token = __import__("json").loads(cli.config.read_text())["games"][uid]["token"]
    state = server.call("GET", f"/games/{uid}", token)
    shown = cli("show", uid[:8], env=ENGLISH | {"COLUMNS": width}).stdout
    board_words = game_fixture(game).board_words  # (as docs/glossary-pl.md says them)
    for words in board_words["pl"]:
        assert words in shown, (words, shown)
    for words in board_words["en"]:
        assert words not in shown, (words, shown)
    ui = game_ui(state["game"]["ruleset"])
    pieces = list(state["view"].get("titans") or state["view"].get("crews") or {})
    assert pieces
    for piece in pieces:  # (Titan Race: Masakrator, Kraken, Chtóólhóó; the crews: Francuzi)
        assert ui.piece_name(piece, "pl") in shown, (piece, shown)
    assert all(len(line) <= int(width) for line in shown.splitlines()), shown


@pytest.mark.parametrize("game", sorted(GAMES))
def test_the_demo_shows_no_words_outside_the_catalogue(pseudo: None, game: str) -> None:
    """``engine demo`` words every move, its board and its winner from the catalogue: outside
    the markers only the moves as typed (each line's last parentheses), the boards' names and
    the game's name."""
    args = ["engine", "demo", "--game", game, "--seed", "4", "--every", "turn",
            *game_fixture(game).demo]
    result = CliRunner().invoke(main, args, env=POLISH | {"COLUMNS": "100", "NO_COLOR": "1"})
    assert result.exit_code == 0, result.output
    typed = set(re.findall(r"\(([^()]*)\)$", result.stdout, flags=re.MULTILINE))
    assert len(typed) > 20, result.stdout[-2000:]
    found = unmarked(result.stdout, typed | _notation(game))
    assert not found, (found, result.stdout[-4000:])
    assert OPEN in result.stdout
