"""Untranslated text cannot hide (issue 23): the pages are rendered in a pseudo-locale where
every catalogue message comes out with its words wrapped in markers (``⟦…⟧``) and its
``{fields}`` outside them, and any visible word outside the markers is text that no translator
would ever see (or a field filled with such text). The helpers here serve the other pseudo-locale
tests too: ``test_pseudo_locale_pages`` (set-up, owner, link, error, unsubscribe and admin
pages), ``test_pseudo_locale_mail`` (every mail kind) and ``test_pseudo_locale_pictures``.

What may stand outside the markers is data, not words of ours: the names, addresses and game
names the test itself gave, numbers, time-zone names, the product's and the games' names. The
pages covered so far: home, new game (and a refused one), my games, a player's settings (and a
refused setting), the HTML 404 page, a damaged and a forged link.
"""

from __future__ import annotations

import html
import re
import string
from collections.abc import Iterator
from typing import Any

import pytest
from flask.testing import FlaskClient

from app.core import i18n
from app.core.i18n import LANGUAGES, language_name
from app.games import GAMES
from app.games.ui import game_ui
from app.web.linktokens import OptionLink, make_option_token
from tests.apifixtures import Api, Table, dispose, make_api
from tests.gamefixtures import game_fixture

OPEN, CLOSE = "⟦", "⟧"
CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')
NAMES = {"Titan", "Post", "Race", "The", "Great", "API"}
"""The product's and the games' names, which no language translates."""


def _proper_names() -> set[str]:
    """Names no catalogue translates: the built-in boards' and every game's own (its test
    fixture's: The Great Race's cities), and each language's own name in the language menus."""
    found = {language_name(code) for code in LANGUAGES}
    for game in GAMES:
        ui = game_ui(game)
        found |= set(ui.board_titles(ui.board_choices)) | game_fixture(game).proper_names
    return found


def _wrap(text: str) -> str:
    """``text`` with each of its literal parts in markers and its ``{fields}`` left out of
    them: what fills a field (a refusal's reason, a move in words) must bring its own markers,
    or be data."""
    out = []
    for literal, field, spec, conversion in string.Formatter().parse(text):
        if literal:
            out.append(OPEN + literal.replace("{", "{{").replace("}", "}}") + CLOSE)
        if field is not None:
            out.append("{" + field + (f"!{conversion}" if conversion else "")
                       + (f":{spec}" if spec else "") + "}")
    return "".join(out)


class _Wrapped(dict[Any, str]):
    """A catalogue that has every message, each one the English in markers (:func:`_wrap`)."""

    def __contains__(self, key: object) -> bool:
        return True

    def __getitem__(self, key: Any) -> str:
        text = key[0] if isinstance(key, tuple) else str(key).split("\x04")[-1]
        return _wrap(text)


class _Pseudo:
    """Just what :func:`app.core.i18n.translate` and :func:`~app.core.i18n.translate_plural` use of
    a Babel ``Translations``."""

    _catalog = _Wrapped()

    def ngettext(self, singular: str, plural: str, n: int) -> str:
        return _wrap(singular if n == 1 else plural)


@pytest.fixture
def pseudo(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every language (English too) speaks the pseudo-locale."""
    monkeypatch.setattr(i18n, "_translations", lambda lang: _Pseudo())


@pytest.fixture
def site(migrated_database_url: str, pseudo: None) -> Iterator[Api]:
    made = make_api(migrated_database_url)
    yield made
    dispose(made)


READ_ATTRIBUTES = re.compile(
    r"""\b(title|placeholder|aria-label|alt)\s*=\s*("[^"]*"|'[^']*')""", re.IGNORECASE)
BUTTON_VALUE = re.compile(
    r"""<input\b(?=[^>]*\btype\s*=\s*["']?(?:submit|button|reset)\b)[^>]*?"""
    r"""\bvalue\s*=\s*("[^"]*"|'[^']*')""", re.IGNORECASE)


def _visible(page: str) -> str:
    """The text a reader sees: no scripts, styles, tags or comments, but the attributes a
    reader sees or hears (``title=``, ``placeholder=``, ``aria-label=``, ``alt=``, the
    ``value=`` of a button input), each on its own line. Machine text (``<code>``, ``<pre>``,
    ``<kbd>``, ``<samp>``: notation, addresses, JSON) is no words of ours either."""
    page = re.sub(r"(?s)<(script|style|code|pre|kbd|samp)\b.*?</\1>|<!--.*?-->", " ", page)
    read = [m.group(2)[1:-1] for m in READ_ATTRIBUTES.finditer(page)]
    read += [m.group(1)[1:-1] for m in BUTTON_VALUE.finditer(page)]
    text = re.sub(r"<[^>]+>", " ", page)
    return html.unescape("\n".join([text, *read]))


def _unmarked(page: str, data: set[str]) -> list[str]:
    """The words of the visible text outside every marker that are not ``data``."""
    text = _visible(page)
    outside, depth = [], 0
    for char in text:
        if char == OPEN:
            depth += 1
            outside.append(" ")  # (what stands either side of a marked part: two words)
        elif char == CLOSE:
            depth = max(depth - 1, 0)
            outside.append(" ")
        elif depth == 0:
            outside.append(char)
    shown = re.sub(r"\S*/\S*", " ", "".join(outside))  # addresses such as /api/docs
    shown = re.sub(r"(?<![\w-])(?=[\w-]*\d)[\w-]{16,}", " ", shown)  # tokens, ids, hashes
    words = re.findall(r"[^\W\d_]{2,}", shown)
    allowed = NAMES | {w for item in data | _proper_names()
                       for w in re.findall(r"[^\W\d_]+", item)}
    return sorted({w for w in words if w not in allowed})


def _token(page: str) -> str:
    found = CSRF.search(page)
    assert found, "no CSRF token on the page"
    return found.group(1)


def _seated(site: Api, game: str) -> tuple[Table, FlaskClient]:
    """A game whose seat 1 this browser took (the others still invited)."""
    table = site.create([{"email": f"player{i}@example.com", "name": f"Gracz{i}"}
                         for i in range(3)], game=game)
    player = site.app.test_client()
    token = table.invitations[0]
    page = player.get(f"/join/{token}")
    assert player.post(f"/join/{token}", data={"csrf_token": _token(page.text)}).status_code == 303
    return table, player


def _pages(site: Api, player: FlaskClient, table: Table) -> dict[str, str]:
    """Every page of the brief this browser sees, and a refused setting."""
    uid = table.uid
    pages: dict[str, str] = {}
    for path in ("/", "/new", "/games", f"/games/{uid}/me", f"/games/{uid}"):
        response = player.get(path)
        assert response.status_code == 200, path
        pages[path] = response.text
    refused = player.post(f"/games/{uid}/me/quiet", data={
        "csrf_token": _token(pages[f"/games/{uid}/me"]), "quiet": "at night", "timezone": ""})
    assert refused.status_code == 400
    pages["/me refused"] = refused.text
    invitation = site.app.test_client().get(f"/join/{table.invitations[1]}")
    assert invitation.status_code == 200
    pages["/join"] = invitation.text
    missing = player.get("/no/such/page", headers={"Accept": "text/html"})
    assert missing.status_code == 404
    pages["404"] = missing.text
    forged = make_option_token(site.service.settings.secret_key, "x", OptionLink(uid, 9, 1, "x"))
    for path in ("/l/garbage", f"/l/{forged}"):
        response = site.app.test_client().get(path)
        assert response.status_code == 400
        pages[path] = response.text
    return pages | _running(site, player, table)


def _running(site: Api, player: FlaskClient, table: Table) -> dict[str, str]:
    """The game page and its log once the race runs."""
    for position, invite in sorted(table.invitations.items())[1:]:
        accepted = site.client.post("/api/invitations/accept",
                                    json={"invite_token": invite, "name": f"Gracz{position}"})
        assert accepted.status_code == 201
    site.start(table)
    pages = {}
    for path in (f"/games/{table.uid}", f"/games/{table.uid}/log"):
        response = player.get(path)
        assert response.status_code == 200, path
        pages[f"{path} (running)"] = response.text
    return pages


@pytest.mark.parametrize("game", GAMES)
def test_the_pages_show_no_words_outside_the_catalogue(site: Api, game: str) -> None:
    table, player = _seated(site, game)
    pages = _pages(site, player, table)
    # (a game without a name is shown by the start of its id: random hex, "e913a5cd")
    data = {table.uid, table.uid[:8], "UTC", "Gracz0", "Gracz1", "Gracz2", "player", "example",
            "com", "at", "night"}  # (the refused quiet hours, quoted back)
    # (if the deal has the seat to act: its options, and the example of the notation a move is
    # typed in, which fills the catalogue's "for example: {example}": notation, the same in
    # every language)
    data |= {*site.service.options(table.uid, 0)["options"], game_ui(game).notation_example}
    found = {name: _unmarked(page, data) for name, page in pages.items()}
    unmarked = {name: words for name, words in found.items() if words}
    assert not unmarked, "\n".join(f"{name}: {words}" for name, words in unmarked.items())
