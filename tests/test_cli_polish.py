"""The command line speaks Polish (issue 23): a player's command on a game speaks the language of
the player's seat (``show``, ``options``, a refused ``play``), any other command the language of
the user's locale (``LANG=pl_PL.UTF-8 titanpost --help``), English otherwise; the game's words
(Titans, crews, colours) are the glossary's, as on the pages.

Against a real server on loopback (the one of tests/test_cli_player.py, SQLite and PostgreSQL).
"""

from __future__ import annotations

import json
import os
import re
import subprocess

import pytest

from app.core.i18n import translate
from app.games import GAMES
from app.games.ui import game_ui
from cli.speech import environment_language, locale_code
from tests import test_cli_player
from tests.gamefixtures import game_fixture
from tests.test_cli_player import Cli, Server, address

server = test_cli_player.server  # (the module's server and CLI, as fixtures here too)
cli = test_cli_player.cli

ENGLISH_ONLY = {"LANGUAGE": None, "LC_ALL": None, "LC_MESSAGES": None, "LANG": None}


def polish_game(server: Server, cli: Cli, game: str = "titan-race") -> str:
    """A started game whose seat 1 speaks Polish (logged in from the CLI); its id."""
    seats = [{"email": address(), "name": "Ania", "language": "pl"}, {"bot": True}]
    if game == "titan-race":
        seats.append({"bot": True})
    data = server.call("POST", "/games", seats=seats, name="Wyścig", seed=7, game=game)
    link = next(inv["link"] for inv in data["invitations"] if inv["position"] == 0)
    cli("login", link, env=ENGLISH_ONLY)
    server.call("POST", f"/games/{data['game']}/start", creator=data["creator_token"])
    return str(data["game"])


def pieces_in_polish(server: Server, cli: Cli, uid: str) -> list[str]:
    """The Polish names of every piece in the game (Titans, crews), as the glossary has them."""
    token = json.loads(cli.config.read_text())["games"][uid]["token"]
    state = server.call("GET", f"/games/{uid}", token)
    ui = game_ui(state["game"]["ruleset"])
    return [ui.piece_name(piece, "pl") for seat in state["game"]["seats"]
            for piece in seat["titans"]]


@pytest.mark.parametrize(("value", "code"), [
    ("pl_PL.UTF-8", "pl"), ("pl", "pl"), ("pl_PL@euro", "pl"), ("C", "en"), ("POSIX", "en"),
    ("en_GB.UTF-8", "en"), ("", "en")])
def test_a_locale_name_gives_its_language(value: str, code: str) -> None:
    assert locale_code(value) == code


def test_the_environment_is_read_as_gettext_reads_it() -> None:
    assert environment_language({"LANG": "pl_PL.UTF-8"}) == "pl"
    assert environment_language({"LC_ALL": "C", "LANG": "pl_PL.UTF-8"}) == "en"
    assert environment_language({"LC_MESSAGES": "pl_PL.UTF-8", "LANG": "en_US.UTF-8"}) == "pl"
    assert environment_language({"LANGUAGE": "xx:pl", "LANG": "en_US.UTF-8"}) == "pl"
    assert environment_language({"LANG": "xx_YY.UTF-8"}) == "en"  # (no catalogue: English)
    assert environment_language({}) == "en"


def test_a_polish_seat_sees_show_options_and_a_refusal_in_polish(server: Server,
                                                                  cli: Cli) -> None:
    uid = polish_game(server, cli)
    short = uid[:8]
    shown = cli("show", short, env=ENGLISH_ONLY).stdout
    assert "Gracz" in shown and "Miejsce" in shown, shown  # (the players' table)
    assert "Twoja decyzja" in shown, shown
    polish_titans = pieces_in_polish(server, cli, uid)
    assert all(name in shown for name in polish_titans), (polish_titans, shown)
    assert "Masakrator" in polish_titans or "Rassik" not in polish_titans  # (the glossary's)
    assert "Your decision" not in shown and "Player" not in shown
    options = cli("options", short, env=ENGLISH_ONLY).stdout
    assert "Co robi" in options and "Zagraj:" in options, options
    assert "What it does" not in options
    refused = cli("play", short, "fly away", code=1, env=ENGLISH_ONLY)
    assert "Błąd: odrzucone:" in refused.stderr, refused.stderr
    assert "nic nie zostało zagrane" in refused.stderr and "Dozwolone opcje teraz" in \
        refused.stderr, refused.stderr
    # the engine's reason for a legal word at the wrong time, said by the server in Polish
    wrong = cli("play", short, "end", code=1, env=ENGLISH_ONLY)
    assert "nie odpowiada na oczekującą decyzję" in wrong.stderr, wrong.stderr
    assert "does not answer" not in wrong.stderr, wrong.stderr


@pytest.mark.parametrize("text", ["", "   ", "move " + "S" * 600])
def test_a_polish_seat_reads_an_empty_or_overlong_input_refused_in_polish(
        server: Server, cli: Cli, text: str) -> None:
    """Refused before any engine reads it (by the API's schema or the service), an input is
    explained in the seat's language, without the schema's English detail."""
    uid = polish_game(server, cli)
    refused = cli("play", uid[:8], text, code=1, env=ENGLISH_ONLY)
    assert "wybierz jedną z opcji" in refused.stderr, refused.stderr
    for english in ("input", "Length", "request", "detail"):
        assert english not in refused.stderr, refused.stderr


def test_a_polish_crew_sees_the_great_race_in_polish(server: Server, cli: Cli) -> None:
    uid = polish_game(server, cli, "great-race")
    shown = cli("show", uid[:8], env=ENGLISH_ONLY).stdout
    crews = pieces_in_polish(server, cli, uid)
    assert crews and all(name in shown for name in crews), (crews, shown)
    assert not set(crews) & {"French", "Belgian", "Italian", "English"}, crews
    assert "Gracz" in shown and "Your decision" not in shown, shown


def test_an_english_seat_stays_english_in_a_polish_locale(server: Server, cli: Cli) -> None:
    game = server.create({"email": address(), "name": "Ann"}, {"bot": True}, {"bot": True},
                         name="English race")
    cli("login", game.links[0], env=ENGLISH_ONLY)
    game.start()
    shown = cli("show", game.uid[:8], env={"LANG": "pl_PL.UTF-8"}).stdout
    assert "Your decision" in shown and "Grinder" in shown, shown
    listed = cli("games", env={"LANG": "pl_PL.UTF-8"}).stdout  # (no seat: the locale's)
    assert "Kolej" in listed and "Termin" in listed, listed


def test_the_help_speaks_the_locales_language(titanpost: str) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ENGLISH_ONLY}
    polish = subprocess.run([titanpost, "--help"], capture_output=True, text=True, timeout=60,
                            env={**env, "LANG": "pl_PL.UTF-8"}, check=True).stdout
    assert "Użycie:" in polish and "Polecenia" in polish, polish
    assert "Twoje gry: czyja kolej, twoje terminy." in polish, polish
    assert "Usage:" not in polish
    show = subprocess.run([titanpost, "show", "--help"], capture_output=True, text=True,
                          timeout=60, env={**env, "LC_ALL": "pl_PL.UTF-8"}, check=True).stdout
    assert "Plansza gry GRA w kolorze" in show and "Pokaż tę pomoc i zakończ." in show, show
    assert "Użycie: titanpost show [OPCJE] GRA" in show, show
    english = subprocess.run([titanpost, "--help"], capture_output=True, text=True, timeout=60,
                             env={**env, "LANG": "C.UTF-8"}, check=True).stdout
    assert "Usage:" in english and "Your games: whose turn it is" in english
    assert "[OPTIONS] COMMAND [ARGS]..." in english, english
    refused = subprocess.run([titanpost, "show"], capture_output=True, text=True, timeout=60,
                             env={**env, "LANG": "pl_PL.UTF-8"}, check=False)
    assert refused.returncode == 2 and "Brak argumentu 'GRA'" in refused.stderr, refused.stderr


def test_no_help_names_an_english_metavariable_in_polish() -> None:
    """Every ``--help`` in Polish names its metavariables in Polish, in the usage line, the
    options and the text alike (issue 40: OPTIONS, COMMAND, GAME, TEXT stayed English)."""
    from click.testing import CliRunner

    from cli.main import main
    from cli.speech import METAVARS
    from tests.test_cli_pseudo_locale import _commands

    english = {word for word in METAVARS if translate("pl", word, context="metavar") != word}
    pattern = re.compile(r"(?<![\w$-])(" + "|".join(sorted(english, key=len, reverse=True))
                         + r")(?![\w-])")
    found: dict[str, list[str]] = {}
    for path in _commands():
        shown = CliRunner().invoke(main, [*path, "--help"], prog_name="titanpost",
                                   env={"LANG": "pl_PL.UTF-8", "LANGUAGE": None,
                                        "LC_ALL": None, "LC_MESSAGES": None, "COLUMNS": "200"})
        assert shown.exit_code == 0, (path, shown.output)
        words = pattern.findall(shown.stdout)
        if words:
            found[" ".join(path)] = words
    assert not found, found
    assert pattern.search("Usage: titanpost chat [OPTIONS] GAME [TEXT]...")


def test_a_games_name_a_place_and_a_seat_are_three_words() -> None:
    """The games list's column for a game's name is "Nazwa" (a player's name is "Imię"); a
    finished game's placing is "Lokata", which no one reads as a seat ("Miejsce")."""
    assert translate("pl", "Name", context="a game's name") == "Nazwa"
    assert translate("pl", "Name") == "Imię"
    assert translate("pl", "Place") == "Lokata" != translate("pl", "Seat")


def test_a_polish_seat_reads_its_games_and_its_language_in_words(server: Server,
                                                                  cli: Cli) -> None:
    uid = polish_game(server, cli)
    listed = cli("games", env={"LANG": "pl_PL.UTF-8"}).stdout  # (a list: the locale's)
    assert "Nazwa" in listed and "Imię" not in listed, listed
    settings = cli("settings", uid[:8], env=ENGLISH_ONLY).stdout
    assert re.search(r"język:\s+polski", settings), settings


@pytest.mark.parametrize("game", sorted(GAMES))
def test_the_demo_speaks_the_locales_language(titanpost: str, game: str) -> None:
    """``engine demo`` has no seat: its board, its moves and its winner speak the locale's
    language, within 80 columns (the words of each game's race: its test fixture's)."""
    env = {k: v for k, v in os.environ.items() if k not in ENGLISH_ONLY} | {
        "COLUMNS": "80", "NO_COLOR": "1"}
    fixture = game_fixture(game)
    args = [titanpost, "engine", "demo", "--game", game, "--seed", "4", "--every", "turn",
            *fixture.demo]
    polish = subprocess.run(args, capture_output=True, text=True, timeout=120,
                            env={**env, "LANG": "pl_PL.UTF-8"}, check=True).stdout
    english = subprocess.run(args, capture_output=True, text=True, timeout=120,
                             env={**env, "LANG": "C.UTF-8"}, check=True).stdout
    assert all(len(line) <= 80 for line in polish.splitlines())
    assert " wins after " in english and " wygrywa (" in polish, polish[-2000:]
    for pattern in fixture.demo_patterns["pl"]:
        assert re.search(pattern, polish), (pattern, polish[-3000:])
    for pattern in fixture.demo_patterns["en"]:
        assert not re.search(pattern, polish), (pattern, polish[-3000:])
    for word in fixture.demo_words["pl"]:
        assert word in polish, (word, polish[-3000:])
    for word in fixture.demo_words["en"]:
        assert word in english and word not in polish, (word, polish[-3000:])
