"""A takeback is offered only where it can be granted (issue 38): the service says why a seat
cannot ask before anyone is asked (``Takebacks.refusal``, the refusal ``ask`` would give), the
game page shows the button disabled with that reason, the API's ``GET /takeback`` gives it to
the seat as ``can_ask`` and ``refusal``, and ``titanpost takeback`` says it without asking."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from app.features.takeback.takebacks import ALREADY, HIDDEN, NOT_LAST, NOTHING, install
from app.games.ui import game_ui
from app.service import BadRequest, GameService
from app.service.errors import Phrase
from tests.apifixtures import SEED, Api
from tests.test_cli_player import Cli
from tests.test_pages import browser as page_client
from tests.test_pages import give_seat
from tests.test_takeback import log, new_game, opening, play_first, site, takebacks

if TYPE_CHECKING:
    from tests.browser import LiveServer

pytest_plugins = ["tests.apifixtures", "tests.browser"]
__all__ = ["site"]  # (the fixture, used by name)


def refusal_words(svc: GameService, uid: str, position: int) -> Any:
    refused = install(svc).refusal(uid, position)
    return None if refused is None else refused.words


def asked_words(svc: GameService, uid: str, position: int) -> Any:
    with pytest.raises(BadRequest) as refused:
        install(svc).ask(uid, position)
    return refused.value.words


def test_the_refusal_is_known_before_asking_and_is_the_one_asking_gets(api: Api) -> None:
    svc = api.service
    uid = new_game(svc)
    first = opening(svc, uid).first
    assert refusal_words(svc, uid, first) == (NOTHING, {}) == asked_words(svc, uid, first)
    while svc.state(uid, None)["game"]["to_act"] == [first]:
        play_first(svc, uid)
    after, _ = play_first(svc, uid)
    played = len(log(svc, uid))
    assert refusal_words(svc, uid, first) == (NOT_LAST, {"player": f"H{after}"})
    assert refusal_words(svc, uid, first) == asked_words(svc, uid, first)
    assert refusal_words(svc, uid, after) is None
    install(svc).ask(uid, after)
    assert refusal_words(svc, uid, after) == (ALREADY, {}) == asked_words(svc, uid, after)
    assert len(log(svc, uid)) == played and len(takebacks(api)) == 1


def test_chance_shown_since_is_said_before_asking(api: Api) -> None:
    svc = api.service
    uid = new_game(svc)
    position, _ = play_first(svc, uid)
    while svc.export(uid)["moves"][-1]["outcomes"] == [[]]:
        position, _ = play_first(svc, uid)
    hidden = (HIDDEN, {"what": Phrase(game_ui("titan-race").hidden_since)})
    assert refusal_words(svc, uid, position) == hidden == asked_words(svc, uid, position)
    assert takebacks(api) == []


def test_the_game_page_disables_the_button_with_the_reason(api: Api) -> None:
    svc = api.service
    uid = new_game(svc)
    first = opening(svc, uid).first
    client = page_client(api)
    give_seat(client, uid, first)
    page = client.get(f"/games/{uid}").text
    assert 'disabled aria-describedby="takeback-refused"' in page
    assert "you have made no move that can be taken back" in page
    polish = client.get(f"/games/{uid}?lang=pl").text
    assert 'id="takeback-refused"' in polish
    assert "you have made no move" not in polish
    play_first(svc, uid)
    page = client.get(f"/games/{uid}").text
    assert "Take back my last move" in page and "takeback-refused" not in page


def test_the_api_says_whether_the_seat_may_ask(api: Api) -> None:
    table = api.new_started(3)
    position, opts = api.actor(table)
    path = f"/api/games/{table.uid}/takeback"
    before = api.client.get(path, headers=table.seat(position)).get_json()
    assert before["can_ask"] is False
    assert "no move" in before["refusal"]["error"] and before["refusal"]["message"]
    status, _ = api.submit(table, position, opts["seq"], opts["options"][0])
    assert status == 200
    after = api.client.get(path, headers=table.seat(position)).get_json()
    assert after == {"takeback": None, "can_ask": True, "refusal": None}
    assert api.client.get(path).get_json() == {"takeback": None}  # (no seat: nothing to say)


def test_the_command_line_says_the_reason_without_asking(site: tuple[str, Any],
                                                         tmp_path: Any) -> None:
    url, app = site
    svc: GameService = app.extensions["titanpost.service"]
    created = svc.create_game(seats=[{"email": f"c{i}@example.com", "name": f"C{i}"}
                                     for i in range(2)] + [{"bot": True}], seed=SEED)
    tokens = {inv["position"]: svc.accept(inv["invite_token"])["api_token"]
              for inv in created["invitations"] if inv["position"] < 2}
    uid = created["game"]
    svc.start(uid, created["creator_token"])
    mover = svc.state(uid, None)["game"]["to_act"][0]
    cli = Cli(tmp_path / "seat")
    (tmp_path / "seat").mkdir()
    cli("login", url, "--token", tokens[mover])
    refused = cli("takeback", uid[:8], code=1)
    assert "no move that can be taken back" in refused.output
    assert install(svc).pending(uid) is None


def test_a_browser_sees_the_button_disabled_with_its_reason(live_server: LiveServer,
                                                            browser: Any) -> None:
    """In chromium: at move 0 the button cannot be pressed and says why; once the seat has
    moved it can."""
    svc = live_server.service
    created = svc.create_game(seats=[{"email": f"b{i}@example.com", "name": f"B{i}"}
                                     for i in range(3)], seed=SEED)
    uid = created["game"]
    first_invite = created["invitations"][0]
    for invite in created["invitations"][1:]:
        svc.accept(invite["invite_token"])
    context = browser.new_context()
    try:
        page = context.new_page()
        page.goto(f"{live_server.url}/join/{first_invite['invite_token']}")
        with page.expect_navigation():
            page.click("#accept-button")
        svc.start(uid, created["creator_token"])
        while svc.state(uid, None)["game"]["to_act"] != [0]:
            play_first(svc, uid)
        page.goto(f"{live_server.url}/games/{uid}")
        button = page.locator("#takeback button[type=submit]")
        assert button.is_disabled()
        assert "no move that can be taken back" in page.locator("#takeback-refused").inner_text()
        play_first(svc, uid)
        page.goto(f"{live_server.url}/games/{uid}")
        if svc.export(uid)["moves"][-1]["outcomes"] == [[]]:
            assert page.locator("#takeback button[type=submit]").is_enabled()
            assert page.locator("#takeback-refused").count() == 0
        else:
            assert page.locator("#takeback button[type=submit]").is_disabled()
    finally:
        context.close()
