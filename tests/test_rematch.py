"""A rematch (app/features/rematch/rematches.py): one finished game, one new game at the same table,
made by a player over the API, the page, the mail's link or the CLI; never two. Each seat of it
stays its own player's: tests/test_rematch_seats.py."""

from __future__ import annotations

import json
import re
import threading
from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy.exc import IntegrityError
from sqlmodel import col, select

from app.core.models import Seat
from app.features.rematch import rematches as rematch
from app.service import find_game
from tests.apifixtures import Api, Table, bearer
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
    assert new_row[0] == "Friday race (2)"  # the evening's next game, numbered
    assert new_row[1:5] == old_row[1:5]  # game, variant, setup, settings
    assert new_row[5] == "open" and new_row[7] == "bob@example.com"
    assert new_row[6] == api.scalar("SELECT id FROM games WHERE uid = :uid", uid=table.uid)
    # the same table: Bob, who asked, has his seat at once (his yes); Ann's is kept for her,
    # in her language, with no invitation; the computer kept at its level
    assert seats_of(api, new) == [(0, "ann@example.com", False, "pl", False),
                                  (1, "bob@example.com", False, "en", True),
                                  (2, "", True, "en", True)]
    assert made["position"] == 1 and made["asked"] == [0] and "invitations" not in made
    assert api.scalar("SELECT count(*) FROM seats WHERE invite_token_hash IS NOT NULL") == 0
    assert api.client.get("/api/me", headers=bearer(made["api_token"])).get_json() == {
        "game": new, "position": 1, "email": "bob@example.com"}
    # Ann is asked "play again?" once, by a mail about her seat of the old game
    asked = api.rows("SELECT kind, recipient, games.uid FROM outbox JOIN games ON games.id = "
                     "outbox.game_id WHERE kind = 'rematch' OR (kind = 'invitation' AND "
                     "games.rematch_of IS NOT NULL) ORDER BY outbox.id")
    assert asked == [("rematch", "ann@example.com", table.uid)]
    # Ann's quiet hours and zone came along
    notify = api.rows("SELECT notify FROM seats JOIN games ON games.id = seats.game_id "
                      "WHERE games.uid = :uid AND position = 0", uid=new)[0][0]
    assert "Europe/Warsaw" in str(notify)
    # Bob's share of the deal does not start it: Ann has not answered
    given = api.client.post(f"/api/games/{new}/contribution", json={"contribution": "ab" * 32},
                            headers=bearer(made["api_token"]))
    assert given.status_code == 200 and given.get_json()["started"] is False
    answers = api.client.get(f"/api/games/{table.uid}/rematch").get_json()["answers"]
    assert answers["waiting"] == ["P0"] and answers["status"] == "open"
    # Ann's yes, the last one, starts it
    yes = api.client.post(f"/api/games/{table.uid}/rematch/join",
                          json={"contribution": "cd" * 32}, headers=table.seat(0))
    assert yes.status_code == 201 and yes.get_json()["started"] is True
    assert game_row(api, new)[5] == "active"
    assert api.client.get(f"/api/games/{table.uid}/rematch").get_json()["rematch"] == new
    assert api.client.get(f"/api/games/{new}/rematch").get_json() == {
        "follows": table.uid, "rematch": None, "answers": None}


def test_against_the_computer_the_rematch_starts_with_the_makers_share(api: Api) -> None:
    table = api.accept_all(api.create([{"email": "ann@example.com"},
                                       {"bot": True}, {"bot": True}]))
    api.start(table)
    api.client.post(f"/api/games/{table.uid}/resign", headers=table.seat(0))
    with api.engine.begin() as conn:  # (the level a seat ended at is the one kept)
        conn.execute(sa.text("UPDATE seats SET bot_level = 'normal' WHERE position = 1"))
    made = ask(api, table, 0)
    assert made["asked"] == [] and game_row(api, made["game"])[5] == "open"
    assert api.rows("SELECT is_bot, bot_level FROM seats JOIN games ON games.id = "
                    "seats.game_id WHERE games.uid = :uid AND position = 1",
                    uid=made["game"]) == [(True, "normal")]
    given = api.client.post(f"/api/games/{made['game']}/contribution",
                            json={"contribution": "ef" * 32}, headers=bearer(made["api_token"]))
    assert given.get_json()["started"] is True and game_row(api, made["game"])[5] == "active"
    assert not api.rows("SELECT id FROM outbox WHERE kind = 'rematch'")


def test_a_declined_rematch_is_shown_then_settled(api: Api) -> None:
    """Bob asks, Ann says no: the rematch shows it and waits; Bob may cancel it or play with
    the computer in Ann's seat; Ann may still say yes while it waits."""
    url = None
    for play in (False, True):
        table = finished(api)
        made = ask(api, table, 1)
        url = f"/api/games/{table.uid}/rematch"
        settle = f"{url}/settle"
        assert api.client.post(settle, json={"play": True},
                               headers=table.seat(1)).status_code == 409  # Ann has not answered
        no = api.client.post(f"{url}/decline", headers=table.seat(0))
        assert no.status_code == 200, no.get_json()
        answers = api.client.get(url).get_json()["answers"]
        assert answers["declined"] == ["P0"] and answers["settle"] is True
        assert [row["answer"] for row in answers["seats"]] == ["declined", "yes", "computer"]
        assert api.client.post(settle, json={"play": True},
                               headers=table.seat(0)).status_code == 403  # she said no
        done = api.client.post(settle, json={"play": play}, headers=table.seat(1))
        assert done.status_code == 200, done.get_json()
        row = game_row(api, made["game"])
        if play:
            assert row[5] == "active"
            assert seats_of(api, made["game"])[0][1:3] == ("", True)  # the computer's now
        else:
            assert row[5] == "abandoned"
    # a no, then a yes while it waits: it starts
    table = finished(api)
    made = ask(api, table, 1)
    url = f"/api/games/{table.uid}/rematch"
    api.client.post(f"{url}/decline", headers=table.seat(0))
    yes = api.client.post(f"{url}/join", json={}, headers=table.seat(0))
    assert yes.status_code == 201 and yes.get_json()["started"] is True


def mailed_invitation(api: Api, uid: str, to: str) -> str:
    """The invitation token of the newest invitation mail of game ``uid`` to ``to``."""
    links = [row[0] for row in api.rows(
        "SELECT payload FROM outbox JOIN games ON games.id = outbox.game_id WHERE "
        "games.uid = :uid AND kind = 'invitation' AND recipient = :to ORDER BY outbox.id",
        uid=uid, to=to)]
    assert links, f"no invitation mail to {to}"
    link = links[-1]["link"] if isinstance(links[-1], dict) else json.loads(links[-1])["link"]
    return str(link).rsplit("/join/", 1)[1]


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
    first = rematch.make(api.service, table.uid, spec, owner="ann@example.com", seated=0)
    second = rematch.make(api.service, table.uid, spec, owner="bob@example.com", seated=1)
    assert first["made"] is True and second == {"game": first["game"], "rematch_of": table.uid,
                                                "made": False}
    # the second asker took nothing: their seat still waits for them
    assert [row[4] for row in seats_of(api, first["game"])] == [True, False, True]
    assert api.scalar("SELECT count(*) FROM api_tokens WHERE label = 'rematch'") == 1
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
    [maker] = [r for r in results if r["made"]]
    taken = [row[4] for row in seats_of(api, maker["game"])]
    assert taken == [maker["position"] == 0, maker["position"] == 1, True]
    assert api.scalar("SELECT count(*) FROM api_tokens WHERE label = 'rematch'") == 2


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
    assert game_row(api, made["game"])[1:5] == game_row(api, table.uid)[1:5]
    assert game_row(api, made["game"])[1] == "great-race"


@pytest.mark.parametrize(("name", "after"), [
    ("Friday race", "Friday race (2)"), ("Friday race (2)", "Friday race (3)"),
    ("Friday race (9)", "Friday race (10)"), ("Race (of 3) (0)", "Race (of 3) (0) (2)"),
    ("", ""), ("x" * 200, "x" * 196 + " (2)"),
])
def test_a_rematch_is_numbered(name: str, after: str) -> None:
    assert rematch.next_name(name) == after


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
    new = made.location.split("/games/")[1].split("/")[0]
    assert made.status_code == 303 and made.location.endswith(f"/games/{new}")
    assert api.scalar("SELECT owner_email FROM games WHERE uid = :uid",
                      uid=new) == "bob@example.com"
    # the maker's browser plays Bob's seat of the new game; its page sends the browser's
    # share of the deal (the script fills the form) and says whom it waits for
    rematch_page = client.get(made.location).text
    assert 'id="share-form"' in rematch_page and "/join/" not in rematch_page
    assert 'id="rematch-waiting"' in rematch_page and 'data-answer="yes"' in rematch_page
    assert client.get(f"/games/{new}/me").status_code == 200
    # the old game's page links the rematch; the new one says which game it follows
    old_page = client.get(f"/games/{table.uid}").text
    assert f'href="/games/{new}"' in old_page and 'id="rematch-button"' not in old_page
    assert 'id="join-rematch-button"' not in old_page  # (Bob has said yes)
    assert f'href="/games/{table.uid}"' in client.get(f"/games/{new}").text
    # Ann's "play again?" mail links the same kind of page: it offers her yes (with the
    # rematch's commitment) and her no; the GET changes nothing
    ann_link = re.search(r"(/g/[A-Za-z0-9_.\-]+/rematch)", rematch_mail(api, "ann@example.com"))
    assert ann_link
    other = browser(api)
    offer = other.get(ann_link.group(1)).text
    commitment = api.state(new)["game"]["fairness"]["commitment"]
    assert f'href="/games/{new}"' in offer and 'id="join-rematch-button"' in offer
    assert 'id="decline-rematch-button"' in offer and commitment in offer
    assert game_state(api, new) == "open"
    share = "ab" * 32
    joined = other.post(ann_link.group(1), data={"csrf_token": csrf(other, "/new"),
                                                 "contribution": share})
    assert joined.status_code == 303 and joined.location.endswith(f"/games/{new}")
    assert api.rows("SELECT position, contribution FROM seats JOIN games ON games.id = "
                    "seats.game_id WHERE games.uid = :uid AND NOT is_bot ORDER BY position",
                    uid=new)[0] == (0, share)
    assert game_state(api, new) == "active"  # her yes was the last: it has started
    assert other.get(f"/games/{new}/me").status_code == 200  # her browser plays her seat
    assert 'id="join-rematch-button"' not in other.get(ann_link.group(1)).text
    assert api.scalar("SELECT count(*) FROM games") == 2


def rematch_mail(api: Api, to: str) -> str:
    """The text of the newest "play again?" mail to ``to`` as the outbox page shows it."""
    mail_id = api.rows("SELECT id FROM outbox WHERE kind = 'rematch' AND recipient = :to "
                       "ORDER BY id DESC", to=to)[0][0]
    page = api.client.get(f"/dev/mail/{mail_id}")
    assert page.status_code == 200
    return page.text


def game_state(api: Api, uid: str) -> str:
    return str(api.scalar("SELECT status FROM games WHERE uid = :uid", uid=uid))


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
