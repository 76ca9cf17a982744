"""A rematch (app/rematch.py): one finished game, one new game at the same table, made by a
player over the API, the page, the mail's link or the CLI; never two."""

from __future__ import annotations

import re
import threading
from typing import Any

import pytest
from sqlalchemy.exc import IntegrityError
from sqlmodel import col, select

from app import rematch
from app.models import Seat
from app.service import find_game
from tests.apifixtures import Api, Table
from tests.test_pages import browser, csrf

pytest_plugins = ["tests.apifixtures"]


def finished(api: Api, **body: Any) -> Table:
    """A game of two players and the computer, named and with settings, both players resigned
    (the computer plays it to the end)."""
    seats = [{"email": "ann@example.com", "language": "pl", "quiet": "22-7",
              "timezone": "Europe/Warsaw"},
             {"email": "bob@example.com"}, {"bot": True}]
    table = api.accept_all(api.create(seats, name="Friday race", **body))
    api.start(table)
    for position in (0, 1):
        response = api.client.post(f"/api/games/{table.uid}/resign", headers=table.seat(position))
        assert response.status_code == 200, response.get_json()
    assert api.state(table.uid)["game"]["status"] == "finished"
    return table


def ask(api: Api, table: Table, position: int, expect: int = 201) -> dict[str, Any]:
    response = api.client.post(f"/api/games/{table.uid}/rematch", headers=table.seat(position))
    assert response.status_code == expect, response.get_json()
    data: dict[str, Any] = response.get_json()
    return data


def game_row(api: Api, uid: str) -> tuple[Any, ...]:
    [row] = api.rows("SELECT name, ruleset, variant, setup, settings, status, rematch_of, "
                     "owner_email FROM games WHERE uid = :uid", uid=uid)
    return row


def seats_of(api: Api, uid: str) -> list[tuple[Any, ...]]:
    return api.rows("SELECT position, email, is_bot, language, accepted_at IS NOT NULL "
                    "FROM seats JOIN games ON games.id = seats.game_id WHERE games.uid = :uid "
                    "ORDER BY position", uid=uid)


def test_a_player_makes_the_rematch_of_a_finished_game(api: Api) -> None:
    table = finished(api, settings={"deadline_hours": 12})
    made = ask(api, table, 1)
    assert made["made"] is True and made["rematch_of"] == table.uid
    new = made["game"]
    old_row, new_row = game_row(api, table.uid), game_row(api, new)
    assert new_row[:5] == old_row[:5]  # name, game, variant, setup, settings
    assert new_row[5] == "open" and new_row[7] == "bob@example.com"
    assert new_row[6] == api.scalar("SELECT id FROM games WHERE uid = :uid", uid=table.uid)
    # the same table: both players invited afresh, in their language; the computer kept
    assert seats_of(api, new) == [(0, "ann@example.com", False, "pl", False),
                                  (1, "bob@example.com", False, "en", False),
                                  (2, "", True, "en", True)]
    assert [i["email"] for i in made["invitations"]] == ["ann@example.com", "bob@example.com"]
    assert all(i["link"].endswith("/join/" + i["invite_token"]) for i in made["invitations"])
    invitations = api.rows("SELECT kind, recipient FROM outbox JOIN games ON games.id = "
                           "outbox.game_id WHERE games.uid = :uid ORDER BY recipient", uid=new)
    assert invitations == [("invitation", "ann@example.com"), ("invitation", "bob@example.com")]
    # Ann's quiet hours and zone came along
    notify = api.rows("SELECT notify FROM seats JOIN games ON games.id = seats.game_id "
                      "WHERE games.uid = :uid AND position = 0", uid=new)[0][0]
    assert "Europe/Warsaw" in str(notify)
    # the creator token is the maker's: it starts the game once the players are in
    api.accept_all(rematch_table(made))
    assert api.client.post(f"/api/games/{new}/start", json={},
                           headers={"X-Creator-Token": made["creator_token"]}).status_code == 200
    assert api.client.get(f"/api/games/{table.uid}/rematch").get_json() == {
        "follows": None, "rematch": new}
    assert api.client.get(f"/api/games/{new}/rematch").get_json() == {
        "follows": table.uid, "rematch": None}


def rematch_table(made: dict[str, Any]) -> Table:
    return Table(made["game"], made["creator_token"],
                 {i["position"]: i["invite_token"] for i in made["invitations"]},
                 {i["position"]: i["email"] for i in made["invitations"]})


def test_a_second_ask_is_given_the_rematch_made(api: Api) -> None:
    table = finished(api)
    first = ask(api, table, 0)
    again = ask(api, table, 1)
    assert again == {"game": first["game"], "rematch_of": table.uid, "made": False}
    assert ask(api, table, 0)["game"] == first["game"]
    assert api.scalar("SELECT count(*) FROM games") == 2


def test_the_unique_key_keeps_one_rematch_when_two_ask_at_once(api: Api) -> None:
    table = finished(api)
    with api.service.session() as s:  # both read before either wrote: the race's worst case
        game = find_game(s, table.uid)
        seats = list(s.exec(select(Seat).where(Seat.game_id == game.id)
                            .order_by(col(Seat.position))).all())
        spec = rematch._spec(game, seats)
    first = rematch.make(api.service, table.uid, spec, owner="ann@example.com")
    second = rematch.make(api.service, table.uid, spec, owner="bob@example.com")
    assert first["made"] is True and second == {"game": first["game"], "rematch_of": table.uid,
                                                "made": False}
    with pytest.raises(IntegrityError):  # the database itself refuses a second one
        api.service.create_game(**spec)
    results: list[dict[str, Any]] = []
    other = finished(api)
    threads = [threading.Thread(target=lambda p=p: results.append(
        rematch.rematch(api.service, other.uid, p))) for p in (0, 1, 0, 1)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len({r["game"] for r in results}) == 1 and sum(r["made"] for r in results) == 1
    assert api.scalar("SELECT count(*) FROM games WHERE rematch_of IS NOT NULL") == 2


def test_only_a_finished_game_and_only_its_players(api: Api) -> None:
    table = api.new_started(3)
    refused = ask(api, table, 0, expect=409)
    assert "finished" in refused["error"]
    over = finished(api)
    assert api.client.post(f"/api/games/{over.uid}/rematch").status_code == 401
    # another game's seat is not this game's player
    assert ask(api, Table(over.uid, "", {}, {}, {0: table.tokens[0]}), 0,
               expect=403)["error"]
    assert api.scalar("SELECT count(*) FROM games WHERE rematch_of IS NOT NULL") == 0


def test_the_great_race_is_followed_by_the_great_race(api: Api) -> None:
    table = finished(api, game="great-race", variant="standard")
    made = ask(api, table, 0)
    assert game_row(api, made["game"])[:5] == game_row(api, table.uid)[:5]
    assert game_row(api, made["game"])[1] == "great-race"


def game_over_mail(api: Api, uid: str, to: str) -> str:
    """The text of the game-over mail to ``to`` as the outbox page shows it."""
    [mail_id] = [row[0] for row in api.rows(
        "SELECT outbox.id FROM outbox JOIN games ON games.id = outbox.game_id WHERE "
        "games.uid = :uid AND kind = 'game_over' AND recipient = :to", uid=uid, to=to)]
    page = api.client.get(f"/dev/mail/{mail_id}")
    assert page.status_code == 200
    return page.text


def test_the_game_over_mail_links_a_page_that_asks_first(api: Api) -> None:
    table = finished(api)
    text = game_over_mail(api, table.uid, "bob@example.com")
    found = re.search(r"(/g/[A-Za-z0-9_.\-]+/rematch)", text)
    assert found, text
    link = found.group(1)
    client = browser(api)
    page = client.get(link)  # a GET (a mail scanner, a preview) makes nothing
    assert page.status_code == 200 and 'id="rematch-button"' in page.text
    assert api.scalar("SELECT count(*) FROM games") == 1
    token = csrf(client, link)
    made = client.post(link, data={"csrf_token": token})
    assert made.status_code == 303 and "/setup" in made.location
    new = made.location.split("/games/")[1].split("/")[0]
    assert api.scalar("SELECT owner_email FROM games WHERE uid = :uid",
                      uid=new) == "bob@example.com"
    # the maker's browser holds the creator token: its set-up page offers the start
    assert client.get(made.location).status_code == 200
    # the old game's page links the rematch; the new one says which game it follows
    old_page = client.get(f"/games/{table.uid}").text
    assert f'href="/games/{new}"' in old_page and 'id="rematch-button"' not in old_page
    assert f'href="/games/{table.uid}"' in client.get(f"/games/{new}").text
    # Ann's mail link, later: the page says it is made, and a POST goes to it
    ann = game_over_mail(api, table.uid, "ann@example.com")
    ann_link = re.search(r"(/g/[A-Za-z0-9_.\-]+/rematch)", ann)
    assert ann_link
    other = browser(api)
    assert f'href="/games/{new}"' in other.get(ann_link.group(1)).text
    again = other.post(ann_link.group(1), data={"csrf_token": csrf(other, "/new")})
    assert again.status_code == 303 and again.location.endswith(f"/games/{new}")
    assert api.scalar("SELECT count(*) FROM games") == 2


def test_the_game_page_button_is_for_players_only(api: Api) -> None:
    table = finished(api)
    spectator = browser(api)
    page = spectator.get(f"/games/{table.uid}").text
    assert 'id="rematch-button"' not in page
    refused = spectator.post(f"/games/{table.uid}/rematch",
                             data={"csrf_token": csrf(spectator, "/new")})
    assert refused.status_code == 403
    assert api.scalar("SELECT count(*) FROM games") == 1


def test_a_damaged_mail_link_makes_nothing(api: Api) -> None:
    table = finished(api)
    link = re.search(r"(/g/[A-Za-z0-9_.\-]+)/rematch",
                     game_over_mail(api, table.uid, "ann@example.com"))
    assert link
    client = browser(api)
    damaged = link.group(1)[:-3] + "xyz/rematch"
    assert client.get(damaged).status_code == 404
    assert api.scalar("SELECT count(*) FROM games") == 1


def test_an_idempotent_repeat_gets_the_first_answer(api: Api) -> None:
    table = finished(api)
    key = {"Idempotency-Key": "a5a2bb55-5f3e-4d0f-9d3b-2b8f7a0e1c11", **table.seat(0)}
    first = api.client.post(f"/api/games/{table.uid}/rematch", headers=key)
    again = api.client.post(f"/api/games/{table.uid}/rematch", headers=key)
    assert first.status_code == again.status_code == 201
    assert first.get_json()["made"] is True and again.get_json() == first.get_json()
    assert again.headers.get("Idempotent-Replayed") == "true"
