"""Static checks run as part of the test suite: ruff and mypy --strict must stay clean."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, cwd=ROOT, capture_output=True, text=True, check=False)


def test_ruff_clean() -> None:
    if importlib.util.find_spec("ruff") is None:
        pytest.fail("ruff is not installed: install the test extras (pip install -e '.[test]')")
    result = _run(sys.executable, "-m", "ruff", "check", "app", "cli", "tests", "bench")
    assert result.returncode == 0, result.stdout + result.stderr


def test_mypy_strict_clean() -> None:
    result = _run(sys.executable, "-m", "mypy")
    assert result.returncode == 0, result.stdout + result.stderr
