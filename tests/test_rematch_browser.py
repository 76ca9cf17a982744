"""A rematch in real browsers (chromium): each player's browser draws its own seat's share of the
deal once it has been shown the rematch's commitment, and the server deals with that share
(app/features/rematch/pages.py, templates/pages/_share_script.html): the maker's page of the
rematch sends it by itself, a player saying "Yes, play again" on the old game's page sends it with
the button, and the rematch starts at that last yes (issue 38)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs

from sqlmodel import col, select

from app.core.models import Game, Seat

if TYPE_CHECKING:
    from tests.browser import LiveServer

pytest_plugins = ["tests.browser"]


def shares(live_server: LiveServer, uid: str) -> dict[int, str | None]:
    """The share of the deal each person's seat of game ``uid`` gave (None: none yet)."""
    with live_server.service.session() as s:
        game = s.exec(select(Game).where(Game.uid == uid)).one()
        seats = s.exec(select(Seat).where(Seat.game_id == game.id, col(Seat.is_bot).is_(False))
                       .order_by(col(Seat.position))).all()
        return {seat.position: seat.contribution for seat in seats}


def test_each_browser_gives_its_own_share_of_the_rematch_s_deal(live_server: LiveServer,
                                                                browser: Any) -> None:
    service = live_server.service
    created = service.create_game(seats=[{"email": "ann@example.com", "name": "Ann"},
                                         {"email": "bob@example.com", "name": "Bob"},
                                         {"bot": True}], name="Browsers' rematch")
    uid = created["game"]
    ann, bob = browser.new_context(), browser.new_context()
    from tests.browser import join_from_invitations  # (the plugin, loaded by then)

    try:
        ann_page, bob_page = ann.new_page(), bob.new_page()
        join_from_invitations(live_server.url, [ann_page, bob_page], created["invitations"])
        service.start(uid, created["creator_token"])
        service.resign(uid, 0)
        service.resign(uid, 1)
        assert service.state(uid, None)["game"]["status"] == "finished"

        bob_page.goto(f"{live_server.url}/games/{uid}")
        with bob_page.expect_request(lambda r: r.method == "POST"
                                     and r.url.endswith("/contribution")) as sent:
            bob_page.click("#rematch-button")
        bobs = parse_qs(sent.value.post_data)["contribution"][0]
        bob_page.wait_for_selector("text=Your browser has added its share of the deal.")
        new = bob_page.url.split("/games/")[1].split("/")[0]
        assert new != uid and len(bobs) == 64
        assert shares(live_server, new) == {0: None, 1: bobs}

        ann_page.goto(f"{live_server.url}/games/{uid}")
        commitment = service.state(new, None)["game"]["fairness"]["commitment"]
        assert commitment in ann_page.inner_text("#join-commitment")
        anns = ann_page.input_value("#join-rematch input[name=contribution]")
        assert len(anns) == 64 and anns != bobs
        assert ann_page.get_attribute("#rematch-answers li[data-seat='1']",
                                      "data-answer") == "waiting"
        ann_page.click("#join-rematch-button")
        ann_page.wait_for_url(f"**/games/{new}")
        ann_page.wait_for_selector("text=Everyone has said yes: the rematch has started.")
        assert shares(live_server, new) == {0: anns, 1: bobs}
        assert service.state(new, None)["game"]["status"] == "active"
    finally:
        ann.close()
        bob.close()
