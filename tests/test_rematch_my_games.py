"""My games (/games) of an address signed in by mail lists what waits for it (issue 38): the
invitations it has not taken (taken there, with the browser's share of the deal) and the
rematches not started, waiting for its yes (said there) or for others (who). On SQLite and
PostgreSQL."""

from __future__ import annotations

import json

import pytest
from flask.testing import FlaskClient

from app.features.signin import signins as signin
from tests.apifixtures import Api
from tests.test_pages import csrf
from tests.test_rematch import ask, finished, game_state

pytest_plugins = ["tests.apifixtures"]

ANN, BOB = "ann@example.com", "bob@example.com"
SHARE = "7a" * 32


@pytest.fixture(autouse=True)
def _asks_answer_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """(How long an ask takes is not checked here; set back after each test, so that the test
    that checks it sees the floor.)"""
    monkeypatch.setattr(signin, "ANSWER_FLOOR", 0.0)


def signed_in(api: Api, email: str) -> FlaskClient:
    """A browser signed in as ``email`` by the link mailed to it."""
    signin.ask_link(api.service, email, "127.0.0.1", "en")
    payload = api.rows("SELECT payload FROM outbox WHERE kind = 'signin' AND recipient = :to "
                       "ORDER BY id DESC", to=email)[0][0]
    token = (payload if isinstance(payload, dict) else json.loads(payload))["token"]
    client: FlaskClient = api.app.test_client()
    used = client.post(f"/signin/{token}", data={"csrf_token": csrf(client, f"/signin/{token}")})
    assert used.status_code == 303
    return client


def test_my_games_lists_invitations_and_rematches_with_their_buttons(api: Api) -> None:
    table = finished(api)
    invited = api.create([{"email": BOB}, {"email": ANN}, {"bot": True}], name="Next week")
    made = ask(api, table, 1)
    ann = signed_in(api, ANN)
    page = ann.get("/games").text
    assert 'id="account-invitations"' in page and f'data-game="{invited.uid}"' in page
    assert 'id="account-rematches"' in page and 'data-answer="waiting"' in page
    assert "rematch-yes" in page and "rematch-no" in page
    bob = signed_in(api, BOB)
    bobs = bob.get("/games").text
    assert 'data-answer="yes"' in bobs and "Waiting for: P0." in bobs
    # Ann says yes from My games: the rematch starts; it is no longer pending
    yes = ann.post(f"/games/{table.uid}/rematch", data={"csrf_token": csrf(ann, "/games"),
                                                        "contribution": SHARE})
    assert yes.status_code == 303 and yes.location.endswith(f"/games/{made['game']}")
    assert game_state(api, made["game"]) == "active"
    assert 'id="account-rematches"' not in ann.get("/games").text
    # and takes the seat she was invited to, without the invitation's link
    taken = ann.post(f"/games/{invited.uid}/take/1", data={"csrf_token": csrf(ann, "/games"),
                                                           "contribution": SHARE})
    assert taken.status_code == 303 and taken.location.endswith(f"/games/{invited.uid}")
    assert api.rows("SELECT contribution FROM seats JOIN games ON games.id = seats.game_id "
                    "WHERE games.uid = :uid AND position = 1", uid=invited.uid) == [(SHARE,)]
    assert 'id="account-invitations"' not in ann.get("/games").text
    # another address's seat is not taken so
    refused = bob.post(f"/games/{invited.uid}/take/1", data={"csrf_token": csrf(bob, "/games")})
    assert refused.status_code == 404


def test_a_declined_rematch_is_shown_in_my_games(api: Api) -> None:
    table = finished(api)
    ask(api, table, 1)
    ann = signed_in(api, ANN)
    no = ann.post(f"/games/{table.uid}/rematch/no", data={"csrf_token": csrf(ann, "/games")})
    assert no.status_code == 303
    assert 'data-answer="declined"' in ann.get("/games").text
    bob = signed_in(api, BOB)
    old_page = bob.get(f"/games/{table.uid}").text
    assert 'id="rematch-declined"' in old_page and 'id="rematch-with-computer"' in old_page
    played = bob.post(f"/games/{table.uid}/rematch/settle",
                      data={"csrf_token": csrf(bob, "/games"), "play": "1"})
    assert played.status_code == 303
    new = played.location.split("/games/")[1]
    assert game_state(api, new) == "active"
