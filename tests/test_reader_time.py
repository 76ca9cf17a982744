"""Chat and log times in the reader's time zone (app/core/readertime.py): a seat's pages and mails
show them on the clock of the zone it set, the zone named; a spectator reads UTC."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from zoneinfo import ZoneInfo

from flask.testing import FlaskClient

from app.core.readertime import reader_time, zone_of
from app.web.linktokens import make_game_token
from tests.apifixtures import Api, Table
from tests.test_pages import browser, csrf

pytest_plugins = ["tests.apifixtures"]

TOKYO = "Asia/Tokyo"


def tokyo_game(api: Api) -> Table:
    """Seat 1 in Tokyo, seat 2 without a zone; seat 2 wrote in the chat; the log has a move
    (the computer's if the deal seats it first, else the first player's)."""
    table = api.accept_all(api.create([{"email": "ann@example.com", "timezone": TOKYO},
                                       {"email": "bob@example.com"}, {"bot": True}]))
    api.start(table)
    if not api.log(table.uid):
        api.play(table, 1)
    posted = api.client.post(f"/api/games/{table.uid}/chat", json={"text": "Hello from Bob"},
                             headers=table.seat(1))
    assert posted.status_code == 201
    return table


def written_at(api: Api, text: str) -> datetime:
    moment: datetime | str = api.scalar("SELECT created_at FROM chat_messages WHERE text = :t",
                                        t=text)
    if isinstance(moment, str):
        moment = datetime.fromisoformat(moment)
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def seat_browser(api: Api, uid: str, position: int) -> FlaskClient:
    """A browser that opened the game from seat ``position``'s mail link."""
    secret = api.scalar("SELECT secret FROM seats JOIN games ON games.id = seats.game_id "
                        "WHERE games.uid = :uid AND position = :p", uid=uid, p=position)
    link = f"/g/{make_game_token(api.service.settings.secret_key, secret, uid, position)}"
    client = browser(api)
    assert client.post(link, data={"csrf_token": csrf(client, link)}).status_code == 303
    return client


def test_the_words_of_a_time() -> None:
    moment = datetime(2026, 11, 27, 23, 30, tzinfo=UTC)
    assert reader_time(moment, TOKYO) == "2026-11-28 08:30 Asia/Tokyo"
    assert reader_time("2026-11-27T23:30:00Z", None) == "2026-11-27 23:30 UTC"
    assert reader_time("2026-11-27T23:30:00", "Not/AZone") == "2026-11-27 23:30 UTC"
    assert zone_of({"timezone": TOKYO}) == TOKYO and zone_of({"timezone": "x"}) is None


def test_the_game_page_and_log_show_the_seats_clock(api: Api) -> None:
    table = tokyo_game(api)
    at = written_at(api, "Hello from Bob")
    tokyo = f"{at.astimezone(ZoneInfo(TOKYO)):%Y-%m-%d %H:%M} Asia/Tokyo"
    utc = f"{at.astimezone(UTC):%Y-%m-%d %H:%M} UTC"
    ann = seat_browser(api, table.uid, 0)
    page = ann.get(f"/games/{table.uid}").text
    assert tokyo in page and utc not in page
    first_move = api.log(table.uid)[0]["created_at"]
    log = ann.get(f"/games/{table.uid}/log").text
    assert reader_time(first_move, TOKYO) in log
    # a spectator, and a seat without a zone: UTC, named
    for reader in (browser(api), seat_browser(api, table.uid, 1)):
        assert utc in reader.get(f"/games/{table.uid}").text
        assert reader_time(first_move, None) in reader.get(f"/games/{table.uid}/log").text


def test_a_mails_chat_shows_the_seats_clock(api: Api) -> None:
    table = tokyo_game(api)
    at = written_at(api, "Hello from Bob")
    [mail_id] = [row[0] for row in api.rows(
        "SELECT outbox.id FROM outbox JOIN games ON games.id = outbox.game_id WHERE "
        "games.uid = :uid AND recipient = 'ann@example.com' ORDER BY outbox.id DESC LIMIT 1",
        uid=table.uid)]
    text = api.client.get(f"/dev/mail/{mail_id}").text
    assert "Hello from Bob" in text
    assert re.search(re.escape(f"{at.astimezone(ZoneInfo(TOKYO)):%Y-%m-%d %H:%M} Asia/Tokyo"),
                     text), text
