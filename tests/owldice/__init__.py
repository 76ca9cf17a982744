"""Owl Dice: a small game that only the tests register, the standing proof that a game is one
folder (issue 37; docs/adding-a-game.md, "The test game"). Nothing in ``app/`` names it.

Its folder is laid out as a game under ``app/games/`` is: the pure rules in :mod:`.engine`,
the ruleset (:mod:`.ruleset`), its words (:mod:`.describe`), its UI (:mod:`.ui`), its command
line (:mod:`.commandline`) and its templates (``templates/pages``, ``templates/mail``).
:func:`registered` adds it to the registry (:data:`app.games.GAMES`) for as long as a test
needs it; :func:`owl_dice` is that as a fixture. ``SETUP_FLAGS``: it declares none."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import pytest

NAME = "owl-dice"
SETUP_FLAGS = ()


@contextmanager
def registered() -> Iterator[str]:
    """Owl Dice in the registry, and the games' loaded rulesets and UIs forgotten when it
    leaves (so that nothing loaded meanwhile outlives it)."""
    from app.games import GAMES, Game, forget
    from app.games.ui import forget_ui

    assert NAME not in GAMES
    GAMES[NAME] = Game("tests.owldice", "OwlDiceRuleset", "OwlDiceUI", "Owl Dice")
    try:
        yield NAME
    finally:
        del GAMES[NAME]
        forget(NAME)
        forget_ui(NAME)


@pytest.fixture
def owl_dice() -> Iterator[str]:
    """Owl Dice registered for the test (its name)."""
    with registered() as name:
        yield name
