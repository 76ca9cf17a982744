"""Refused moves per seat (TITANPOST_RATE_LIMIT_REFUSALS): a seat that sends many refused moves
in a short time waits (429 with Retry-After, nothing looked at, nothing changed), whatever the
channel; another seat, and another game, are unaffected. On SQLite and PostgreSQL."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from app.service import GameService
from app.service.refusals import TooManyRefusals
from app.web.browser_seats import store_seat
from tests.apifixtures import Api, csrf_token, dispose, make_api

pytest_plugins = ["tests.apifixtures"]

LIMIT = 3


@pytest.fixture
def api(migrated_database_url: str) -> Iterator[Api]:
    made = make_api(migrated_database_url, TITANPOST_RATE_LIMIT_REFUSALS=f"{LIMIT}/minute")
    yield made
    dispose(made)


def test_a_seat_over_its_refusals_waits_on_every_channel(api: Api) -> None:
    table = api.new_started(3)
    other = api.new_started(3, prefix="q")
    position, opts = api.actor(table)
    seq = opts["seq"]
    for _ in range(LIMIT):
        status, body = api.submit(table, position, seq, "pick nothing-like-a-die")
        assert status == 422, body
    before = api.observe(table)

    status, body = api.submit(table, position, seq, opts["options"][0])  # legal, not looked at
    assert status == 429, body
    assert body["retry_after"] >= 1 and "too many of your moves were refused" in body["error"]
    assert api.observe(table) == before

    response = api.client.post(f"/api/games/{table.uid}/moves", headers=table.seat(position),
                               json={"expected_seq": seq, "input": opts["options"][0]})
    assert response.status_code == 429
    assert 1 <= int(response.headers["Retry-After"]) <= 61

    # the seat's page (and so its player in any browser) waits too, in its language
    browser = api.app.test_client()
    with browser.session_transaction() as sess:
        store_seat(sess, table.uid, position, api.service.link_seat(table.uid, position).secret)
    page = browser.get(f"/games/{table.uid}").get_data(as_text=True)
    posted = browser.post(f"/games/{table.uid}/move", data={
        "csrf_token": csrf_token(page), "seq": str(seq), "option": opts["options"][0]})
    assert posted.status_code == 429
    assert "too many of your moves were refused" in posted.get_data(as_text=True)

    # the service itself, as a reply mail reaches it
    svc: GameService = api.service
    with pytest.raises(TooManyRefusals):
        svc.submit(table.uid, position, seq, opts["options"][0])
    assert api.observe(table) == before

    # another game's seat plays on
    theirs, their_opts = api.actor(other)
    status, body = api.submit(other, theirs, their_opts["seq"], their_opts["options"][0])
    assert status == 200, body


def test_refusals_of_one_seat_do_not_hold_up_another(api: Api) -> None:
    table = api.new_started(3)
    position, opts = api.actor(table)
    waiting = next(p for p in table.tokens if p != position)
    for _ in range(LIMIT + 2):  # out of turn: refused, and counted for that seat alone
        status, _ = api.submit(table, waiting, opts["seq"], "pick red")
        assert status in (403, 429)
    status, body = api.submit(table, position, opts["seq"], opts["options"][0])
    assert status == 200, body
