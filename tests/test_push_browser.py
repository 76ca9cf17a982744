"""The installable site and its service worker in a real browser (Playwright and chromium).

The page registers the worker at the site's root; chromium finds the manifest valid and the
site installable (no installability errors); a push delivered to the worker through the Chrome
DevTools Protocol (as a push service would deliver it) shows a notification whose click opens
the game page: the decision's address the server put in the payload."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from sqlmodel import select

from app.models import Game
from app.push import message
from tests.apifixtures import human_game

if TYPE_CHECKING:
    from tests.browser import LiveServer

pytest_plugins = ["tests.browser"]

NOTIFICATIONS = ("self.registration.getNotifications().then(found => found.map(n => "
                 "({title: n.title, body: n.body, tag: n.tag, url: n.data && n.data.url})))")


@pytest.fixture
def context(browser: Any, chromium_path: Path, live_server: LiveServer,
            tmp_path: Path) -> Iterator[Any]:
    """A browser profile on disk: chromium installs no web app from an incognito context
    (Playwright's ``new_context``), so its installability is asked of a persistent one."""
    from tests.browser import CHROMIUM_ARGS  # (the plugin's module, imported by now)

    made = browser.browser_type.launch_persistent_context(
        str(tmp_path / "profile"), executable_path=str(chromium_path), args=CHROMIUM_ARGS,
        headless=True)
    made.set_default_timeout(15_000)
    made.grant_permissions(["notifications"], origin=live_server.url)
    try:
        yield made
    finally:
        made.close()


def poll(page: Any, read: Any, seconds: float = 10.0) -> Any:
    """``read()`` once it answers something, else its last answer after ``seconds`` (waiting
    in the page, so that Playwright meanwhile takes in the browser's events)."""
    deadline = time.monotonic() + seconds
    found = read()
    while not found and time.monotonic() < deadline:
        page.wait_for_timeout(100)
        found = read()
    return found


def test_the_worker_registers_the_site_is_installable_and_a_push_opens_the_game(
        context: Any, live_server: LiveServer) -> None:
    page = context.new_page()
    registrations: list[dict[str, Any]] = []
    cdp = context.new_cdp_session(page)
    cdp.on("ServiceWorker.workerRegistrationUpdated",
           lambda event: registrations.extend(event["registrations"]))
    page.goto(live_server.url + "/")
    scope = page.evaluate("navigator.serviceWorker.ready.then(r => r.scope)")
    assert scope == live_server.url + "/"

    manifest = cdp.send("Page.getAppManifest")
    assert manifest["url"] == live_server.url + "/manifest.webmanifest"
    assert manifest["errors"] == []
    assert cdp.send("Page.getInstallabilityErrors")["installabilityErrors"] == []

    cdp.send("ServiceWorker.enable")
    ours = poll(page, lambda: [r for r in registrations
                         if r["scopeURL"] == live_server.url + "/" and not r["isDeleted"]])
    assert ours, registrations
    created = human_game(live_server.service, 3)
    with live_server.service.session() as s:
        game = s.exec(select(Game).where(Game.uid == created["game"])).one()
    payload = message(live_server.service.settings, game, "en")
    cdp.send("ServiceWorker.deliverPushMessage",
             {"origin": live_server.url, "registrationId": ours[0]["registrationId"],
              "data": json.dumps(payload)})
    worker = poll(page, lambda: context.service_workers)[0]
    shown = poll(page, lambda: worker.evaluate(NOTIFICATIONS))
    decision = f"{live_server.url}/games/{created['game']}"
    assert shown == [{"title": "Your turn", "body": payload["body"],
                      "tag": f"titanpost-{created['game']}", "url": decision}]

    # a payload naming another site's page is opened as this site's home page instead
    cdp.send("ServiceWorker.deliverPushMessage",
             {"origin": live_server.url, "registrationId": ours[0]["registrationId"],
              "data": json.dumps({"title": "Elsewhere", "url": "https://example.com/x",
                                  "tag": "other"})})
    others = poll(page, lambda: [n for n in worker.evaluate(NOTIFICATIONS) if n["tag"] == "other"])
    assert [n["url"] for n in others] == [live_server.url + "/"]
