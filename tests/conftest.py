"""Shared fixtures for the unit tests (the scenario and property suites need none)."""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

TESTS_DIR = Path(__file__).resolve().parent
CIRCUIT_FIXTURES = TESTS_DIR / "circuits"


@pytest.fixture(scope="session")
def titanpost() -> str:
    """Path of the installed ``titanpost`` console command (``pip install -e '.[test]'``):
    the one beside the interpreter running the tests (so that a virtual environment need not
    be activated), else the one on PATH."""
    beside = Path(sys.executable).parent / "titanpost"
    path = str(beside) if beside.is_file() else shutil.which("titanpost")
    if path is None:
        pytest.fail(
            "no 'titanpost' command beside this Python nor on PATH: install the project with "
            "python3 -m pip install -e '.[test]'"
        )
    return path


@pytest.fixture(scope="session")
def circuit_fixtures() -> Path:
    """The directory of user circuit files used by the tests (tests/circuits/*.toml)."""
    return CIRCUIT_FIXTURES


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """An empty database of each kind (a new one per test)."""
    from tests.dbutil import fresh_database

    with fresh_database(request.param, tmp_path) as url:
        yield url


@pytest.fixture(params=["sqlite", "postgresql"])
def migrated_database_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A database of each kind already migrated to the newest revision (a new one per test)."""
    from tests.dbutil import migrated_database

    with migrated_database(request.param, tmp_path) as url:
        yield url


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``-n auto``: one worker more than there are CPUs. Many tests wait on a server, a browser
    or a mail server they started, so a CPU is often idle with one worker a CPU (on two CPUs,
    three workers ran the suite in 628 s where two took 731 s, the same machine and load)."""
    return (os.cpu_count() or 1) + 1


def pytest_sessionfinish(session: pytest.Session) -> None:
    """Wait for the test databases still being dropped (tests/dbutil.py)."""
    from tests.dbutil import finish

    failures = finish()
    if failures:
        print("test databases not dropped: " + "; ".join(failures))


@pytest.fixture
def postgres_url(tmp_path: Path) -> Iterator[str]:
    """An empty PostgreSQL database (skipped, with the reason, where no server answers)."""
    from tests.dbutil import fresh_database

    with fresh_database("postgresql", tmp_path) as url:
        yield url


def leash_searches(setitem: Callable[[dict[str, Any], str, Any], None]) -> None:
    """Put the searching computer levels on :func:`quick_searches`'s short leash through
    ``setitem``: monkeypatch's (undone after the test), or a plain assignment in a process a
    test starts (``tests/test_clock_workers.py``'s workers)."""
    from dataclasses import replace

    from app.games.greatrace.engine import search as great_search
    from app.games.titanrace.engine import search as titan_search

    for budgets in (titan_search.BUDGETS, great_search.BUDGETS):
        for level in ("normal", "strong"):
            setitem(budgets, level, replace(budgets[level], iterations=40, seconds=None))


@pytest.fixture
def quick_searches(monkeypatch: pytest.MonkeyPatch) -> None:
    """The searching computer levels (normal, strong) on a short leash, for the tests where a
    computer seat plays but how well it plays is not the point (a module asks for it with
    ``pytestmark = pytest.mark.usefixtures("quick_searches")``): the strength is measured by
    bench/bots.py and the searches' own tests, which keep the full budgets. The leash is
    counted in iterations, with no time cap: a search is seeded from its seat's view, so its
    answer is then the same on a busy machine as on a quiet one (a capped search's answer
    depends on how many iterations the machine allowed it)."""
    leash_searches(monkeypatch.setitem)


# tests/apifixtures.py holds the fixtures and helpers of the service and API tests, and
# tests/mailservers.py those of the real mail servers (loaded by the modules that use them with
# pytest_plugins): let pytest rewrite their asserts like a conftest's.
pytest.register_assert_rewrite("tests.apifixtures", "tests.mailservers")


@pytest.fixture(autouse=True)
def _every_message_is_translated(request: pytest.FixtureRequest) -> Iterator[None]:
    """Fails a test during which a page, mail or picture asked a catalogue (Polish) for a
    message it lacks: the text would have been shown in English. A test that asks for an
    unknown message on purpose is marked ``untranslated``."""
    from app.core.i18n import MISSED

    MISSED.clear()
    yield
    missed = sorted(MISSED, key=str)
    MISSED.clear()
    if missed and request.node.get_closest_marker("untranslated") is None:
        pytest.fail("messages missing from a catalogue (shown in English): "
                    + "; ".join(f"{lang} {text!r}" + (f" [{ctx}]" if ctx else "")
                                for lang, ctx, text in missed))


HEAVY_FIRST = (
    "tests/test_faults.py::test_kills_restarts",
    "tests/test_scaleout.py::test_two_instances",
    "tests/test_quality.py::test_mypy_strict_clean",
    "tests/test_wheel.py::",
    "tests/test_browser.py::test_create_join_play",
    "tests/test_clock_workers.py::test_two_processes_act_once",
    "tests/test_load.py::test_games_played",
    "tests/test_mail_servers.py::",
    "tests/greatrace/test_mail_links.py::test_a_whole_race",
    "tests/greatrace/test_mail.py::test_a_race_by_mail",
    "tests/test_service.py::test_admin_",
)
"""The tests that take longest (15 s and more each on CI's two CPUs), longest first."""


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Run the longest tests first: pytest-xdist's workers then share the many short ones at
    the end, rather than one worker finishing a minute-long test alone while the other waits.
    (Every worker collects in this same order, as xdist requires.)"""

    def rank(item: pytest.Item) -> int:
        return next((i for i, prefix in enumerate(HEAVY_FIRST) if item.nodeid.startswith(prefix)),
                    len(HEAVY_FIRST))

    items.sort(key=rank)  # (stable: the rest keep their order)
