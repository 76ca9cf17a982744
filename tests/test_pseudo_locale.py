"""Untranslated text cannot hide (issue 23), a start: the pages are rendered in a pseudo-locale
where every catalogue message comes out wrapped in markers (``⟦…⟧``), and any visible word
outside the markers is text that no translator would ever see.

What may stand outside the markers is data, not words of ours: the names, addresses and game
names the test itself gave, numbers, time-zone names, the product's and the games' names. The
pages covered so far: home, new game (and a refused one), my games, a player's settings (and a
refused setting), the HTML 404 page, a damaged and a forged link.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from typing import Any

import pytest
from flask.testing import FlaskClient

from app import i18n
from app.games import GAMES
from app.gameui import game_ui
from app.i18n import LANGUAGES, language_name
from app.linktokens import OptionLink, make_option_token
from tests.apifixtures import Api, dispose, make_api

OPEN, CLOSE = "⟦", "⟧"
CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')
NAMES = {"Titan", "Post", "Race", "The", "Great", "API"}
"""The product's and the games' names, which no language translates."""


def _proper_names() -> set[str]:
    """Names no catalogue translates: the built-in boards' (circuits, cities) and each
    language's own name in the language menus."""
    found = {language_name(code) for code in LANGUAGES}
    for game in GAMES:
        ui = game_ui(game)
        found |= set(ui.board_titles(ui.board_choices))
    return found


class _Wrapped(dict[Any, str]):
    """A catalogue that has every message, each one the English wrapped in markers."""

    def __contains__(self, key: object) -> bool:
        return True

    def __getitem__(self, key: Any) -> str:
        text = key[0] if isinstance(key, tuple) else str(key).split("\x04")[-1]
        return f"{OPEN}{text}{CLOSE}"


class _Pseudo:
    """Just what :func:`app.i18n.translate` and :func:`~app.i18n.translate_plural` use of a
    Babel ``Translations``."""

    _catalog = _Wrapped()

    def ngettext(self, singular: str, plural: str, n: int) -> str:
        return f"{OPEN}{singular if n == 1 else plural}{CLOSE}"


@pytest.fixture
def pseudo(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every language (English too) speaks the pseudo-locale."""
    monkeypatch.setattr(i18n, "_translations", lambda lang: _Pseudo())


@pytest.fixture
def site(migrated_database_url: str, pseudo: None) -> Iterator[Api]:
    made = make_api(migrated_database_url)
    yield made
    dispose(made)


def _visible(page: str) -> str:
    """The text a reader sees: no scripts, styles, tags or comments (attributes a reader
    sees, such as placeholders and titles, are not checked yet)."""
    page = re.sub(r"(?s)<(script|style)\b.*?</\1>|<!--.*?-->", " ", page)
    return html.unescape(re.sub(r"<[^>]+>", " ", page))


def _unmarked(page: str, data: set[str]) -> list[str]:
    """The words of the visible text outside every marker that are not ``data``."""
    text = _visible(page)
    outside, depth = [], 0
    for char in text:
        if char == OPEN:
            depth += 1
        elif char == CLOSE:
            depth = max(depth - 1, 0)
        elif depth == 0:
            outside.append(char)
    shown = re.sub(r"\S*/\S*", " ", "".join(outside))  # addresses such as /api/docs
    words = re.findall(r"[^\W\d_]{2,}", shown)
    allowed = NAMES | {w for item in data | _proper_names()
                       for w in re.findall(r"[^\W\d_]+", item)}
    return sorted({w for w in words if w not in allowed})


def _token(page: str) -> str:
    found = CSRF.search(page)
    assert found, "no CSRF token on the page"
    return found.group(1)


def _seated(site: Api) -> tuple[str, FlaskClient, str]:
    table = site.create([{"email": f"player{i}@example.com", "name": f"Gracz{i}"}
                         for i in range(3)])
    player = site.app.test_client()
    token = table.invitations[0]
    page = player.get(f"/join/{token}")
    assert player.post(f"/join/{token}", data={"csrf_token": _token(page.text)}).status_code == 303
    return table.uid, player, token


def test_the_pages_show_no_words_outside_the_catalogue(site: Api) -> None:
    uid, player, _ = _seated(site)
    data = {uid, "UTC", "Gracz0", "Gracz1", "Gracz2", "player", "example", "com"}
    pages: dict[str, str] = {}
    for path in ("/", "/new", "/games", f"/games/{uid}/me"):
        response = player.get(path)
        assert response.status_code == 200, path
        pages[path] = response.text
    me = pages[f"/games/{uid}/me"]
    refused = player.post(f"/games/{uid}/me/quiet",
                          data={"csrf_token": _token(me), "quiet": "at night", "timezone": ""})
    assert refused.status_code == 400
    pages["/me refused"] = refused.text
    data |= {"at", "night"}  # the refused quiet hours, quoted back
    missing = player.get("/no/such/page", headers={"Accept": "text/html"})
    assert missing.status_code == 404
    pages["404"] = missing.text
    forged = make_option_token(site.service.settings.secret_key, "x", OptionLink(uid, 9, 1, "x"))
    for path in ("/l/garbage", f"/l/{forged}"):
        response = site.app.test_client().get(path)
        assert response.status_code == 400
        pages[path] = response.text
    found = {name: _unmarked(page, data) for name, page in pages.items()}
    unmarked = {name: words for name, words in found.items() if words}
    assert not unmarked, "\n".join(f"{name}: {words}" for name, words in unmarked.items())
