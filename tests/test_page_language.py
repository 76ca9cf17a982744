"""Which language a page speaks (issue 23): the seat's, else the browser's ``Accept-Language``,
else English (``?lang=``, a choice made on the site, comes first). Pages no seat is known for
follow the browser: a damaged or forged link, an address that names nothing (an HTML 404 page
for a browser, JSON for the API), and this browser's list of games follows its seats."""

from __future__ import annotations

import html
import re
from collections.abc import Iterator

import pytest
from flask.testing import FlaskClient

from app.core.i18n import translate
from app.games.ui import game_ui
from app.web.linktokens import OptionLink, make_option_token
from tests.apifixtures import Api, dispose, make_api
from tests.test_links import BASE_URL, new_game, path_of, pending

CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')
POLISH_BROWSER = {"Accept-Language": "pl-PL,pl;q=0.9,en-US;q=0.8,en;q=0.7"}
PAGE = {"Accept": "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"}


@pytest.fixture
def site(migrated_database_url: str) -> Iterator[Api]:
    made = make_api(migrated_database_url, TITANPOST_BASE_URL=BASE_URL)
    yield made
    dispose(made)


def _language(text: str) -> str:
    found = re.search(r'<html lang="([a-z]+)">', text)
    assert found, "not a page"
    return found.group(1)


@pytest.mark.parametrize(("headers", "query", "expected"), [
    (POLISH_BROWSER, "", "pl"),
    ({"Accept-Language": "de-DE,de;q=0.9,pl;q=0.5"}, "", "pl"),  # the first we speak
    ({"Accept-Language": "en-GB,pl;q=0.5"}, "", "en"),
    ({"Accept-Language": "de, fr"}, "", "en"),
    ({}, "", "en"),
    (POLISH_BROWSER, "?lang=en", "en"),  # a choice made on the site wins
])
def test_a_page_without_a_seat_follows_the_browser(site: Api, headers: dict[str, str],
                                                   query: str, expected: str) -> None:
    for path in ("/", "/new"):
        response = site.app.test_client().get(path + query, headers=headers)
        assert response.status_code == 200
        assert _language(response.text) == expected, path
        assert "Accept-Language" in response.vary  # (for caches)


def _seated(site: Api, language: str) -> tuple[str, FlaskClient]:
    table = site.create([{"email": f"p{i}@example.com", "language": language}
                         for i in range(3)])
    player = site.app.test_client()
    token = table.invitations[0]
    page = player.get(f"/join/{token}")
    found = CSRF.search(page.text)
    assert found
    assert player.post(f"/join/{token}", data={"csrf_token": found.group(1)}).status_code == 303
    return table.uid, player


def test_the_seat_language_comes_before_the_browser(site: Api) -> None:
    uid, player = _seated(site, "pl")
    english_browser = {"Accept-Language": "en-US,en;q=0.9"}
    for path in (f"/games/{uid}", f"/games/{uid}/me", "/games", "/"):
        response = player.get(path, headers=english_browser)
        assert response.status_code == 200
        assert _language(response.text) == "pl", path
    games = player.get("/games")
    assert "Moje gry" in games.text and "My games" not in games.text


def test_an_address_that_names_nothing_is_a_page_for_a_browser(site: Api) -> None:
    client = site.app.test_client()
    polish = client.get("/no/such/page", headers=PAGE | POLISH_BROWSER)
    assert polish.status_code == 404 and polish.mimetype == "text/html"
    assert _language(polish.text) == "pl"
    assert translate("pl", "Not found") in polish.text
    english = client.get("/no/such/page", headers=PAGE)
    assert english.status_code == 404 and _language(english.text) == "en"
    assert "There is no page at this address" in english.text
    for path, headers in (("/api/no/such/thing", PAGE), ("/no/such/page", {}),
                          ("/no/such/page", {"Accept": "application/json"})):
        answer = client.get(path, headers=headers)
        assert answer.status_code == 404 and answer.is_json and "error" in answer.json, path


def test_a_damaged_or_forged_link_speaks_the_browser_language(site: Api) -> None:
    table = site.create([{"email": f"p{i}@example.com"} for i in range(3)])
    no_seat = make_option_token(site.service.settings.secret_key, "whatever",
                                OptionLink(table.uid, 9, 1, "x"))
    for path, title in (("/l/garbage", "Damaged link"), ("/g/not.a.token", "Damaged link"),
                        (f"/l/{no_seat}", "Forged link")):
        polish = site.app.test_client().get(path, headers=POLISH_BROWSER)
        assert polish.status_code == 400 and _language(polish.text) == "pl", path
        assert translate("pl", title) in polish.text and title not in polish.text
        english = site.app.test_client().get(path)
        assert _language(english.text) == "en" and title in english.text


def test_the_confirm_button_names_the_move_in_words(site: Api) -> None:
    """A link's confirm button says the move as the game describes it in the seat's language
    ("Potwierdź: Weź kość: żółta"), not its notation ("pick yellow")."""
    game = new_game(site.service, ("pl", "pl", "pl"))
    position, seq, options = pending(site.service, game.uid)
    option = options[0]
    page = site.app.test_client().get(path_of(site, game.uid, position, seq, option))
    assert page.status_code == 200
    button = re.search(r'<form class="confirm".*?<button type="submit">(.*?)</button>',
                       page.text, re.S)
    assert button, "no confirm button"
    described = game_ui("titan-race").describe_option(option, None, "pl")
    assert described != option
    assert html.unescape(button.group(1)) == f"{translate('pl', 'Confirm')}: {described}"
