"""No game's name or piece word outside its folder: the shared templates and the neutral Python
(``app/`` outside ``app/games/``, and ``cli/``) reach a game only through the registry and its
UI, so a new game is one folder (issue 37). The words are read from the registered games: each
one's name and title, its piece word, its pieces, its built-in boards and its variants."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from app.games import GAMES
from app.games.ui import game_ui

ROOT = Path(__file__).resolve().parent.parent
PRODUCT = re.compile(r"titan ?post", re.IGNORECASE)
"""The server's own name, which is no game's."""

NEUTRAL_PYTHON_PENDING: frozenset[str] = frozenset()
"""Neutral modules that still name a game's pieces or setup: the list only shrinks."""


def game_words() -> set[str]:
    """Every registered game's words, lower case."""
    words: set[str] = set()
    for name in GAMES:
        ui = game_ui(name)
        heading = ui.piece_heading.lower()
        words |= {name, ui.title.lower(), heading, heading + "s",
                  *(ui.piece_name(piece, "en").lower() for piece in ui.pieces),
                  *ui.board_choices, *(v for v in ui.variants if v != "standard")}
    return words


WORDS = game_words()
PATTERN = re.compile(r"(?<![\w-])(" + "|".join(sorted(map(re.escape, WORDS), key=len,
                                                      reverse=True)) + r")(?![\w-])",
                     re.IGNORECASE)


def found_in(path: Path) -> list[str]:
    """The lines of ``path`` that name a game's word."""
    lines = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        match = PATTERN.search(PRODUCT.sub("", line))
        if match:
            lines.append(f"{path.relative_to(ROOT)}:{number}: {match.group(0)}")
    return lines


SHARED_TEMPLATES = sorted(p for p in (ROOT / "templates").rglob("*")
                          if p.suffix in (".html", ".txt"))
NEUTRAL_PYTHON = sorted(
    [*(p for p in (ROOT / "app").rglob("*.py") if p.relative_to(ROOT).parts[1] != "games"),
     *(ROOT / "cli").rglob("*.py")])


def test_the_words_are_read_from_every_registered_game() -> None:
    assert {"titan", "crew", "kaldheira", "grand-slam", "titan race", "the great race"} <= WORDS
    assert len(WORDS) > 20


@pytest.mark.parametrize("path", SHARED_TEMPLATES, ids=lambda p: str(p.relative_to(ROOT)))
def test_a_shared_template_names_no_game(path: Path) -> None:
    assert found_in(path) == []


def test_neutral_python_names_no_game_but_the_pending() -> None:
    named = {str(p.relative_to(ROOT)): found_in(p) for p in NEUTRAL_PYTHON}
    wrong = [line for relative, lines in named.items() if relative not in NEUTRAL_PYTHON_PENDING
             for line in lines]
    assert wrong == [], "\n".join(wrong)
    done = {relative for relative in NEUTRAL_PYTHON_PENDING if not named.get(relative)}
    assert not done, f"no longer pending, remove from the list: {sorted(done)}"


def test_the_registry_titles_are_the_games_own() -> None:
    """The registry names each game by the title its UI gives it (the command's help and the
    API's reference read the registry's, without loading the game)."""
    for name, game in GAMES.items():
        assert game.title == game_ui(name).title
