"""The web pages in a real browser: Playwright drives Debian's chromium against a live server.

Two players in two browser contexts (two separate cookie jars) and one computer player: the
first creates the game, both join from their invitation links, the creator starts it, and they
play through the turn composer, each in their own browser whenever the service says the
decision is theirs. The board SVG must show every Titan on the space the service state gives,
and the dice on the table. Screenshots of the game page on a desktop and on a 390 px phone go to
/tmp (``titanpost-desktop.png``, ``titanpost-phone.png``, ``titanpost-phone-preview.png``,
and the other pages: ``titanpost-new-phone.png``, ``titanpost-setup.png``,
``titanpost-replay.png``, ``titanpost-desktop-preview.png`` while an option is pointed at).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from tests.browser import LiveServer

pytest_plugins = ["tests.browser"]

SHOTS = Path("/tmp")
DESKTOP = {"width": 1280, "height": 900}
PHONE = {"width": 390, "height": 844}
TURNS = 8


@pytest.fixture
def contexts(browser: Any) -> Iterator[dict[str, Any]]:
    made = {
        "alice": browser.new_context(viewport=DESKTOP),
        "bob": browser.new_context(viewport=DESKTOP),
        "watcher": browser.new_context(viewport=DESKTOP),
    }
    for context in made.values():
        context.set_default_timeout(15_000)
    try:
        yield made
    finally:
        for context in made.values():
            context.close()


def spectator_view(server: LiveServer, uid: str) -> dict[str, Any]:
    view: dict[str, Any] = server.service.state(uid, None)["view"]
    return view


def to_act(server: LiveServer, uid: str) -> list[int]:
    acting: list[int] = server.service.state(uid, None)["game"]["to_act"]
    return acting


def check_board(page: Any, view: dict[str, Any], *, game_page: bool = True) -> None:
    """The board SVG on ``page`` shows each Titan where ``view`` says, and its dice."""
    board = page.locator("#board svg")
    assert board.count() == 1
    for titan, info in view["titans"].items():
        token = page.locator(f'#board svg g.titan[data-titan="{titan}"]')
        if info["space"] is None:
            assert token.count() == 0, f"{titan} has not started but is drawn"
        else:
            assert token.count() == 1, f"{titan} is not on the board"
            assert token.get_attribute("data-space") == info["space"], titan
    dice = page.locator("#board svg g.die")
    assert [dice.nth(i).get_attribute("data-colour") for i in range(dice.count())] == view["dice"]
    if not game_page:
        return
    table_dice = page.locator("#table-dice .die")
    assert [
        table_dice.nth(i).get_attribute("data-colour") for i in range(table_dice.count())
    ] == view["dice"]


def choose(options: list[str]) -> str:
    """A move when there is one (so the Titans travel), else the first option."""
    return next((o for o in options if o.startswith("move ")), options[0])


def test_create_join_play_and_check_the_board(
    live_server: LiveServer, contexts: dict[str, Any], browser: Any
) -> None:
    server = live_server
    alice = contexts["alice"].new_page()
    bob = contexts["bob"].new_page()

    # Alice creates a game: two players and the computer.
    alice.goto(f"{server.url}/new")
    alice.screenshot(path=str(SHOTS / "titanpost-new.png"), full_page=True)
    alice.fill("input[name=name]", "Browser race")
    alice.fill("input[name=seat0_email]", "alice@example.com")
    alice.fill("input[name=seat1_email]", "bob@example.com")
    alice.select_option("select[name=seat2_kind]", "computer")
    alice.check("input[name=my_seat][value='']")  # (both join by their links, below)
    alice.click("button[type=submit]")
    alice.wait_for_url("**/setup")
    uid = alice.url.split("/games/")[1].split("/")[0]
    assert alice.locator("#creator-token").input_value()
    links = {
        int(alice.locator(".invite-link").nth(i).get_attribute("data-seat") or -1):
            alice.locator(".invite-link").nth(i).input_value()
        for i in range(alice.locator(".invite-link").count())
    }
    assert sorted(links) == [0, 1]
    alice.screenshot(path=str(SHOTS / "titanpost-setup.png"), full_page=True)
    assert all(link.startswith(f"{server.url}/join/") for link in links.values())

    # Both join from their invitation links, each in their own browser.
    for page, position, name in ((alice, 0, "Alice"), (bob, 1, "Bob")):
        page.goto(links[position])
        assert "invited" in page.locator("h1").inner_text()
        page.fill("input[name=name]", name)
        with page.expect_navigation():
            page.click("#accept-button")
        assert f"seat {position + 1}" in page.locator(".status-line").inner_text()

    # Alice starts the race from the set-up page.
    alice.goto(f"{server.url}/games/{uid}/setup")
    with alice.expect_navigation():
        alice.click("#start-button")
    assert server.service.state(uid, None)["game"]["status"] == "active"

    pages = {0: alice, 1: bob}
    previews_checked = 0
    for _ in range(TURNS):
        acting = to_act(server, uid)
        assert len(acting) == 1 and acting[0] in pages, acting
        position = acting[0]
        page = pages[position]
        other = pages[1 - position]
        page.goto(f"{server.url}/games/{uid}")
        other.goto(f"{server.url}/games/{uid}")
        assert other.locator("#composer").count() == 0, "the composer shows for the wrong seat"
        assert other.locator(".waiting").count() == 1
        buttons = page.locator("#composer button[name=option]")
        options = [buttons.nth(i).get_attribute("value") or "" for i in range(buttons.count())]
        legal = server.service.options(uid, position)
        assert options == legal["options"]
        option = choose(options)
        button = page.locator(f'#composer button[name=option][value="{option}"]')

        # Where it leads: pointing at the option shows the board after it, outlined.
        after = server.service.preview(uid, position, option)
        if after is not None and option.startswith("move "):
            titan = legal["pending"]["titan"]
            space = after["titans"][titan]["space"]
            button.hover()
            page.wait_for_selector(f'#board[data-previewing="{option}"]')
            assert page.locator(
                f'#board svg polygon.highlight[data-space="{space}"]'
            ).count() == 1
            assert page.locator(
                f'#board svg g.titan[data-titan="{titan}"]'
            ).get_attribute("data-space") == space
            assert "Preview after" in page.locator("#board-caption").inner_text()
            if previews_checked == 0:
                page.screenshot(path=str(SHOTS / "titanpost-desktop-preview.png"))
            previews_checked += 1

        seq_before = legal["seq"]
        with page.expect_navigation():
            button.click()
        assert "Done" in page.locator(".flash.ok").first.inner_text()
        assert server.service.state(uid, None)["seq"] > seq_before
        check_board(page, spectator_view(server, uid))

    assert previews_checked >= 2
    # Every Titan that has started is where the service says, in both browsers.
    view = spectator_view(server, uid)
    assert sum(1 for info in view["titans"].values() if info["space"]) >= 2
    for page in pages.values():
        page.goto(f"{server.url}/games/{uid}")
        check_board(page, view)
        assert page.locator("#hand").count() == 1
        assert page.locator("#log tbody tr").count() > 0

    # A spectator sees the board and the log, but no hand and no options.
    watcher = contexts["watcher"].new_page()
    watcher.goto(f"{server.url}/games/{uid}")
    check_board(watcher, view)
    assert watcher.locator("#composer").count() == 0
    assert watcher.locator("#hand").count() == 0
    assert "spectator" in watcher.locator(".status-line").inner_text()

    # The page on a desktop and on a phone (the player whose turn it is).
    position = to_act(server, uid)[0]
    page = pages[position]
    page.goto(f"{server.url}/games/{uid}")
    page.screenshot(path=str(SHOTS / "titanpost-desktop.png"), full_page=True)
    phone_context = browser.new_context(
        viewport=PHONE,
        storage_state=contexts["alice" if position == 0 else "bob"].storage_state(),
        is_mobile=True,
        has_touch=True,
        device_scale_factor=2,
    )
    try:
        phone = phone_context.new_page()
        phone.goto(f"{server.url}/games/{uid}")
        width = phone.evaluate("document.documentElement.scrollWidth")
        assert width <= PHONE["width"], f"the phone page scrolls sideways ({width}px)"
        check_board(phone, spectator_view(server, uid))
        phone.screenshot(path=str(SHOTS / "titanpost-phone.png"), full_page=True)
        # On a touch screen: tap "preview", look at the board, then play it from the bar.
        first = phone.locator("#composer .opt").first
        option = first.get_attribute("data-option")
        first.locator(".peek").tap()
        phone.wait_for_selector(f'#board[data-previewing="{option}"]')
        assert phone.locator("#peek-bar").is_visible()
        phone.screenshot(path=str(SHOTS / "titanpost-phone-preview.png"))
        seq_before = server.service.state(uid, None)["seq"]
        with phone.expect_navigation():
            phone.locator("#peek-play").tap()
        phone.wait_for_selector(".flash.ok")
        assert server.service.state(uid, None)["seq"] > seq_before
    finally:
        phone_context.close()


def test_new_game_page_fits_a_phone(live_server: LiveServer, browser: Any) -> None:
    context = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True,
                                  device_scale_factor=2)
    try:
        page = context.new_page()
        page.goto(f"{live_server.url}/new")
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= PHONE["width"], f"the form scrolls sideways ({width}px)"
        # Grand Slam's extra circuits appear only for Grand Slam
        assert not page.locator("select[name=circuit1]").is_visible()
        page.check("input[name=variant][value=grand-slam]")
        assert page.locator("select[name=circuit1]").is_visible()
        page.screenshot(path=str(SHOTS / "titanpost-new-phone.png"), full_page=True)
    finally:
        context.close()


def test_admin_replay_steps_in_the_browser(live_server: LiveServer, browser: Any) -> None:
    from tests.browser import ADMIN_TOKEN

    svc = live_server.service
    created = svc.create_game(seats=[{"bot": True}] * 3, seed=3, name="Computers only")
    svc.start(created["game"], created["creator_token"])
    uid = created["game"]
    steps = svc.replay(uid)["steps"]
    context = browser.new_context(viewport=DESKTOP)
    try:
        page = context.new_page()
        page.goto(f"{live_server.url}/admin/replay/{uid}?step=5")
        assert "/admin/login" in page.url
        page.fill("input[name=token]", ADMIN_TOKEN)
        page.click("button[type=submit]")
        page.wait_for_url(f"**/admin/replay/{uid}?step=5")
        for number in (5, 6, 7):
            assert page.locator("#move-input").inner_text() == steps[number]["move"]["input"]
            check_board(page, steps[number]["view"], game_page=False)
            with page.expect_navigation():
                page.click("#next")
            assert page.url.endswith(f"step={number + 1}")
        with page.expect_navigation():
            page.keyboard.press("ArrowLeft")
        assert page.url.endswith("step=7")
        page.screenshot(path=str(SHOTS / "titanpost-replay.png"), full_page=True)
        with page.expect_navigation():
            page.click("#last")
        assert page.url.endswith(f"step={len(steps) - 1}")
        assert page.locator("g.winner").count() == 1
    finally:
        context.close()


def test_the_api_docs_page_shows_the_operations(live_server: LiveServer, browser: Any) -> None:
    """/api/docs renders the API's operations with this server's Swagger UI, loading nothing
    from another host (README: "the API and its documentation at /api/docs")."""
    page = browser.new_page()
    elsewhere: list[str] = []
    page.on("request", lambda request: elsewhere.append(request.url)
            if not request.url.startswith((live_server.url, "data:")) else None)
    try:
        page.goto(f"{live_server.url}/api/docs")
        page.locator(".opblock").first.wait_for(timeout=15000)
        assert page.locator(".opblock").count() > 20
        assert "Unable to render" not in page.content()
    finally:
        page.close()
    assert elsewhere == []
