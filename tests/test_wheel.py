"""A wheel install works: the package is built as ``python3 -m pip install .`` builds it,
installed into a fresh virtual environment, and its ``titanpost`` command, run from a folder
outside the checkout, migrates a database, serves pages, renders mails and plays a demo: all
of which read the templates, migrations, circuits and catalogues the wheel must carry.

The environment is made without the system's site-packages and borrows its dependencies from
the environment running the tests, a virtual environment or a system interpreter alike: the
running interpreter's site folders are listed in a ``.pth`` file, which puts them after the new
environment's own site-packages, so ``app`` and ``cli`` are the wheel's (and the checkout's
editable install, started by a ``.pth`` file of a borrowed folder, is never started). Nothing is
downloaded but the build backend, which pip takes from its package index or its cache; where it
reaches neither the test is skipped and says so; with ``TITANPOST_TEST_WHEEL=required`` (set by
``.ci/run``) it fails instead, so that CI cannot pass without having run it. ``-m "not wheel"``
leaves it out. One SQLite database is enough here: what is checked is the packaging, not the
database.
"""

from __future__ import annotations

import json
import os
import shutil
import site
import sqlite3
import subprocess
import sys
import urllib.error
import urllib.request
import venv
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from app.core import migrate
from tests.netutil import free_port, wait_until_serving

ROOT = Path(__file__).resolve().parent.parent
REQUIRED = os.environ.get("TITANPOST_TEST_WHEEL", "") == "required"
BACKEND_UNREACHABLE = ("No matching distribution found", "Could not find a version")
"""What pip says when it cannot get the build backend (no network, nothing cached)."""
NOT_SOURCE = shutil.ignore_patterns(".git", "build", "dist", "*.egg-info", "__pycache__",
                                    ".*cache", ".hypothesis", ".venv", ".benchmarks", "*.db")
"""What a checkout holds beyond its source: version control, build outputs and caches."""

pytestmark = pytest.mark.wheel


@dataclass
class Installed:
    """The wheel installed in a virtual environment, and a place outside the checkout to run
    its command from, with its own database, client file and server address."""

    venv: Path
    workdir: Path
    env: dict[str, str]

    @property
    def python(self) -> Path:
        return self.venv / "bin" / "python"

    def run(self, *args: str) -> str:
        """Run the installed ``titanpost`` command; its output, or the test fails with it."""
        done = subprocess.run([str(self.venv / "bin" / "titanpost"), *args], cwd=self.workdir,
                              env=self.env, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, f"titanpost {' '.join(args)}:\n{done.stdout}{done.stderr}"
        return done.stdout

    def outbox(self) -> list[tuple[int, str, str]]:
        """The outbox rows (id, kind, recipient), oldest first."""
        with sqlite3.connect(self.workdir / "titanpost.db") as db:
            return list(db.execute("SELECT id, kind, recipient FROM outbox ORDER BY id"))


def _build_wheel(source: Path, into: Path) -> Path:
    """The wheel of the checkout, built by pip as ``pip install .`` builds it, from a copy
    without the checkout's build outputs (setuptools builds in ``build/`` and never empties it:
    a wheel built there could hold files left by an earlier build)."""
    shutil.copytree(ROOT, source, ignore=NOT_SOURCE)
    done = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--disable-pip-version-check",
         "-w", str(into), str(source)],
        capture_output=True, text=True, timeout=300)
    output = done.stdout + done.stderr
    unreachable = [line.strip() for line in output.splitlines()
                   if any(words in line for words in BACKEND_UNREACHABLE)]
    if done.returncode != 0 and unreachable:
        reason = ("pip could not get the build backend from a package index or its cache: "
                  + unreachable[-1])
        if REQUIRED:
            pytest.fail(f"{reason} (TITANPOST_TEST_WHEEL=required)")
        pytest.skip(reason)
    assert done.returncode == 0, output
    (wheel,) = into.glob("titanpost-*.whl")
    return wheel


def _running_site_folders() -> list[str]:
    """Where the interpreter running the tests finds its installed packages (and pip)."""
    folders = site.getsitepackages()
    if site.ENABLE_USER_SITE:
        folders.append(site.getusersitepackages())
    return [folder for folder in folders if Path(folder).is_dir()]


def _install(wheel: Path, target: Path) -> None:
    """A fresh virtual environment with the wheel in it, its dependencies borrowed from the
    running environment (see the module documentation; nothing fetched: ``--no-deps
    --no-index``)."""
    venv.create(target, system_site_packages=False, with_pip=False, symlinks=True)
    python = str(target / "bin" / "python")
    purelib = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        capture_output=True, text=True, check=True).stdout.strip()
    # a .pth file's lines are added to sys.path after the folder that holds it
    Path(purelib, "borrowed.pth").write_text("".join(f"{folder}\n"
                                                     for folder in _running_site_folders()))
    # --ignore-installed: the borrowed folders hold the checkout's own (editable) install,
    # which pip must neither take for this one nor uninstall
    done = subprocess.run(
        [python, "-m", "pip", "install", "--no-deps", "--no-index", "--ignore-installed",
         "--disable-pip-version-check", "--quiet", str(wheel)],
        capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.fixture
def installed(tmp_path: Path) -> Installed:
    target = tmp_path / "venv"
    _install(_build_wheel(tmp_path / "source", tmp_path / "dist"), target)
    workdir = tmp_path / "elsewhere"
    workdir.mkdir()
    # Not the checkout's code: no PYTHONPATH (a test run may set one), none of our settings.
    env = {k: v for k, v in os.environ.items()
           if k != "PYTHONPATH" and not k.startswith("TITANPOST_")}
    env |= {
        "TITANPOST_DATABASE_URL": f"sqlite:///{workdir / 'titanpost.db'}",
        "TITANPOST_ENV": "test",
        "TITANPOST_BASE_URL": f"http://127.0.0.1:{free_port()}",
        "TITANPOST_CONFIG": str(workdir / "client.json"),
    }
    return Installed(target, workdir, env)


@contextmanager
def serving(installed: Installed) -> Iterator[str]:
    """``titanpost serve`` of the wheel on the environment's address; yields that address."""
    base = installed.env["TITANPOST_BASE_URL"]
    log_path = installed.workdir / "server.log"
    with log_path.open("w") as log:
        proc = subprocess.Popen(
            [str(installed.venv / "bin" / "titanpost"), "serve", "--no-scheduler",
             "--port", base.rsplit(":", 1)[1]],
            cwd=installed.workdir, env=installed.env, stdout=log, stderr=subprocess.STDOUT)
    try:
        wait_until_serving(base, proc, log_path)
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def page(url: str) -> str:
    """The page at ``url``, which must answer 200."""
    with urllib.request.urlopen(url, timeout=30) as answer:
        assert answer.status == 200, url
        text: str = answer.read().decode()
        return text


def test_the_installed_wheel_serves_mails_and_plays(installed: Installed) -> None:
    where = subprocess.run(
        [str(installed.python), "-c",
         "import app, cli; from app.core.data import data_folder; "
         "print(app.__file__, cli.__file__, data_folder('templates'), "
         "data_folder('migrations'))"],
        cwd=installed.workdir, env=installed.env, capture_output=True, text=True)
    assert where.returncode == 0, where.stderr
    site = str(installed.venv.resolve())
    for path in where.stdout.split():
        assert str(Path(path).resolve()).startswith(site), where.stdout  # not the checkout's

    assert installed.run("db", "upgrade").strip().endswith(f"at revision {migrate.head()}")
    # seeded, so that each game's first decision is Ann's and of a known kind
    race = json.loads(installed.run("admin", "new-game", "--seat", "ann@example.org",
                                    "--seat", "bob@example.org", "--bot", "--seed", "1",
                                    "--json"))
    great = json.loads(installed.run("admin", "new-game", "--game", "great-race",
                                     "--seat", "ann@example.org", "--bot", "--language", "pl",
                                     "--seed", "1", "--json"))
    with serving(installed) as base:
        for game in (race, great):
            installed.run("login", game["invitations"][0]["link"], "--name", "Ann")
            installed.run("admin", "start", game["game"], "--fill-with-bots")
        assert "Ann" in installed.run("show", race["game"][:8])

        assert "Titan Post" in page(f"{base}/")
        assert "Ann" in page(f"{base}/games/{race['game']}")
        assert "Ann" in page(f"{base}/games/{great['game']}")
        # in Polish through the packaged catalogue
        assert "Race przez e-mail" in page(f"{base}/games/{great['game']}?lang=pl")
        assert "bob@example.org" in page(f"{base}/join/{race['invitations'][1]['invite_token']}")
        mails = installed.outbox()
        assert page(f"{base}/dev/mail").count("/dev/mail/") >= len(mails)
        # each game's first decision mailed to Ann (Titan Race: pick a Titan; the Great
        # Race: the bivouac's card, in Polish), its board picture inline
        decisions = [mail for mail in mails if mail[1] in ("pick", "take")]
        assert [(kind, to) for _, kind, to in decisions] == [
            ("pick", "ann@example.org"), ("take", "ann@example.org")], mails
        for mail_id, _, _ in decisions:
            assert "ann@example.org" in page(f"{base}/dev/mail/{mail_id}")
            assert "Content-Type: image/png" in page(f"{base}/dev/mail/{mail_id}.eml")
        assert "Biwak: weź jedną z wyłożonych kart" in page(
            f"{base}/dev/mail/{decisions[1][0]}/html")

    assert "wins after" in installed.run("engine", "demo", "--seed", "1", "--every", "end")
    # every command is imported only when run (cli/lazy.py): each one's module is in the wheel
    assert "verify-fair" in installed.run("--help")
    loaded = subprocess.run([str(installed.python), "-c", EVERY_COMMAND], cwd=installed.workdir,
                            env=installed.env, capture_output=True, text=True, timeout=120)
    assert loaded.returncode == 0, loaded.stderr
    assert int(loaded.stdout) >= 40, loaded.stdout


EVERY_COMMAND = """
import click
from cli.main import main
def count(group):
    context = click.Context(group)
    commands = [group.get_command(context, name) for name in group.list_commands(context)]
    return sum(count(c) if isinstance(c, click.Group) else 1 for c in commands)
print(count(main))
"""
"""Loads every ``titanpost`` command (a missing module fails) and prints how many there are."""
