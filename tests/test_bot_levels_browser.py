"""The computer's level on /new in a real browser (chromium): shown only for a computer seat, and
chosen with the keyboard on a phone-sized, touch page (issue 25)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tests.browser import LiveServer

pytest_plugins = ["tests.browser"]

PHONE = {"width": 390, "height": 844}


def test_a_level_is_chosen_by_keyboard_on_a_touch_phone(live_server: LiveServer,
                                                         browser: Any) -> None:
    context = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True)
    try:
        page = context.new_page()
        page.goto(f"{live_server.url}/new")
        level = page.locator("select[name=seat2_level]")
        assert not level.is_visible()  # a player's seat has no level
        page.select_option("select[name=seat2_kind]", "computer")
        assert level.is_visible() and level.input_value() == "easy"
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= PHONE["width"], f"the form scrolls sideways ({width}px)"
        level.focus()
        page.keyboard.press("ArrowDown")
        page.keyboard.press("ArrowDown")
        assert level.input_value() == "strong"
        page.fill("input[name=seat0_email]", "ann@example.com")
        page.fill("input[name=seat1_email]", "ben@example.com")
        page.locator("button[type=submit]").last.tap()
        page.wait_for_url("**/setup")
        uid = page.url.split("/games/")[1].split("/")[0]
        seats = live_server.service.state(uid, None)["game"]["seats"]
        assert [seat["level"] for seat in seats] == [None, None, "strong"]
        assert "Computer (strong)" in page.content()
    finally:
        context.close()
