"""No page and no mail scrolls sideways on a phone, and every control is big enough to tap
(issue 40).

At 320, 390 and 768 CSS px wide (one touch-screen browser context per width), every page of every
registered game in English and Polish is opened as a player (who also created the games), a
spectator and the admin, and every kind of mail of every game is shown as its HTML part. In each:
the document is no wider than the window (``scrollWidth <= innerWidth``), and every visible
link, button, field, list and summary is at least 24x24 CSS px (WCAG 2.2's target size; a link
inside running text is exempt, as WCAG exempts it). Where a page shows a board picture with a
side panel (the game page, the admin's replay), every text of the panel it shows is at least 11
CSS px as shown, and so is every text of the panel's facts as HTML; at every width swept, the
panel's facts are shown one way or the other (a narrow page shows the picture's boards alone and
the facts as HTML under them). On a game page at 320 and 390 px no table scrolls sideways inside
its scrolling region (``.table-wrap``): The Great Race's crews table shows each crew as a card
of labelled lines there. Every list (``<select>``) shows each option's words whole when it is
chosen. The new-game page is at most 2,000 CSS px tall at 390 px (each game, each language).

The pages come from the app's own routes (``app.url_map``): each GET route is either opened
(:data:`tests.phone_sweep.PAGE_ROUTES`) or left out with its reason
(:data:`tests.phone_sweep.LEFT_OUT`), and a new page route fails the first test until it is one
or the other. The games are set up once per game and language (tests/phone_sweep.py).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from sqlmodel import col, select

from app.core.models import OutboxMail, Seat
from app.games import GAMES
from app.mail.render import MailRenderer
from tests.phone_sweep import LEFT_OUT, MEASURE, PAGE_ROUTES, Site, is_page_route, set_up

if TYPE_CHECKING:
    from tests.browser import LiveServer

pytest_plugins = ["tests.browser"]

WIDTHS = (320, 390, 768)
LANGUAGES = ("en", "pl")
ROLES = ("player", "spectator", "admin")
TARGET = 24
PANEL_TEXT = 11
PHONE = 390
NEW_GAME_HEIGHT = 2000
"""The new-game page at most this tall at a phone's width (CSS px; issue 40 found 3,300): the
clock's settings and each seat's time zone and quiet hours folded away, the empty seats short."""
"""On a game page no table scrolls sideways at a phone's width (at most this wide): the
players' or crews' table, the results, the clock's and the log's tables are read whole. Other
pages' tables may scroll (My games, the admin's lists: many columns, read on a larger screen)."""


def test_every_page_route_is_swept_or_left_out_with_its_reason(tmp_path: Path) -> None:
    from app import create_app
    from app.core.config import Settings

    app = create_app(Settings.from_env({
        "TITANPOST_DATABASE_URL": f"sqlite:///{tmp_path / 'routes.db'}",
        "TITANPOST_ENV": "test"}))
    pages = {rule.rule for rule in app.url_map.iter_rules()
             if "GET" in (rule.methods or ()) and is_page_route(rule.rule)}
    known = set(PAGE_ROUTES) | set(LEFT_OUT)
    assert pages - known == set(), f"page routes the sweep does not know: {pages - known}"
    assert known - pages == set(), f"routes the sweep knows that are gone: {known - pages}"


@pytest.fixture(scope="module")
def sites(live_server: LiveServer) -> list[Site]:
    from tests.browser import ADMIN_TOKEN

    return [set_up(live_server, game, lang, ADMIN_TOKEN)
            for game in sorted(GAMES) for lang in LANGUAGES]


def _context(browser: Any, width: int) -> Any:
    context = browser.new_context(viewport={"width": width, "height": 800}, is_mobile=True,
                                  has_touch=True, device_scale_factor=1)
    context.set_default_timeout(20_000)
    return context


def _problems(found: dict[str, Any], width: int, where: str, *, board: bool) -> list[str]:
    problems = []
    if found["inner"] != width or found["scroll"] > found["inner"]:
        problems.append(f"{where}: {max(found['scroll'], found['inner'])} px wide at {width} px"
                        f" ({'; '.join(found['wide'])})")
    problems += [f"{where}: smaller than {TARGET}x{TARGET}: {item}" for item in found["small"]]
    panel = found["panel"]
    if board and panel["marked"]:
        problems += [f"{where}: the board's side panel {kind} text is {shown['size']:.1f} px "
                     f"({shown['text']!r})" for kind, shown in (("picture", panel["svg"]),
                                                                ("HTML", panel["html"]))
                     if shown is not None and shown["size"] < PANEL_TEXT]
        if panel["svg"] is None and panel["html"] is None:
            problems.append(f"{where}: the board's side panel is hidden, its facts nowhere")
    problems += [f"{where}: a list would cut an option: {item}" for item in found["cut"]]
    if found.get("game") and width <= PHONE:
        problems += [f"{where}: a table scrolls sideways: {table}" for table in found["scrolling"]]
    return problems


@pytest.mark.parametrize("width", WIDTHS)
def test_no_page_scrolls_sideways_and_every_target_is_big_enough(
    live_server: LiveServer, browser: Any, sites: list[Site], width: int,
) -> None:
    context = _context(browser, width)
    page = context.new_page()
    problems: list[str] = []
    opened = panels = 0
    try:
        for role in ROLES:
            for site in sites:
                context.clear_cookies()
                if site.cookies[role]:
                    context.add_cookies(site.cookies[role])
                for address in site.addresses():
                    page.goto(live_server.url + address)
                    found = page.evaluate(MEASURE, width)
                    where = f"{address} ({site.game}, {role}, {width} px)"
                    problems += _problems(found, width, where, board=True)
                    if address.startswith("/new") and width == PHONE:
                        print(f"{where}: {found['height']} px tall")
                        if found["height"] > NEW_GAME_HEIGHT:
                            problems.append(f"{where}: {found['height']} px tall")
                    opened += 1
                    panels += found["panel"]["marked"]
    finally:
        context.close()
    assert opened >= len(ROLES) * len(sites) * len(PAGE_ROUTES)
    assert panels >= len(ROLES) * len(sites), "no board picture's side panel was measured"
    assert not problems, f"{len(problems)} problems:\n" + "\n".join(sorted(set(problems)))


# --------------------------------------------------------------------------- the mails


@pytest.fixture(scope="module")
def mails(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """Every kind of mail of every game in both languages, as its HTML part, by
    "game kind language"."""
    from tests.dbutil import migrated_sqlite
    from tests.test_mail_out import make_post
    from tests.test_pseudo_locale_mail import _kinds, _race

    found: dict[str, str] = {}
    for game in sorted(GAMES):
        with migrated_sqlite(tmp_path_factory.mktemp(f"mails-{game}")) as url:
            post = make_post(url, None, TITANPOST_MAIL_IMAGES="link")
            try:
                _race(post, game)
                renderer = MailRenderer(post.service)
                with post.service.session() as s:
                    for row in s.exec(select(OutboxMail).order_by(col(OutboxMail.id))).all():
                        seat = s.get(Seat, row.seat_id) if row.seat_id else None
                        lang = (seat.language if seat else None) or row.payload.get(
                            "language", "en")
                        mail = renderer.render(row, always=True, session=s)
                        found.setdefault(f"{game} {row.kind} {lang}", mail.html)
            finally:
                post.service.engine.dispose()
        kinds = {name.split()[1] for name in found if name.startswith(f"{game} ")}
        assert kinds == _kinds(game), sorted(kinds ^ _kinds(game))
    yield found


@pytest.mark.parametrize("width", WIDTHS)
def test_no_mail_scrolls_sideways_and_every_target_is_big_enough(
    browser: Any, mails: dict[str, str], width: int, tmp_path: Path,
) -> None:
    assert {name.split()[2] for name in mails} >= set(LANGUAGES)
    context = _context(browser, width)
    context.route("**/*", lambda route: route.abort())  # (a mail's pictures: not fetched)
    page = context.new_page()
    problems: list[str] = []
    try:
        for name, html in sorted(mails.items()):
            page.set_content(html, wait_until="domcontentloaded")
            problems += _problems(page.evaluate(MEASURE, width), width, f"mail {name} ({width} px)",
                                  board=False)
    finally:
        context.close()
    assert not problems, f"{len(problems)} problems:\n" + "\n".join(sorted(set(problems)))
