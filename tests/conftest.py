"""Shared fixtures for the unit tests (the scenario and property suites need none)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

TESTS_DIR = Path(__file__).resolve().parent
CIRCUIT_FIXTURES = TESTS_DIR / "circuits"


@pytest.fixture(scope="session")
def titanpost() -> str:
    """Path of the installed ``titanpost`` console command (``pip install -e '.[test]'``)."""
    path = shutil.which("titanpost")
    if path is None:
        pytest.fail(
            "the 'titanpost' command is not on PATH: install the project with "
            "python3 -m pip install -e '.[test]'"
        )
    return path


@pytest.fixture(scope="session")
def circuit_fixtures() -> Path:
    """The directory of user circuit files used by the tests (tests/circuits/*.toml)."""
    return CIRCUIT_FIXTURES
