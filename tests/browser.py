"""Fixtures for the browser tests: Debian's chromium driven by Playwright, and a real server.

``chromium_path`` is Debian's ``/usr/bin/chromium``; where it is missing the tests fail with
the command that installs it (they install nothing themselves; ``.ci/run`` does for CI).
``live_server`` serves the app with werkzeug in a thread on 127.0.0.1 (a free port) over a
migrated SQLite database in a temporary folder, and ``browser`` is one headless chromium for
the session. Test modules load these with ``pytest_plugins = ["tests.browser"]``.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.netutil import serve_in_thread

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
ADMIN_TOKEN = "admin-token-for-the-browser-tests-0123"


def ensure_chromium() -> Path:
    """The path of Debian's chromium; where it is missing the tests fail with the command to
    run (tests install no packages, not even as root: .ci/run installs it for CI)."""
    if CHROMIUM.exists():
        return CHROMIUM
    pytest.fail(
        f"{CHROMIUM} is missing: install Debian's chromium package with "
        "'apt-get install -y chromium' (as root, or with sudo) and run the tests again"
    )


@pytest.fixture(scope="session")
def chromium_path() -> Path:
    return ensure_chromium()


@dataclass
class LiveServer:
    """The app served over HTTP: its address, the app and its game service."""

    url: str
    app: Any

    @property
    def service(self) -> Any:
        return self.app.extensions["titanpost.service"]


@pytest.fixture(scope="session")
def live_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    from werkzeug.serving import make_server

    from app import create_app
    from app.core.config import Settings
    from app.core.migrate import upgrade

    folder = tmp_path_factory.mktemp("live")
    database_url = f"sqlite:///{folder / 'titanpost-browser.db'}"
    upgrade(database_url)
    holder: dict[str, Any] = {}

    def dispatch(environ: dict[str, Any], start_response: Any) -> Any:
        return holder["app"](environ, start_response)

    # Bind first (port 0: a free port), then build the app knowing its own address.
    server = make_server("127.0.0.1", 0, dispatch, threaded=True)
    url = f"http://127.0.0.1:{server.port}"
    app = create_app(
        Settings.from_env(
            {
                "TITANPOST_DATABASE_URL": database_url,
                "TITANPOST_ENV": "test",
                "TITANPOST_BASE_URL": url,
                "TITANPOST_ADMIN_TOKEN": ADMIN_TOKEN,
            }
        )
    )
    holder["app"] = app
    thread = serve_in_thread(server, "live-server")
    try:
        yield LiveServer(url, app)
    finally:
        server.shutdown()
        thread.join(timeout=10)
        app.extensions["titanpost.service"].engine.dispose()


def join_from_invitations(url: str, pages: list[Any], invitations: list[dict[str, Any]]) -> None:
    """Each page takes the seat of its invitation (``invitations`` in order, those left over
    untaken) on the server at ``url``, as a player does: the join page, its accept button, and
    the game page it leads to."""
    for page, invitation in zip(pages, invitations, strict=False):
        page.goto(f"{url}/join/{invitation['invite_token']}")
        page.click("#accept-button")
        page.wait_for_url("**/games/*")


@pytest.fixture(scope="session")
def browser(chromium_path: Path) -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(
            executable_path=str(chromium_path), args=CHROMIUM_ARGS, headless=True
        )
        try:
            yield launched
        finally:
            launched.close()
