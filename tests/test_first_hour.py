"""A newcomer's first hour (issue 23): the README's links lead somewhere in a clone, and the
browser tests' set-up asks for chromium instead of installing packages itself."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests import browser

ROOT = Path(__file__).parent.parent
LINK = re.compile(r"\]\(([^)#\s]+)")


@pytest.mark.parametrize("page", ["README.md", *sorted(
    str(p.relative_to(ROOT)) for p in (ROOT / "docs").glob("**/*.md"))])
def test_the_readme_and_docs_link_only_into_the_clone(page: str) -> None:
    """A clone has no ../shared/ (nor anything else beside it): every relative link of the
    README and the docs names a file of the repository."""
    text = (ROOT / page).read_text()
    for target in LINK.findall(text):
        if re.match(r"[a-z]+:", target):
            continue
        found = (ROOT / page).parent / target
        assert found.resolve().is_relative_to(ROOT.resolve()), (page, target)
        assert found.exists(), (page, target)
    if page == "README.md":
        assert "../shared" not in text


def test_the_browser_tests_never_install_packages(monkeypatch: pytest.MonkeyPatch,
                                                  tmp_path: Path) -> None:
    """Where chromium is missing, even as root, the fixture runs nothing: it fails with the
    command to run (CI's .ci/run installs the package itself)."""
    ran: list[Any] = []
    monkeypatch.setattr(browser, "CHROMIUM", tmp_path / "chromium")
    monkeypatch.setattr(subprocess, "run", lambda *a, **k: ran.append(a))
    monkeypatch.setattr(os, "geteuid", lambda: 0, raising=False)  # as root
    with pytest.raises(pytest.fail.Exception) as failed:
        browser.ensure_chromium()
    assert ran == []
    assert "apt-get install -y chromium" in str(failed.value)


def test_ci_installs_chromium_itself() -> None:
    script = (ROOT / ".ci" / "run").read_text()
    assert re.search(r"apt-get install[^\n]*(\\\n[^\n]*)*\bchromium\b", script)
