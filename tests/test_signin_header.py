"""The header says who is signed in and offers a sign-out on every page (issue 38): after a
sign-in by mail it no longer offers "Sign in"; after signing out from it, it does again."""

from __future__ import annotations

from tests.test_signin import ANN, Site, _games, csrf_token, site

__all__ = ["site"]  # (the fixture, used by name)
pytest_plugins = ["tests.apifixtures"]


def header(page: str) -> str:
    return page.split("<main>", 1)[0]


def test_the_header_says_who_is_signed_in_and_signs_out(site: Site) -> None:
    games = _games(site)
    browser = site.client()
    before = header(browser.get("/").get_data(as_text=True))
    assert "Sign in" in before and 'id="signed-in"' not in before
    site.sign_in(browser, ANN)
    for path in ("/", "/games", f"/games/{games['titan']}", "/new", f"/games/{games['titan']}/log"):
        shown = header(browser.get(path).get_data(as_text=True))
        assert f"Signed in as {ANN}" in shown, path
        assert 'action="/signout"' in shown and ">Sign in<" not in shown, path
    polish = header(browser.get("/?lang=pl").get_data(as_text=True))
    assert ANN in polish and "Signed in as" not in polish
    page = browser.get("/").get_data(as_text=True)
    out = browser.post("/signout", data={"csrf_token": csrf_token(page)})
    assert out.status_code == 303
    after = header(browser.get("/").get_data(as_text=True))
    assert ">Sign in<" in after and ANN not in after


def test_a_spectator_is_told_how_to_play_their_own_seat(site: Site) -> None:
    """A player who joined elsewhere (the CLI, another device) opens the game here: not
    signed in, the page offers the sign-in; signed in by mail, it is their seat's page."""
    games = _games(site)
    browser = site.client()
    watching = browser.get(f"/games/{games['titan']}").get_data(as_text=True)
    assert 'id="signin-hint"' in watching and 'href="/signin"' in watching
    site.sign_in(browser, ANN)
    playing = browser.get(f"/games/{games['titan']}").get_data(as_text=True)
    assert 'id="signin-hint"' not in playing and "You play seat 1." in playing
