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

from app.core.models import Game
from app.features.push.notifications import message
from tests.apifixtures import human_game

if TYPE_CHECKING:
    from tests.browser import LiveServer

pytest_plugins = ["tests.browser"]

NOTIFICATIONS = ("self.registration.getNotifications().then(found => found.map(n => "
                 "({title: n.title, body: n.body, tag: n.tag, url: n.data && n.data.url})))")
SHOWN = """() => {
  // The titles of the notifications the worker has finished showing, in order. The test reads
  // getNotifications() only once a show has finished: asked while one is still being shown,
  // chromium can take the new notification for one already closed and drop it for good (the
  // push then seemed to show nothing, however long the test polled).
  self.shownTitles = [];
  const show = ServiceWorkerRegistration.prototype.showNotification;
  ServiceWorkerRegistration.prototype.showNotification = function (title, options) {
    return show.call(this, title, options).then((done) => {
      self.shownTitles.push(title);
      return done;
    });
  };
}"""


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
    worker = poll(page, lambda: context.service_workers)[0]
    worker.evaluate(SHOWN)
    assert worker.evaluate(NOTIFICATIONS) == []
    created = human_game(live_server.service, 3)
    with live_server.service.session() as s:
        game = s.exec(select(Game).where(Game.uid == created["game"])).one()
    payload = message(live_server.service.settings, game, "en")
    cdp.send("ServiceWorker.deliverPushMessage",
             {"origin": live_server.url, "registrationId": ours[0]["registrationId"],
              "data": json.dumps(payload)})
    assert poll(page, lambda: worker.evaluate("self.shownTitles")) == ["Your turn"]
    decision = f"{live_server.url}/games/{created['game']}"
    assert worker.evaluate(NOTIFICATIONS) == [
        {"title": "Your turn", "body": payload["body"], "tag": f"titanpost-{created['game']}",
         "url": decision}]

    # a payload naming another site's page is opened as this site's home page instead
    cdp.send("ServiceWorker.deliverPushMessage",
             {"origin": live_server.url, "registrationId": ours[0]["registrationId"],
              "data": json.dumps({"title": "Elsewhere", "url": "https://example.com/x",
                                  "tag": "other"})})
    assert poll(page, lambda: worker.evaluate("self.shownTitles.length > 1"))
    others = [n for n in worker.evaluate(NOTIFICATIONS) if n["tag"] == "other"]
    assert [(n["title"], n["url"]) for n in others] == [("Elsewhere", live_server.url + "/")]


STAND_IN = """
(() => {
  // The browser's push service cannot be reached offline: its subscribe() answers with a
  // subscription of the test's making, and everything after it (the server's key, the page's
  // post with its CSRF token, the stored row) is the real thing.
  let current = null;
  PushManager.prototype.subscribe = function (options) {
    window.pushOptions = options;
    current = {endpoint: %(endpoint)s,
               toJSON: () => ({endpoint: %(endpoint)s, keys: %(keys)s}),
               unsubscribe: () => { current = null; return Promise.resolve(true); }};
    return Promise.resolve(current);
  };
  PushManager.prototype.getSubscription = function () { return Promise.resolve(current); };
})();
"""


def test_the_settings_page_button_stores_and_forgets_this_device(
        context: Any, live_server: LiveServer) -> None:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec

    from app.core.models import PushSubscription, Seat
    from app.features.push.notifications import b64url, vapid_keys
    from app.web.linktokens import make_game_token

    service = live_server.service
    created = human_game(service, 3)
    uid = created["game"]
    with service.session() as s:
        seat = s.exec(select(Seat).join(Game).where(Game.uid == uid, Seat.position == 0)).one()
    point = ec.generate_private_key(ec.SECP256R1()).public_key().public_bytes(
        serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)
    endpoint = "https://192.0.43.10/push/phone"  # (a literal public address: nothing is sent)
    keys = {"p256dh": b64url(point), "auth": b64url(b"0123456789abcdef")}
    page = context.new_page()
    page.add_init_script(STAND_IN % {"endpoint": json.dumps(endpoint), "keys": json.dumps(keys)})
    token = make_game_token(service.settings.secret_key, seat.secret, uid, 0)
    page.goto(f"{live_server.url}/g/{token}")
    page.locator("form button[type=submit]").click()
    page.wait_for_url(f"{live_server.url}/games/{uid}")
    page.goto(f"{live_server.url}/games/{uid}/me")
    page.locator("#push-on").click()
    status = page.locator("#push-status")
    status.filter(has_text="This device will tell you when it is your turn.").wait_for()
    assert page.locator("#push-off").is_visible() and not page.locator("#push-on").is_visible()
    asked = page.evaluate("Array.from(new Uint8Array(window.pushOptions.applicationServerKey))")
    assert b64url(bytes(asked)) == vapid_keys(service.engine).public_key
    with service.session() as s:
        rows = s.exec(select(PushSubscription).where(PushSubscription.seat_id == seat.id)).all()
        assert [(r.endpoint, r.p256dh, r.auth) for r in rows] == [
            (endpoint, keys["p256dh"], keys["auth"])]
    page.locator("#push-off").click()
    status.filter(has_text="Notifications are off for this device.").wait_for()
    with service.session() as s:
        assert not s.exec(select(PushSubscription)
                          .where(PushSubscription.seat_id == seat.id)).all()
