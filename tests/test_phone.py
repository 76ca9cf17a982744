"""The game page on a 390 px phone and a 1280 px desktop, by touch and by keyboard, and axe-core.

For a race of every registered game (seat 1 a person in the browser, the others the computer;
what differs between games comes from each game's test fixture, tests/gamefixtures.py): at 390
px the board comes first (above the options and the clock), fits the width, and its "close view"
zooms it around the player's own piece; tapping an option shows where it leads with a bar to
confirm it, and the confirmation plays it; the hint says "Tap" ("Dotknij"), not "Point"
("Wskaż"), on a touch screen and "Point" with a mouse, in English and Polish; with the
keyboard alone (Tab, Enter, then Enter or Space) a move is played. At 1280 px the board and the
options sit side by side. axe-core (the ``axe-playwright-python`` package, which carries its own
copy of axe-core: nothing is fetched) finds no serious or critical violation on the home,
new-game, game, log, mail-link and settings pages.

Every screenshot goes to the test's own temporary folder and its path is printed in the
pytest output.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from app.games import GAMES as REGISTERED
from tests.gamefixtures import game_fixture

if TYPE_CHECKING:
    from tests.browser import LiveServer

pytest_plugins = ["tests.browser"]

PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 800}
GAMES = sorted(REGISTERED)
CONFIRM_KEYS = ("Enter", " ")
OPTION = "#composer button[name=option]"
SERIOUS = {"serious", "critical"}


def new_game(server: LiveServer, rules_name: str, language: str = "en") -> str:
    """A started game where seat 0 (a person) is to act, with computers in the other seats."""
    svc = server.service
    created = svc.create_game(
        seats=[{"email": "ann@example.com", "language": language}, {"bot": True}, {"bot": True}],
        seed=3, rules_name=rules_name, name=f"Phone {rules_name}",
    )
    for invitation in created["invitations"]:
        svc.accept(invitation["invite_token"], name="Ann")
    svc.start(created["game"], created["creator_token"])
    uid: str = created["game"]
    assert svc.state(uid, None)["game"]["to_act"] == [0]
    return uid


def open_as_ann(server: LiveServer, page: Any, uid: str) -> None:
    """Open game ``uid`` as seat 0 in ``page``'s browser through the mail's game link."""
    from app.web.links import game_link

    svc = server.service
    page.goto(game_link(svc.settings, svc.link_seat(uid, 0).secret, uid, 0))
    with page.expect_navigation():
        page.locator("form.open button").click()
    assert page.url.endswith(f"/games/{uid}")


def seq(server: LiveServer, uid: str) -> int:
    number: int = server.service.state(uid, None)["seq"]
    return number


def last_input(server: LiveServer, uid: str) -> str:
    moves = server.service.log(uid, 0)["moves"]
    text: str = moves[-1]["input"]
    return text


def shot(page: Any, folder: Path, name: str, capsys: pytest.CaptureFixture[str],
         *, full_page: bool = False) -> None:
    """Save a screenshot in the test's folder and print where (shown by pytest even without -s)."""
    path = folder / f"{name}.png"
    page.screenshot(path=str(path), full_page=full_page)
    assert path.stat().st_size > 0
    with capsys.disabled():
        print(f"\nscreenshot: {path}")


def top(page: Any, selector: str) -> float:
    box = page.locator(selector).first.bounding_box()
    assert box is not None, f"{selector} is not shown"
    value: float = box["y"]
    return value


@pytest.fixture
def phone(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True,
                                  device_scale_factor=2)
    context.set_default_timeout(15_000)
    try:
        yield context.new_page()
    finally:
        context.close()


@pytest.fixture
def desktop(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport=DESKTOP)
    context.set_default_timeout(15_000)
    try:
        yield context.new_page()
    finally:
        context.close()


@pytest.mark.parametrize("rules_name", GAMES)
def test_on_a_phone_the_board_comes_first_and_zooms_to_ones_piece(
    live_server: LiveServer, phone: Any, rules_name: str, tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    uid = new_game(live_server, rules_name)
    fixture = game_fixture(rules_name)
    if fixture.to_the_board is not None:  # (pieces that begin off the board: one put on it)
        fixture.to_the_board(live_server.service, uid)
    open_as_ann(live_server, phone, uid)
    board = top(phone, "#board svg")
    assert board < top(phone, "#composer-card"), "the options come before the board"
    assert board < top(phone, "#clock"), "the clock comes before the board"
    assert board < 844, "the board is not on the first screen"
    width = phone.locator("#board svg").bounding_box()["width"]
    assert width >= 0.85 * PHONE["width"], f"the board is a thumbnail ({width}px wide)"
    assert phone.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    # The hint speaks of tapping on a touch screen, and nothing is left to hovering.
    assert phone.locator(".hint-touch").is_visible()
    assert not phone.locator(".hint-pointer").is_visible()
    shot(phone, tmp_path, f"{rules_name}-phone", capsys)
    # (Chromium takes a full-page capture without the touch emulation: it shows the pointer's
    # hint, not the one a phone shows.)
    shot(phone, tmp_path, f"{rules_name}-phone-full-page", capsys, full_page=True)

    # The close view: the board is larger, scrolled to the player's own piece.
    zoom = phone.locator("#board-zoom")
    assert zoom.is_visible()
    zoom.tap()
    frame = phone.locator("#board").bounding_box()
    zoomed = phone.locator("#board svg").bounding_box()
    assert zoomed["width"] >= 2 * width
    mine = phone.locator("#board").get_attribute("data-mine").split()
    assert mine, "the board does not know the player's pieces"
    piece = phone.locator(", ".join(
        "#board svg " + fixture.piece_selector.format(piece=name) for name in mine
    )).first
    assert piece.count() == 1, "the player's piece is not on the board"
    at = piece.bounding_box()
    scrolled = phone.locator("#board").evaluate(
        "b => [b.scrollLeft, b.scrollWidth - b.clientWidth, b.scrollTop,"
        " b.scrollHeight - b.clientHeight]"
    )
    axes = (("x", "width", *scrolled[:2]), ("y", "height", *scrolled[2:]))
    for start, size, scroll, room in axes:
        middle = at[start] + at[size] / 2
        off = middle - (frame[start] + frame[size] / 2)
        assert frame[start] <= middle <= frame[start] + frame[size], "own piece out of view"
        assert 0 <= middle <= PHONE[size], "own piece off the screen"
        # centred on the piece, unless the board's edge is reached first
        assert (abs(off) <= 0.15 * frame[size] or (off < 0 and scroll <= 1)
                or (off > 0 and scroll >= room - 1)), (start, off, scroll, room)
    assert phone.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    shot(phone, tmp_path, f"{rules_name}-phone-close-view", capsys)
    zoom.tap()
    assert phone.locator("#board svg").bounding_box()["width"] == pytest.approx(width, abs=1)


@pytest.mark.parametrize("rules_name", GAMES)
def test_on_a_phone_a_tapped_option_is_played_once_confirmed(
    live_server: LiveServer, phone: Any, rules_name: str, tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    uid = new_game(live_server, rules_name)
    open_as_ann(live_server, phone, uid)
    options = phone.locator(OPTION)
    option = options.last.get_attribute("value")
    before = seq(live_server, uid)
    options.last.tap()
    # The tap shows where it leads and asks for a confirmation; nothing is played yet.
    phone.wait_for_selector(f'#board[data-previewing="{option}"]')
    assert phone.locator("#peek-bar").is_visible()
    assert phone.locator("#peek-play").get_attribute("value") == option
    assert seq(live_server, uid) == before
    shot(phone, tmp_path, f"{rules_name}-phone-tapped", capsys)
    with phone.expect_navigation():
        phone.locator("#peek-play").tap()
    assert phone.locator(".flash.ok").count() == 1
    assert seq(live_server, uid) > before
    moves = live_server.service.log(uid, 0)["moves"]
    assert any(m["seat"] == 0 and m["input"] == option for m in moves[before:])


@pytest.mark.parametrize("rules_name", GAMES)
def test_the_phone_words_are_polish_in_a_polish_seat(
    live_server: LiveServer, phone: Any, rules_name: str,
) -> None:
    from app.core.i18n import translate

    uid = new_game(live_server, rules_name, language="pl")
    open_as_ann(live_server, phone, uid)
    assert phone.locator("html").get_attribute("lang") == "pl"
    hint = "Tap an option to see where it leads."
    words = {english: translate("pl", english) for english in (hint, "Close view", "Whole board")}
    assert all(polish != english for english, polish in words.items()), words
    assert phone.locator(".hint-touch").inner_text() == words[hint]
    zoom = phone.locator("#board-zoom")
    assert zoom.inner_text() == words["Close view"]
    zoom.tap()
    assert zoom.inner_text() == words["Whole board"]


HINT_START = {("en", "phone"): "Tap an option", ("pl", "phone"): "Dotknij opcji",
              ("en", "desktop"): "Point at an option", ("pl", "desktop"): "Wskaż opcję"}
"""How the board's hint begins as the reader sees it: a touch screen's speaks of tapping (in
Polish "dotknij", never "wskaż", which is pointing), a mouse's of pointing."""


@pytest.mark.parametrize("language", ["en", "pl"])
@pytest.mark.parametrize("viewport", ["phone", "desktop"])
def test_the_hint_says_tap_on_a_touch_phone_and_point_with_a_mouse(
    live_server: LiveServer, request: pytest.FixtureRequest, language: str, viewport: str,
) -> None:
    page = request.getfixturevalue(viewport)
    uid = new_game(live_server, GAMES[0], language=language)
    open_as_ann(live_server, page, uid)
    assert page.evaluate("matchMedia('(hover: none)').matches") == (viewport == "phone")
    # (innerText: the words shown, not those the other kind of screen is given)
    shown = page.locator("#board-caption").evaluate("caption => caption.innerText").strip()
    assert shown.startswith(HINT_START[language, viewport]), shown
    other = "desktop" if viewport == "phone" else "phone"
    assert HINT_START[language, other] not in shown


@pytest.mark.parametrize(("rules_name", "confirm_key"),
                         [(name, CONFIRM_KEYS[index % 2]) for index, name in enumerate(GAMES)])
def test_a_move_is_played_with_the_keyboard_alone(
    live_server: LiveServer, desktop: Any, rules_name: str, confirm_key: str,
) -> None:
    uid = new_game(live_server, rules_name)
    open_as_ann(live_server, desktop, uid)
    before = seq(live_server, uid)
    for _ in range(60):
        desktop.keyboard.press("Tab")
        if desktop.evaluate(f"document.activeElement.matches({OPTION!r})"):
            break
    else:
        pytest.fail("Tab never reaches an option")
    option = desktop.evaluate("document.activeElement.value")
    desktop.keyboard.press("Enter")
    assert desktop.locator("#peek-bar").is_visible()
    assert desktop.evaluate("document.activeElement.id") == "peek-play"
    assert seq(live_server, uid) == before
    # Escape takes the choice back, to the option it came from; Enter asks again.
    desktop.keyboard.press("Escape")
    assert not desktop.locator("#peek-bar").is_visible()
    assert desktop.evaluate("document.activeElement.value") == option
    desktop.keyboard.press("Enter")
    with desktop.expect_navigation():
        desktop.keyboard.press(confirm_key)
    assert seq(live_server, uid) > before
    moves = live_server.service.log(uid, 0)["moves"]
    assert any(m["seat"] == 0 and m["input"] == option for m in moves[before:])


@pytest.mark.parametrize("rules_name", GAMES)
def test_on_a_desktop_the_board_and_options_sit_side_by_side(
    live_server: LiveServer, desktop: Any, rules_name: str, tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    uid = new_game(live_server, rules_name)
    open_as_ann(live_server, desktop, uid)
    board = desktop.locator("#board svg").bounding_box()
    composer = desktop.locator("#composer-card").bounding_box()
    assert composer["x"] >= board["x"] + board["width"], "the options are not beside the board"
    assert board["width"] > 600
    assert top(desktop, "#clock") < board["y"], "the clock card moved on a desktop"
    assert not desktop.locator("#board-zoom").is_visible()
    assert desktop.locator(".hint-pointer").is_visible()
    assert not desktop.locator(".hint-touch").is_visible()
    # A mouse click still plays at once.
    before = seq(live_server, uid)
    desktop.locator(OPTION).first.hover()
    shot(desktop, tmp_path, f"{rules_name}-desktop", capsys, full_page=True)
    with desktop.expect_navigation():
        desktop.locator(OPTION).first.click()
    assert seq(live_server, uid) > before


def serious_violations(page: Any) -> list[str]:
    """axe-core's serious and critical violations on ``page``, one line each (every page of
    every impact: tests/test_axe_every_page.py)."""
    from axe_playwright_python.sync_playwright import Axe

    results = Axe().run(page)
    return [
        f"{v['id']} ({v['impact']}): {v['help']} at "
        + "; ".join(" ".join(node["target"]) for node in v["nodes"][:4])
        for v in results.response["violations"]
        if v["impact"] in SERIOUS
    ]


@pytest.mark.parametrize("rules_name", GAMES)
@pytest.mark.parametrize("viewport", ["phone", "desktop"])
def test_axe_finds_nothing_serious(
    live_server: LiveServer, request: pytest.FixtureRequest, rules_name: str, viewport: str,
) -> None:
    from app.web.links import game_link, option_link

    page = request.getfixturevalue(viewport)
    svc = live_server.service
    uid = new_game(live_server, rules_name)
    open_as_ann(live_server, page, uid)
    option = svc.options(uid, 0)["options"][0]
    link = option_link(svc.settings, svc.link_seat(uid, 0).secret, uid, 0, seq(live_server, uid),
                       option)
    opener = game_link(svc.settings, svc.link_seat(uid, 0).secret, uid, 0)
    names = {link: "the mail's option link", opener: "the mail's game link"}
    problems = []
    for address in ("/", f"/new?game={rules_name}", f"/games/{uid}", f"/games/{uid}/log", link,
                    opener, f"/games/{uid}/me"):
        page.goto(address if address.startswith("http") else live_server.url + address)
        name = names.get(address, address)
        problems += [f"{name}: {violation}" for violation in serious_violations(page)]
    # The game page again with its close view on and an option waiting for its confirmation.
    page.goto(f"{live_server.url}/games/{uid}")
    if page.locator("#board-zoom").is_visible():
        page.locator("#board-zoom").click()
    page.locator(OPTION).first.focus()
    page.keyboard.press("Enter")
    assert page.locator("#peek-bar").is_visible()
    problems += [f"the game page, zoomed, confirming: {violation}"
                 for violation in serious_violations(page)]
    assert not problems, "\n".join(problems)
