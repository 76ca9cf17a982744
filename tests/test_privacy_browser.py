"""The "My data" page in Chromium, in English and Polish, on a phone-sized window: a browser
signed in by mail finds it from My games, downloads its data, is refused a "Forget me" with a
wrong confirmation, and with the right one is forgotten and signed out; the finished game then
names its seat "a former player" in the page's language."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from sqlmodel import col, select

from app.core.models import OutboxMail
from app.features.signin.signins import ask_link

if TYPE_CHECKING:
    from tests.browser import LiveServer

pytest_plugins = ["tests.browser"]  # (one browser a worker, shared with the other modules)

WORDS = {
    "en": {"locale": "en-GB", "data": "My data", "wrong": "type your address",
           "gone": "You are forgotten", "former": "a former player"},
    "pl": {"locale": "pl-PL", "data": "Moje dane", "wrong": "wpisz swój adres",
           "gone": "Serwer o tobie zapomniał", "former": "ktoś, kto już tu nie gra"},
}


def finished_game(server: LiveServer, email: str) -> str:
    """A game of ``email`` and two computer seats that is over (its player resigned)."""
    svc = server.service
    created = svc.create_game(seats=[{"email": email}, {"bot": True}, {"bot": True}], seed=4,
                              name="Sunday race")
    svc.accept(created["invitations"][0]["invite_token"], name="Ann")
    uid: str = created["game"]
    svc.start(uid, created["creator_token"])
    svc.resign(uid, 0)
    assert svc.state(uid, None)["game"]["status"] == "finished"
    return uid


def sign_in(server: LiveServer, page: Any, email: str) -> None:
    ask_link(server.service, email, "127.0.0.1", "en")
    with server.service.session() as s:
        mail = s.exec(select(OutboxMail).where(OutboxMail.kind == "signin",
                                               OutboxMail.recipient == email)
                      .order_by(col(OutboxMail.id).desc())).first()
        assert mail is not None
        token = mail.payload["token"]
    page.goto(f"{server.url}/signin/{token}")
    with page.expect_navigation():
        page.locator("form button[type=submit]").first.click()


@pytest.mark.parametrize("lang", sorted(WORDS))
def test_the_page_downloads_and_forgets(live_server: LiveServer, browser: Any, lang: str,
                                        tmp_path: Path) -> None:
    words = WORDS[lang]
    email = f"ann.privacy.{lang}@example.com"
    uid = finished_game(live_server, email)
    context = browser.new_context(locale=words["locale"], viewport={"width": 375, "height": 740},
                                  is_mobile=True, has_touch=True, accept_downloads=True)
    context.set_default_timeout(15_000)
    try:
        page = context.new_page()
        sign_in(live_server, page, email)
        with page.expect_navigation():
            page.locator("#my-data-link").click()
        assert words["data"] in page.locator("h1").inner_text()
        assert page.evaluate("document.scrollingElement.scrollWidth <= window.innerWidth")
        with page.expect_download() as downloaded:
            page.locator("#download-json").click()
        data = json.loads(Path(downloaded.value.path()).read_text())
        assert data["address"] == email and uid in data["games"]
        # a wrong confirmation: refused, nothing forgotten
        page.locator("#forget-confirm").fill("someone@example.com")
        with page.expect_navigation() as sent:
            page.locator("#forget-form button").click()
        assert sent.value.status == 400
        assert words["wrong"] in page.locator("#forget-error").inner_text()
        # the right one: forgotten, signed out
        page.locator("#forget-confirm").fill(email)
        with page.expect_navigation():
            page.locator("#forget-form button").click()
        assert "/account/forgotten" in page.url
        assert words["gone"] in page.locator("h1").inner_text()
        assert words["former"] in page.locator("#forgotten").inner_text()
        page.goto(f"{live_server.url}/games")
        assert email not in page.content()
        page.goto(f"{live_server.url}/account/data")
        assert "/signin" in page.url  # (signed out: sent to sign in)
        page.goto(f"{live_server.url}/games/{uid}")
        assert words["former"] in page.content() and email not in page.content()
    finally:
        context.close()
