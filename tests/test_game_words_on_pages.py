"""Each game's own words on its pages, never another game's (issue 40): the game page's takeback
line says what can no longer be taken back in the game's terms (a Great Race has no die, a Titan
Race no tile), and the admin's replay shows the game's own pieces and its outcomes in words (no
raw ``[[]]``), in English and in Polish."""

from __future__ import annotations

import html
import re
from collections.abc import Iterator

import pytest
from flask.testing import FlaskClient

from app.core.i18n import translate
from app.games.ui import game_ui
from tests.apifixtures import ADMIN_TOKEN, Api, csrf_token, dispose, make_api
from tests.test_pages import give_seat

OTHER_GAMES_WORDS = {
    "great-race": {"en": ("die", "dice", "titan"), "pl": ("kość", "kości", "tytan")},
    "titan-race": {"en": ("tile", "crew"), "pl": ("kafel", "ekip")},
}
"""Words of the other game that must not show on a game's page (its own words aside)."""


@pytest.fixture
def site(migrated_database_url: str) -> Iterator[Api]:
    made = make_api(migrated_database_url)
    yield made
    dispose(made)


def started(site: Api, game: str, lang: str) -> str:
    """A started game of Ann, Ben (both speaking ``lang``) and the computer; Ben has moved."""
    svc = site.service
    created = svc.create_game(seats=[{"email": "ann@example.com", "language": lang},
                                     {"email": "ben@example.com", "language": lang},
                                     {"bot": True}], seed=3, rules_name=game, name="Words")
    for invitation, name in zip(created["invitations"], ("Ann", "Ben"), strict=True):
        svc.accept(invitation["invite_token"], name=name)
    uid: str = created["game"]
    svc.start(uid, created["creator_token"])
    state = svc.state(uid, None)
    acting = state["game"]["to_act"][0]
    svc.submit(uid, acting, state["seq"], svc.options(uid, acting)["options"][0])
    return uid


def text_of(page: str, section: str) -> str:
    """The words of the page's element ``id="section"`` (up to its closing tag's kind)."""
    found = re.search(rf'<(\w+)[^>]*\bid="{section}"[^>]*>(.*?)</\1>', page, re.S)
    assert found is not None, f"no #{section} on the page"
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", found.group(2))).split())


def main_text(page: str) -> str:
    body = page.split("<main", 1)[1].split("</main>", 1)[0]
    body = re.sub(r"<(style|script)\b.*?</\1>", " ", body, flags=re.S)
    body = re.sub(r'<pre class="view".*?</pre>', " ", body, flags=re.S)  # (the JSON view)
    body = re.sub(r"<svg\b.*?</svg>", " ", body, flags=re.S)  # (the board's picture)
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", body)).split())


def shows_none_of(text: str, words: tuple[str, ...]) -> list[str]:
    return [w for w in words if re.search(rf"\b{w}", text, re.I)]


@pytest.mark.parametrize("lang", ["en", "pl"])
@pytest.mark.parametrize("game", ["titan-race", "great-race"])
def test_the_takeback_line_speaks_the_game_s_own_words(site: Api, game: str, lang: str) -> None:
    uid = started(site, game, lang)
    player: FlaskClient = site.app.test_client()
    give_seat(player, uid, 0)
    page = player.get(f"/games/{uid}").text
    line = text_of(page, "takeback")
    wanted = translate(lang, game_ui(game).takeback_hint)
    assert wanted in line, line
    other = "great-race" if game == "titan-race" else "titan-race"
    assert translate(lang, game_ui(other).takeback_hint) not in line
    assert not shows_none_of(line, OTHER_GAMES_WORDS[game][lang]), line


@pytest.mark.parametrize("lang", ["en", "pl"])
@pytest.mark.parametrize("game", ["titan-race", "great-race"])
def test_the_admin_replay_shows_the_game_s_pieces_and_outcomes_in_words(
    site: Api, game: str, lang: str,
) -> None:
    uid = started(site, game, lang)
    admin: FlaskClient = site.app.test_client()
    login = admin.get(f"/admin/login?lang={lang}").text
    signed = admin.post(f"/admin/login?lang={lang}", data={
        "csrf_token": csrf_token(login), "token": ADMIN_TOKEN, "next": "/admin"})
    assert signed.status_code == 303
    for step in (0, 1):
        page = admin.get(f"/admin/replay/{uid}?step={step}&lang={lang}").text
        shown = main_text(page)
        assert "[[" not in shown and "[]" not in shown, shown
        assert not shows_none_of(shown, OTHER_GAMES_WORDS[game][lang]), shown
        heading = translate(lang, game_ui(game).piece_heading)
        assert f"<th>{heading}</th>" in page, f"no {heading!r} column"
    outcomes = text_of(page, "move-outcomes")
    assert outcomes == translate(lang, "none") or not re.search(r"[\[\]{}\"]", outcomes), outcomes
