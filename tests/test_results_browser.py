"""Results that close the evening in a real browser (chromium, issue 38): a finished game's page
shows every seat's place and score and the reader's own place, in the reader's language, and My
games shows the winner and the reader's place: the same numbers as the API's ``result``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from app.games.placings import place_words
from app.games.ui import game_ui

if TYPE_CHECKING:
    from tests.browser import LiveServer

pytest_plugins = ["tests.browser"]


def test_a_finished_games_page_and_my_games_give_every_place(live_server: LiveServer,
                                                             browser: Any) -> None:
    service = live_server.service
    created = service.create_game(seats=[{"email": "ann@example.com", "name": "Ann",
                                          "language": "pl"},
                                         {"email": "bob@example.com", "name": "Bob"},
                                         {"bot": True}], name="Results evening")
    uid = created["game"]
    ann, bob = browser.new_context(), browser.new_context()
    from tests.browser import join_from_invitations  # (the plugin, loaded by then)

    try:
        ann_page, bob_page = ann.new_page(), bob.new_page()
        join_from_invitations(live_server.url, [ann_page, bob_page], created["invitations"])
        service.start(uid, created["creator_token"])
        service.resign(uid, 0)
        service.resign(uid, 1)
        result = service.state(uid, 1)["result"]
        ui = game_ui("titan-race")
        places = {e["position"]: e for e in result["places"]}
        assert len(places) == 3

        bob_page.goto(f"{live_server.url}/games/{uid}")
        mine = place_words(places[1], ui, "en")
        assert bob_page.text_content("#you-placed") == f"You placed {mine}."
        rows = bob_page.locator("#results table.results tbody tr")
        assert rows.count() == 3
        for k in range(3):
            row = rows.nth(k)
            position = int(row.get_attribute("data-seat") or -1)
            entry = places[position]
            assert row.get_attribute("data-place") == str(entry["place"])
            assert row.locator("td.place").text_content() == place_words(entry, ui, "en")
            score = ", ".join(ui.score_part(p["id"], p["value"], "en") for p in entry["parts"])
            assert row.locator("td.score").text_content() == score
        assert bob_page.locator("#results tr.mine").get_attribute("data-seat") == "1"

        ann_page.goto(f"{live_server.url}/games/{uid}")
        assert ann_page.text_content("#you-placed") == (
            f"Twoje miejsce: {place_words(places[0], ui, 'pl')}")
        assert "rzęd" in (ann_page.text_content("#results") or "")

        bob_page.goto(f"{live_server.url}/games")
        row = bob_page.locator(f'tr[data-game="{uid}"]')
        assert row.locator(".your-place").text_content() == f"Your place: {mine}"
        winner = ui.piece_name(str(service.state(uid, 1)["game"]["winner"]).split(",")[0], "en")
        assert winner in (row.text_content() or "")
    finally:
        ann.close()
        bob.close()
