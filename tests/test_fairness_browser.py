"""Fair dealing in a real browser (chromium, issue 36): the join page draws the seat's
contribution in the browser, shows it and keeps it in the browser's local storage with the
commitment it showed (giving the kept one again when the page is opened again); the game page
shows it, warns if the commitment shown is ever another (or none, as if the game had been
created before fair dealing), and once the game is over checks the published record: this
browser's contribution at this seat and the commitment it joined under, and says so when the
record in the database was altered.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa

if TYPE_CHECKING:
    from tests.browser import LiveServer

pytest_plugins = ["tests.browser"]

HEX = re.compile(r"[0-9a-f]{64}")


def _kept(page: Any, uid: str, position: int) -> dict[str, Any]:
    kept: dict[str, Any] = json.loads(page.evaluate(
        f"window.localStorage.getItem('titanpost-fair:{uid}:{position}')"))
    return kept


def _check_said(page: Any) -> str:
    said = page.locator("#fair-check")
    said.wait_for(state="visible")
    text: str = said.inner_text()
    return text


def test_the_browser_keeps_its_contribution_and_checks_the_published_record(
        live_server: LiveServer, browser: Any) -> None:
    service = live_server.service
    created = service.create_game(seats=[{"email": "ann@example.com"}, {"bot": True},
                                         {"bot": True}], name="Checked in the browser")
    uid = created["game"]
    commitment = service.state(uid, None)["game"]["fairness"]["commitment"]
    context = browser.new_context()
    context.set_default_timeout(15_000)
    try:
        page = context.new_page()
        join = f"{live_server.url}/join/{created['invitations'][0]['invite_token']}"
        page.goto(join)
        shown = page.locator("#join-contribution code").inner_text()
        assert HEX.fullmatch(shown)
        assert _kept(page, uid, 0) == {"contribution": shown, "commitment": commitment}
        page.goto(join)  # (opened again: the kept contribution is given again)
        assert page.locator("#join-contribution code").inner_text() == shown
        assert page.input_value("#contribution") == shown
        page.fill("input[name=name]", "Ann")
        page.click("#accept-button")
        page.wait_for_url(f"**/games/{uid}")
        assert service.export(uid)["seats"][0]["contribution"] == shown
        assert page.locator("#fair-mine code").inner_text() == shown
        assert not page.locator("#fair-check").is_visible()  # (nothing published yet)

        service.start(uid, created["creator_token"])
        service.resign(uid, 0)  # the computer plays the seat to the end
        assert service.state(uid, None)["game"]["status"] == "finished"
        page.reload()
        assert "Checked by this browser" in _check_said(page)

        with service.engine.begin() as conn:  # the record altered in the database
            conn.execute(sa.text(
                "UPDATE seats SET contribution = :other WHERE position = 0 AND game_id = "
                "(SELECT id FROM games WHERE uid = :uid)"), {"other": "ff" * 32, "uid": uid})
        page.reload()
        assert "is NOT the one the published record gives this seat" in _check_said(page)

        page.evaluate(f"window.localStorage.setItem('titanpost-fair:{uid}:0', "
                      f"JSON.stringify({{contribution: '{shown}', commitment: '{'ab' * 32}'}}))")
        page.reload()  # (a browser that joined under another commitment)
        said = _check_said(page)
        assert "is not the one this browser was shown when it took the seat" in said
        assert "ab" * 32 in said

        page.evaluate(f"window.localStorage.setItem('titanpost-fair:{uid}:0', "
                      f"JSON.stringify({{contribution: '{shown}', commitment: '{commitment}'}}))")
        _as_if_created_before_fair_dealing(service.engine, uid)
        page.reload()
        assert page.locator("#fair-older").is_visible()
        said = _check_said(page)
        assert "is not the one this browser was shown when it took the seat" in said
        assert commitment in said
    finally:
        context.close()


def _as_if_created_before_fair_dealing(engine: sa.Engine, uid: str) -> None:
    """What an operator who owns the database could do: switch the guard off, turn the game
    into one dealt by the older generator with no commitment, and switch the guard on again."""
    with engine.begin() as conn:
        guard = conn.execute(sa.text("SELECT sql FROM sqlite_master WHERE type = 'trigger' "
                                     "AND name = 'games_dealing_fixed'")).scalar_one()
        conn.execute(sa.text("DROP TRIGGER games_dealing_fixed"))
        conn.execute(sa.text(
            "UPDATE games SET rng_scheme = 'splitmix64', dealing_commitment = NULL, "
            "dealing_secret = NULL, commitment_version = NULL, committed_uid = NULL "
            "WHERE uid = :uid"), {"uid": uid})
        conn.execute(sa.text(guard))


def test_a_browser_that_kept_nothing_checks_nothing(live_server: LiveServer,
                                                    browser: Any) -> None:
    """A spectator's browser, or one that joined elsewhere, shows no contribution of its
    own and claims no check."""
    service = live_server.service
    created = service.create_game(seats=[{"bot": True}] * 3, name="Watched")
    service.start(created["game"], created["creator_token"])
    context = browser.new_context()
    try:
        page = context.new_page()
        page.goto(f"{live_server.url}/games/{created['game']}")
        assert page.locator("#fair-secret").is_visible()
        assert not page.locator("#fair-mine").is_visible()
        assert not page.locator("#fair-check").is_visible()
    finally:
        context.close()
