"""The layers above the engine reach a game only through its GameUI, and speak through one
catalogue (app/core/i18n.py)."""

from __future__ import annotations

import ast
import string
from pathlib import Path

import pytest

from app.core.i18n import catalogue, language, translate, translate_plural
from app.games import GAMES, template_folder
from app.games.ui import GameUI, game_ui
from app.mail.render import mail_folders

ROOT = Path(__file__).resolve().parent.parent
NEUTRAL = sorted(path for path in (ROOT / "app").rglob("*.py")
                 if path.relative_to(ROOT).parts[1] != "games")
"""Every module of ``app/`` outside ``app/games/``."""


def imported_modules(path: Path) -> set[str]:
    """Every module a source file imports (relative imports resolved against ``app``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = ".".join(path.relative_to(ROOT).with_suffix("").parts[:-1])
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = package.split(".")
            if node.level:
                base = base[: len(base) - node.level + 1]
                found.add(".".join([*base, node.module or ""]).rstrip("."))
            else:
                found.add(node.module or "")
    return found


@pytest.mark.parametrize("path", NEUTRAL, ids=lambda p: str(p.relative_to(ROOT)))
def test_neutral_layers_do_not_import_a_game(path: Path) -> None:
    packages = [game.package for game in GAMES.values()]
    games = [m for m in imported_modules(path)
             if any(m == package or m.startswith(f"{package}.") for package in packages)]
    assert games == []


def test_the_import_finder_sees_engine_imports() -> None:
    describe = ROOT / "app" / "games" / "titanrace" / "describe.py"
    assert "app.games.titanrace.engine.cards" in imported_modules(describe)


def test_titan_race_implements_the_protocol() -> None:
    ui: GameUI = game_ui("titan-race")
    assert ui.name == "titan-race"
    assert ui.describe_option("pick yellow", None, "en") == "Take the yellow die"
    assert ui.describe_option("pick yellow", None, "pl") == "Weź kość: żółta"
    view = {"pending": {"kind": "turn", "titan": "grinder", "die": "green"}}
    assert ui.describe_option("ability C4", view, "en") == "Grinder · Ability: a trap on C4"
    assert ui.decision_heading(view["pending"], "en") == "Your turn with the green die"
    assert ui.waiting_for(view["pending"], ["Ann"], "en") == (
        "Waiting for Ann (Grinder) to play a turn with the green die.")
    boards = ui.boards({"circuits": ["kaldheira"]})
    assert ui.highlight("trap C4", view, None, boards) == ["C4"]
    assert ui.board_svg({}, boards).startswith("<svg")
    with pytest.raises(KeyError):
        game_ui("no-such-game")


@pytest.mark.parametrize("name", sorted(GAMES))
def test_every_game_implements_the_protocol(name: str) -> None:
    """Each registered game's UI is found by its name and draws its default board."""
    from app.games import ruleset

    ui: GameUI = game_ui(name)
    assert ui.name == name
    rules = ruleset(name)
    for variant in rules.variants:
        boards = ui.boards(rules.default_setup(variant))
        assert ui.board_svg({}, boards).startswith("<svg"), variant


@pytest.mark.untranslated
def test_translate_fills_fields_and_falls_back_to_english() -> None:
    assert translate("pl", "Round {round}", round=3) == "Runda 3"
    assert translate("en", "Round {round}", round=3) == "Round 3"
    assert translate("xx", "Round {round}", round=3) == "Round 3"
    assert translate("pl", "not a message id {n}", n=1) == "not a message id 1"
    assert translate("pl", "blue", context="die colour") == "niebieska"
    assert language("de") == "en"


@pytest.mark.untranslated
def test_polish_plurals_follow_the_catalogue_rule() -> None:
    # no plural entry in the catalogue: English forms, chosen by n
    assert translate_plural("pl", "{n} ghost", "{n} ghosts", 1) == "1 ghost"
    assert translate_plural("en", "{n} ghost", "{n} ghosts", 5) == "5 ghosts"
    # with one: the catalogue's form for n (Polish 1 karta, 2 karty, 5 kart)
    assert [translate_plural("pl", "{n} card", "{n} cards", n) for n in (1, 2, 5, 22)] == [
        "1 karta", "2 karty", "5 kart", "22 karty"]
    polish = catalogue("pl")
    assert polish is not None and polish.num_plurals == 3


def test_every_polish_entry_is_translated_with_the_same_fields() -> None:
    polish = catalogue("pl")
    assert polish is not None
    entries = [m for m in polish if m.id]
    assert len(entries) > 300

    def fields(text: str) -> set[str]:
        return {name for _, name, _, _ in string.Formatter().parse(text) if name}

    untranslated = [m.id for m in entries if not m.string]
    assert untranslated == []
    assert [m.id for m in entries if fields(str(m.id)) != fields(str(m.string))] == []


PAGE_PARTS = ("new_race.html", "new_seat.html", "status.html", "players.html",
              "players_table.html")
"""The parts of the shared pages each game writes for itself (``games/<game>/<file>``)."""
MAIL_PARTS = ("_parts.txt", "_parts.html", "_words.txt")
WORDS_MACROS = ("invited", "started", "you_race", "won", "plays_for_you", "on_timeout")
"""The sentences a game's ``_words.txt`` gives the shared mails."""


@pytest.mark.parametrize("name", sorted(GAMES))
def test_a_game_brings_every_template_of_its_own(name: str) -> None:
    """What the shared pages include and the shared mails import by name is in the game's
    folder, with a template for each decision mail it declares, every one of them loading
    (the answers to mailed-in replies are written without templates)."""
    from app.core.data import data_folder
    from app.mail.notify import REPLY_KINDS, SHARED_KINDS
    from app.mail.templating import template_environment

    folder = template_folder(name)
    assert folder == ROOT / "app" / "games" / GAMES[name].package.split(".")[-1] / "templates"
    assert all((folder / "pages" / part).is_file() for part in PAGE_PARTS)
    ui = game_ui(name)
    assert ui.mail_kinds and all((folder / "mail" / part).is_file() for part in MAIL_PARTS)
    env = template_environment((folder / "mail", *mail_folders(data_folder("templates") / "mail")))
    for kind in (*(k for k in SHARED_KINDS if k not in REPLY_KINDS), *ui.mail_kinds):
        env.get_template(f"{kind}.txt")
        env.get_template(f"{kind}.html")
    words = env.get_template("_words.txt").make_module({"lang": "en"})
    assert all(callable(getattr(words, macro, None)) for macro in WORDS_MACROS)
