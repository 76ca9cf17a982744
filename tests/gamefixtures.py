"""What the tests need of each registered game, found through the game (issue 37).

A game brings its test fixture as ``FIXTURE``, a :class:`GameFixture`, in the module
``tests/<folder>/fixture.py``, ``<folder>`` being the last part of its package's name in
:data:`app.games.GAMES` (``app.games.greatrace``: ``tests/greatrace/fixture.py``). The tests that
concern every game iterate over the registry and ask :func:`game_fixture` for what they need, so
a game added to the registry is covered by each of them, or fails them until it brings its
fixture.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from importlib import import_module
from importlib.util import find_spec
from pathlib import Path
from typing import Any

from app.games import GAMES

Outcome = tuple[int, dict[str, Any]]


@dataclass(frozen=True)
class GameFixture:
    """One game's samples and test data."""

    scenarios: Path
    """The folder of its scenario files (``*.json``), each with a ``description`` and an
    ``expect`` (tests/test_scenarios.py)."""
    scenario_keys: dict[str, type]
    """The keys every one of its scenario files holds, with the type of each."""
    command_scenarios: tuple[str, ...]
    """Scenario files (names in :attr:`scenarios`) run through the installed ``titanpost engine
    run`` as well, to prove the command finds the game's engine."""
    demo: tuple[str, ...]
    """``titanpost engine demo --game <game>``'s further arguments for a sample race."""
    demo_modules: tuple[str, ...]
    """The modules of the game's package that ``engine demo`` may import besides its engine
    (each with the modules under it): what plays, draws and words the race."""
    notation: frozenset[str]
    """The words of its input notation (verbs, the cards' slugs), which the replay and the demo
    show as typed, the same in every language."""
    proper_names: frozenset[str]
    """Names no catalogue translates that its pages may show (a board's places)."""
    seats: int
    """The seats of a sample race on the command line (a person in seat 0, the computer in the
    others)."""
    board_words: dict[str, tuple[str, ...]]
    """Words its terminal board shows at the start of a sample race, by language (``en``,
    ``pl``): a Polish seat's board shows the Polish ones and none of the English."""
    demo_words: dict[str, tuple[str, ...]]
    """Words of its ``engine demo`` race in Polish (``pl``: shown in a Polish locale) and in
    English (``en``: shown in an English locale and not in a Polish one)."""
    demo_patterns: dict[str, tuple[str, ...]]
    """Regular expressions its demo race in a Polish locale matches (``pl``) and does not
    (``en``: the English form of the same)."""
    new_game_form: dict[str, str]
    """Its own fields of a sample new-game form (its boards, the pieces seats choose)."""
    mail_race: dict[str, Any]
    """What a sample race is created with (``create_game``'s set-up and seed) for the mail
    tests: played to its end by the computer, it writes every kind of mail the game sends."""
    decisions: tuple[dict[str, Any], ...]
    """Sample pending decisions, of every kind the game asks (and of each way a kind may be
    asked: in one's own turn or another's): each mails as one of its ``GameUI.mail_kinds``, or
    none."""
    piece_selector: str
    """A CSS selector of piece ``{piece}`` on its board picture."""
    to_the_board: Callable[[Any, str], None] | None = None
    """For a game whose pieces begin off the board: play seat 0 of game ``uid`` (on the
    service given) until its piece is on the board."""
    scenario_kinds: tuple[str, ...] = ()
    """The beginnings a scenario file's name says its kind of rule with (none: any name)."""


def folder(name: str) -> str:
    """The folder of game ``name``'s tests: the last part of its package's name."""
    return GAMES[name].package.rsplit(".", 1)[-1]


class NoFixture(AssertionError):
    """A registered game brings no test fixture."""


def has_fixture(name: str) -> bool:
    """Whether game ``name`` brings its test fixture (``tests/<folder>/fixture.py``)."""
    try:
        return find_spec(f"tests.{folder(name)}.fixture") is not None
    except ModuleNotFoundError:
        return False


def game_fixture(name: str) -> GameFixture:
    """Game ``name``'s test fixture (``tests/<folder>/fixture.py``'s ``FIXTURE``);
    :class:`NoFixture` for a game that brings none."""
    if not has_fixture(name):
        raise NoFixture(f"game '{name}' brings no test fixture: write FIXTURE in "
                        f"tests/{folder(name)}/fixture.py (docs/adding-a-game.md)")
    fixture: GameFixture = import_module(f"tests.{folder(name)}.fixture").FIXTURE
    return fixture


def each_game(cases: Callable[[str, GameFixture], list[tuple[Any, ...]]], width: int = 2
              ) -> list[tuple[Any, ...]]:
    """The test cases (of ``width`` values, the game's name first) ``cases`` makes of each
    registered game and its fixture, for a test parametrized when it is collected. A game without
    a fixture gives one case, its name and None, whose test fails as it asks for the fixture
    (the other games' cases still run)."""
    found: list[tuple[Any, ...]] = []
    for name in GAMES:
        if has_fixture(name):
            found += cases(name, game_fixture(name))
        else:
            found.append((name, *([None] * (width - 1))))
    return found


def scenario_runner(name: str) -> Callable[[str], Outcome]:
    """Game ``name``'s scenario file runner (its engine's ``scenario.run_scenario_file``: what
    ``titanpost engine run FILE`` prints for the file, and its exit code)."""
    runner: Callable[[str], Outcome] = import_module(
        f"{GAMES[name].package}.engine.scenario").run_scenario_file
    return runner


def scenario_files() -> list[tuple[Any, ...]]:
    """Every registered game's scenario files, by game and then name."""
    return each_game(lambda name, fixture: [(name, path) for path
                                            in sorted(fixture.scenarios.glob("*.json"))])
