"""The standings in a real browser (chromium; issue 41): a player signs in by mail, reads the
table of the players she plays with, chooses the game and the season with the GET form, makes
a group and adds and removes a friend with its forms; on a phone's width no page scrolls
sideways; in Polish the page speaks Polish."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from sqlmodel import col, select

from app.core.models import OutboxMail
from tests.standings_games import GREAT_RACE, Player, computer, finished_game

if TYPE_CHECKING:
    from tests.browser import LiveServer

pytest_plugins = ["tests.browser"]

DAY = datetime(2026, 5, 1, 20, 0, tzinfo=UTC)


def players() -> tuple[Player, Player, Player]:
    tag = uuid.uuid4().hex[:8]
    return (Player(f"ann-{tag}@example.com", "Ann"), Player(f"bob-{tag}@example.com", "Bob"),
            Player(f"cat-{tag}@example.com", "Cat"))


def sign_in(live_server: LiveServer, page: Any, email: str) -> None:
    """Sign ``page``'s browser in as ``email`` with the link the server mails."""
    page.goto(f"{live_server.url}/signin")
    page.fill("#signin-email", email)
    page.press("#signin-email", "Enter")
    page.wait_for_selector("#signin-sent")
    with live_server.service.session() as s:
        mail = s.exec(select(OutboxMail).where(OutboxMail.kind == "signin",
                                               OutboxMail.recipient == email)
                      .order_by(col(OutboxMail.id).desc())).first()
        assert mail is not None
        token = mail.payload["token"]
    page.goto(f"{live_server.url}/signin/{token}")
    page.click("form button[type=submit]")
    page.wait_for_selector("#signed-in")


def no_sideways_scroll(page: Any) -> None:
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1")


def test_standings_in_a_browser(live_server: LiveServer, browser: Any) -> None:
    ann, bob, cat = players()
    service = live_server.service
    for week, places in enumerate([(1, 2, 3), (2, 1, 3), (1, 3, 2)]):
        finished_game(service, [ann, bob, cat], places, DAY + timedelta(days=7 * week))
    finished_game(service, [ann, bob, computer("strong")], (2, 3, 1), DAY, game=GREAT_RACE)
    context = browser.new_context(viewport={"width": 1200, "height": 900})
    try:
        page = context.new_page()
        page.goto(f"{live_server.url}/standings")
        assert page.locator("#standings-sign-in").is_visible()
        sign_in(live_server, page, ann.email)
        page.click("header.top >> text=Standings")
        rows = page.locator("#table-automatic tr.player")
        assert rows.count() == 3 and "Ann" in rows.first.inner_text()
        assert page.locator("#table-automatic tr.mine").inner_text().startswith("Ann")
        assert bob.email not in page.content()
        # the GET form: The Great Race, then a season of one week
        page.select_option("#standings-game", GREAT_RACE)
        page.click("#standings-choice button[type=submit]")
        page.wait_for_url("**game=great-race**")
        assert page.locator("#table-automatic tr.computer").inner_text().startswith(
            "the computer (strong)")
        page.select_option("#standings-game", "titan-race")
        page.fill("#standings-from", "2026-05-08")
        page.fill("#standings-to", "2026-05-14")
        page.click("#standings-choice button[type=submit]")
        page.wait_for_url("**from=2026-05-08**")
        assert page.locator("#table-automatic tr.player").first.get_attribute("data-games") \
            == "1"
        # a group: made, a friend added and taken out again
        page.fill("#group-name", "Friday")
        page.click("#new-group button[type=submit]")
        page.wait_for_selector("#group-members")
        page.fill("#member-email", bob.email)
        page.click("form:has(#member-email) button[type=submit]")
        page.wait_for_selector(f"[data-member='{bob.email}']")
        page.fill("#member-email", "stranger@example.com")
        page.click("form:has(#member-email) button[type=submit]")
        assert "played no game" in page.locator("[role=alert]").inner_text()
        page.click(f"[data-member='{bob.email}'] button")
        page.wait_for_selector("text=is no longer in the group")
        assert page.locator(f"[data-member='{bob.email}']").count() == 0
        page.click("text=Back to the standings")
        assert page.locator(".standings-table h2", has_text="Group: Friday").count() == 1
    finally:
        context.close()


def test_standings_on_a_phone_and_in_polish(live_server: LiveServer, browser: Any) -> None:
    ann, bob, cat = players()
    finished_game(live_server.service, [ann, bob, cat], (2, 1, 3), DAY)
    context = browser.new_context(viewport={"width": 360, "height": 740}, is_mobile=True,
                                  has_touch=True, locale="pl-PL")
    try:
        page = context.new_page()
        page.goto(f"{live_server.url}/standings")
        assert "zaloguj się przez e-mail" in page.locator("#standings-sign-in").inner_text()
        no_sideways_scroll(page)
        sign_in(live_server, page, ann.email)
        page.goto(f"{live_server.url}/standings")
        assert page.locator("h1").inner_text() == "Ranking"
        assert "2,00" in page.locator("#table-automatic tr.mine").inner_text()
        no_sideways_scroll(page)
        page.fill("#group-name", "Piątki")
        page.click("#new-group button[type=submit]")
        page.wait_for_selector("#group-members")
        assert "Grupa: Piątki" in page.locator("h1").inner_text()
        no_sideways_scroll(page)
    finally:
        context.close()
