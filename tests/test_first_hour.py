"""A newcomer's first hour (issue 23): the README's links lead somewhere in a clone, and the
browser tests' set-up asks for chromium instead of installing packages itself."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import requests

from tests import browser
from tests.netutil import free_port

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


MD_NAME = re.compile(r"(?<![\w/.-])([\w./-]*[A-Za-z][\w-]*\.md)\b")


@pytest.mark.parametrize("page", ["README.md", *sorted(
    str(p.relative_to(ROOT)) for p in (ROOT / "docs").glob("**/*.md"))])
def test_the_readme_and_docs_name_only_files_of_the_clone(page: str) -> None:
    """Nor does a page send a newcomer to a file named in words that the clone lacks (the
    README named ENGINE-INTERFACE.md and RULINGS.md, which lived beside the project)."""
    text = (ROOT / page).read_text()
    assert "../shared" not in text, page
    for name in set(MD_NAME.findall(text)):
        places = [(ROOT / page).parent / name, ROOT / name, ROOT / "docs" / name]
        assert any(place.exists() for place in places), (page, name)


@pytest.mark.parametrize("page", ["README.md", "docs/tour.md"])
def test_the_tours_steps_are_numbered_once_each(page: str) -> None:
    readme = (ROOT / page).read_text()
    tour = readme.split("## A five-minute tour", 1)[1].split("\n## ", 1)[0]
    numbers = [int(n) for n in re.findall(r"^(\d+)\. \*\*", tour, flags=re.MULTILINE)]
    assert numbers == list(range(1, len(numbers) + 1)), numbers


def test_the_readme_is_read_in_ten_minutes() -> None:
    """Under 150 lines (issue 40: it had grown to 653 and its tour to 19 steps): what it is, the
    two commands and what each needs, a five-step tour, and the way on to docs/ for the rest."""
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) < 150
    assert "python3 -m pip install -e . && titanpost serve" in readme
    assert "python3 -m pip install -e '.[test]' && python3 -m pytest" in readme
    assert "apt-get install -y chromium" in readme
    tour = readme.split("## A five-minute tour", 1)[1].split("\n## ", 1)[0]
    assert len(re.findall(r"^\d+\. \*\*", tour, flags=re.MULTILINE)) == 5
    for page in ("docs/operations.md", "docs/fairness.md", "docs/engine.md",
                 "docs/great-race-engine.md", "docs/adding-a-game.md", "docs/settings.md"):
        assert f"]({page}" in readme, page


def test_the_engine_pages_python_runs_as_written() -> None:
    """The engine page's example (a ``python`` block) runs from the checkout as it is."""
    readme = (ROOT / "docs" / "engine.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", readme, flags=re.DOTALL)
    assert blocks
    for block in blocks:
        done = subprocess.run([sys.executable, "-c", block], cwd=ROOT, capture_output=True,
                              text=True, timeout=120, check=False)
        assert done.returncode == 0, block + done.stderr


def test_the_engine_pages_commands_name_a_scenario_of_the_clone(titanpost: str) -> None:
    readme = (ROOT / "docs" / "engine.md").read_text()
    section = readme.split("## The engine from the command line", 1)[1].split("\n## ", 1)[0]
    (path,) = re.findall(r"^S=(\S+)", section, flags=re.MULTILINE)
    done = subprocess.run([titanpost, "engine", "run", path], cwd=ROOT, capture_output=True,
                          text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr


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


def _serving(titanpost: str, tmp_path: Path, port: int, **env: str) -> subprocess.Popen[str]:
    """``titanpost serve --port PORT`` with no TITANPOST_ setting but those given, once it
    answers."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith("TITANPOST_")}
    clean |= {"TITANPOST_DATABASE_URL": f"sqlite:///{tmp_path / 'tour.db'}",
              "HOME": str(tmp_path), "XDG_DATA_HOME": str(tmp_path / "data"), **env}
    process = subprocess.Popen([titanpost, "serve", "--port", str(port), "--no-scheduler"],
                               env=clean, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and process.poll() is None:
        try:
            if requests.get(f"http://127.0.0.1:{port}/api/", timeout=2).ok:
                return process
        except requests.ConnectionError:
            time.sleep(0.2)
    process.kill()
    pytest.fail(f"the server did not start: {process.communicate()[0]}")


def _invitation_link(port: int) -> str:
    seats = [{"email": "ann@example.org"}, {"bot": True}, {"bot": True}]
    made = requests.post(f"http://127.0.0.1:{port}/api/games", json={"seats": seats},
                         timeout=10)
    assert made.status_code == 201, made.text
    return str(made.json()["invitations"][0]["link"])


@pytest.mark.parametrize("base", [None, "https://titan.example.org"])
def test_serve_on_another_port_links_to_it(titanpost: str, tmp_path: Path,
                                           base: str | None) -> None:
    """With no TITANPOST_BASE_URL, the links of ``serve --port N`` point at port N (a base
    URL that is set is kept)."""
    port = free_port()
    process = _serving(titanpost, tmp_path, port,
                       **({"TITANPOST_BASE_URL": base} if base else {}))
    try:
        link = _invitation_link(port)
    finally:
        process.terminate()
        output = process.communicate(timeout=20)[0]
    assert link.startswith(f"{base or f'http://127.0.0.1:{port}'}/join/"), link
    if base is None:
        assert f"TITANPOST_BASE_URL=http://127.0.0.1:{port}" in output, output
