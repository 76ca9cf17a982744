"""Signed links from the mails (/l/<token>, /g/<token>), on migrated SQLite and PostgreSQL.

A GET (or HEAD) never changes anything: the database rows and the browser's seats are compared
before and after. A POST with the page's CSRF token plays the option. Forged, expired, damaged,
reused and stale links, links for another seat and POSTs without a CSRF token are refused with a
page saying which, and nothing changes.
"""

from __future__ import annotations

import html
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
import sqlalchemy as sa
from itsdangerous import TimestampSigner
from werkzeug.test import TestResponse

from app.service import GameService
from app.web.browser_seats import store_seat
from app.web.links import game_link, option_link
from app.web.linktokens import (
    GAME_LINK_MAX_AGE,
    OPTION_LINK_MAX_AGE,
    OptionLink,
    make_game_token,
    make_option_token,
)
from app.web.linkwords import describe_decision, describe_option
from tests.apifixtures import SEED, Api, dispose, make_api

BASE_URL = "https://titanpost.example"
CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')


@dataclass
class Game:
    uid: str
    creator_token: str
    names: dict[int, str]


@pytest.fixture
def api(migrated_database_url: str) -> Iterator[Api]:
    made = make_api(migrated_database_url, TITANPOST_BASE_URL=BASE_URL)
    yield made
    dispose(made)


def new_game(svc: GameService, languages: tuple[str, ...] = ("en", "en", "en")) -> Game:
    names = {i: f"Player{i}" for i in range(len(languages))}
    created = svc.create_game(
        seats=[
            {"email": f"link{i}@example.com", "name": names[i], "language": lang}
            for i, lang in enumerate(languages)
        ],
        seed=SEED,
    )
    for invitation in created["invitations"]:
        svc.accept(invitation["invite_token"])
    svc.start(created["game"], created["creator_token"])
    return Game(created["game"], created["creator_token"], names)


def pending(svc: GameService, uid: str) -> tuple[int, int, list[str]]:
    """(seat to act, seq, legal options) of the game's pending decision."""
    to_act = svc.state(uid, None)["game"]["to_act"]
    assert len(to_act) == 1, to_act
    options = svc.options(uid, to_act[0])
    assert options["yours"] and options["options"]
    return to_act[0], options["seq"], options["options"]


def secret(svc: GameService, uid: str, position: int) -> str:
    return svc.link_seat(uid, position).secret


def path_of(api: Api, uid: str, position: int, seq: int, option: str) -> str:
    url = option_link(api.service.settings, secret(api.service, uid, position), uid, position,
                      seq, option)
    assert url.startswith(BASE_URL + "/l/")
    return url.removeprefix(BASE_URL)


def token_path(api: Api, seat_secret: str, link: OptionLink) -> str:
    return "/l/" + make_option_token(api.service.settings.secret_key, seat_secret, link)


def db_rows(api: Api) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every table (what a refused or read-only request must leave alone)."""
    rows: dict[str, list[tuple[Any, ...]]] = {}
    with api.engine.connect() as conn:
        for table in sorted(sa.inspect(conn).get_table_names()):
            result = conn.execute(sa.text(f'SELECT * FROM "{table}"'))
            rows[table] = sorted((tuple(str(v) for v in row) for row in result), key=repr)
    return rows


def moves(api: Api, uid: str) -> list[tuple[int, int | None, str]]:
    return [
        (int(seq), seat, str(text))
        for seq, seat, text in api.rows(
            "SELECT seq, seat, input FROM moves JOIN games ON games.id = moves.game_id "
            "WHERE games.uid = :uid ORDER BY seq",
            uid=uid,
        )
    ]


def seats_in_session(api: Api) -> dict[str, int]:
    with api.client.session_transaction() as sess:
        return dict(sess.get("seats", {}))


def set_session_seat(api: Api, uid: str, position: int) -> None:
    secret = api.service.link_seat(uid, position).secret
    with api.client.session_transaction() as sess:
        sess.pop("seats", None)
        store_seat(sess, uid, position, secret)


def csrf_token(response: TestResponse) -> str:
    found = CSRF.search(response.get_data(as_text=True))
    assert found, response.get_data(as_text=True)
    return found.group(1)


def page(response: TestResponse) -> str:
    text = html.unescape(response.get_data(as_text=True))
    return re.sub(r"\s+", " ", text)


def fresh_csrf(api: Api, path: str) -> str:
    """A valid CSRF token of this browser's session, from a confirm page."""
    response = api.client.get(path)
    assert response.status_code == 200, page(response)
    return csrf_token(response)


class Unchanged:
    """Asserts that the database and this browser's seats are as they were."""

    def __init__(self, api: Api) -> None:
        self.api = api

    def __enter__(self) -> Unchanged:
        self.rows = db_rows(self.api)
        self.seats = seats_in_session(self.api)
        return self

    def __exit__(self, kind: Any, *_: Any) -> None:
        if kind is None:
            assert db_rows(self.api) == self.rows
            assert seats_in_session(self.api) == self.seats


# ---------------------------------------------------------------------- following a link


def test_follow_a_link_through_the_confirm_page_to_the_applied_move(api: Api) -> None:
    svc = api.service
    game = new_game(svc)
    position, seq, options = pending(svc, game.uid)
    option = options[0]
    path = path_of(api, game.uid, position, seq, option)
    before = moves(api, game.uid)

    with Unchanged(api):
        response = api.client.get(path)
        assert response.status_code == 200
        text = page(response)
        assert option in text and "<svg" in text
        assert "Confirm your move" in text and game.names[position] in text
        assert describe_option(option, "en") in text
        assert "must pick a die" in text  # the situation in words
        assert "The board after this choice:" in text  # picking a die moves no Titan
        assert f'href="/games/{game.uid}"' in text
        assert response.headers["Cache-Control"] == "no-store"
        token = csrf_token(response)
        head = api.client.head(path)
        assert head.status_code == 200
    assert seats_in_session(api) == {}

    response = api.client.post(path, data={"csrf_token": token})
    assert response.status_code == 303, page(response)
    assert response.headers["Location"].endswith(f"/games/{game.uid}")
    assert moves(api, game.uid) == [*before, (seq + 1, position, option)]
    assert seats_in_session(api) == {game.uid: position}
    with api.client.session_transaction() as sess:
        flashes = [message for _, message in sess.get("_flashes", [])]
    assert any(option in message for message in flashes), flashes
    game_page = api.client.get(response.headers["Location"])  # (app/web/pages/play.py)
    assert game_page.status_code == 200 and "Done: your move" in page(game_page)


def test_a_move_whose_outcome_is_chance_shows_the_board_now(api: Api) -> None:
    """A preview never reveals a roll: the page shows the current board and says why."""
    svc = api.service
    game = new_game(svc)
    for _ in range(60):
        position, seq, options = pending(svc, game.uid)
        chancy = [o for o in options if svc.preview(game.uid, position, o) is None]
        if chancy:
            break
        svc.submit(game.uid, position, seq, options[0])
    else:
        pytest.fail("no option with a random outcome in 60 decisions")
    path = path_of(api, game.uid, position, seq, chancy[0])
    with Unchanged(api):
        response = api.client.get(path)
    assert response.status_code == 200
    text = page(response)
    assert "depends on chance" in text and "<svg" in text and chancy[0] in text


def test_the_board_after_the_choice_outlines_the_new_space(api: Api) -> None:
    svc = api.service
    game = new_game(svc)
    position, seq, options = pending(svc, game.uid)
    svc.submit(game.uid, position, seq, options[0])  # pick a die; then choose a start space
    position, seq, options = pending(svc, game.uid)
    start = next(o for o in options if o.startswith("start "))
    response = api.client.get(path_of(api, game.uid, position, seq, start))
    assert response.status_code == 200
    text = page(response)
    assert "choose a start space" in text and f"Start on {start.split()[1]}" in text
    assert "depends on chance" not in text and "<svg" in text
    assert "the new space is outlined" in text and 'stroke="#e64980"' in text  # HIGHLIGHT


# ---------------------------------------------------------------------- security


def test_a_forged_signature_is_refused(api: Api) -> None:
    svc = api.service
    game = new_game(svc)
    position, seq, options = pending(svc, game.uid)
    good = path_of(api, game.uid, position, seq, options[0])
    other = path_of(api, game.uid, position, seq, options[1])
    token = fresh_csrf(api, good)
    body, stamp, signature = good.removeprefix("/l/").split(".")
    flipped = ("B" if signature[0] == "A" else "A") + signature[1:]
    tampered = [
        f"/l/{body}.{stamp}.{flipped}",  # a changed signature
        "/l/" + ".".join([other.removeprefix("/l/").split(".")[0], stamp, signature]),  # option
        token_path(api, "not-the-seat-secret", OptionLink(game.uid, position, seq, options[0])),
    ]
    for path in tampered:
        with Unchanged(api):
            for response in (
                api.client.get(path),
                api.client.post(path, data={"csrf_token": token}),
            ):
                assert response.status_code == 400, path
                text = page(response)
                assert "forged" in text.lower() and "Nothing was changed" in text
                assert f'href="/games/{game.uid}"' in text


def test_a_link_for_another_seat_cannot_act_for_it(api: Api) -> None:
    svc = api.service
    game = new_game(svc)
    owner, seq, options = pending(svc, game.uid)
    other = (owner + 1) % 3
    link = OptionLink(game.uid, owner, seq, options[0])
    valid = path_of(api, game.uid, owner, seq, options[0])
    token = fresh_csrf(api, valid)

    # signed with another seat's secret but naming the owner's seat: forged
    with Unchanged(api):
        path = token_path(api, secret(svc, game.uid, other), link)
        for response in (api.client.get(path), api.client.post(path, data={"csrf_token": token})):
            assert response.status_code == 400
            assert "forged" in page(response).lower()

    # a real link of a seat whose decision it is not
    with Unchanged(api):
        path = path_of(api, game.uid, other, seq, options[0])
        for response in (api.client.get(path), api.client.post(path, data={"csrf_token": token})):
            assert response.status_code == 409
            assert "not yours" in page(response)

    # the owner's valid link followed in a browser that plays another seat
    set_session_seat(api, game.uid, other)
    with Unchanged(api):
        for response in (
            api.client.get(valid),
            api.client.post(valid, data={"csrf_token": token}),
        ):
            assert response.status_code == 403
            text = page(response)
            assert f"belongs to {game.names[owner]}'s seat" in text
            assert "cannot act for someone else" in text
    assert seats_in_session(api) == {game.uid: other}


def test_a_link_replayed_after_its_decision_is_refused(api: Api) -> None:
    svc = api.service
    game = new_game(svc)
    position, seq, options = pending(svc, game.uid)
    used = path_of(api, game.uid, position, seq, options[0])
    sibling = path_of(api, game.uid, position, seq, options[1])
    token = fresh_csrf(api, used)
    assert api.client.post(used, data={"csrf_token": token}).status_code == 303
    after = moves(api, game.uid)

    with Unchanged(api):
        for response in (api.client.get(used), api.client.post(used, data={"csrf_token": token})):
            assert response.status_code == 409
            text = page(response)
            assert "already used" in text and options[0] in text
            assert f'href="/games/{game.uid}"' in text
        for response in (
            api.client.get(sibling),
            api.client.post(sibling, data={"csrf_token": token}),
        ):
            assert response.status_code == 409
            text = page(response)
            assert "the game moved on" in text.lower() and "already used" not in text
    assert moves(api, game.uid) == after


def test_a_link_answered_through_another_way_is_already_used(api: Api) -> None:
    """The same answer arrived by the API or mail first: the link says it is in the game."""
    svc = api.service
    game = new_game(svc)
    position, seq, options = pending(svc, game.uid)
    path = path_of(api, game.uid, position, seq, options[1])
    svc.submit(game.uid, position, seq, options[1])
    response = api.client.get(path)
    assert response.status_code == 409 and "already used" in page(response)


def test_an_expired_link_is_refused(api: Api, monkeypatch: pytest.MonkeyPatch) -> None:
    svc = api.service
    game = new_game(svc)
    position, seq, options = pending(svc, game.uid)
    token = fresh_csrf(api, path_of(api, game.uid, position, seq, options[0]))
    long_ago = int(time.time()) - max(OPTION_LINK_MAX_AGE, GAME_LINK_MAX_AGE) - 60
    with monkeypatch.context() as patch:
        patch.setattr(TimestampSigner, "get_timestamp", lambda self: long_ago)
        old = path_of(api, game.uid, position, seq, options[0])
        old_game = "/g/" + make_game_token(
            svc.settings.secret_key, secret(svc, game.uid, position), game.uid, position
        )
    for path in (old, old_game):
        with Unchanged(api):
            for response in (
                api.client.get(path),
                api.client.post(path, data={"csrf_token": token}),
            ):
                assert response.status_code == 410, path
                text = page(response)
                assert "expired" in text and f'href="/games/{game.uid}"' in text


def test_a_post_without_csrf_token_is_refused(api: Api) -> None:
    svc = api.service
    game = new_game(svc)
    position, seq, options = pending(svc, game.uid)
    path = path_of(api, game.uid, position, seq, options[0])
    game_path = game_link(svc.settings, secret(svc, game.uid, position), game.uid, position)
    game_path = game_path.removeprefix(BASE_URL)
    fresh_csrf(api, path)  # the session holds a CSRF token; the form does not send it
    for target in (path, game_path):
        with Unchanged(api):
            for data in ({}, {"csrf_token": "not-the-token"}):
                response = api.client.post(target, data=data)
                assert response.status_code == 400
                text = page(response)
                assert "CSRF" in text and "nothing was done" in text
                assert f'href="/games/{game.uid}"' in text


def test_damaged_and_unknown_links(api: Api) -> None:
    svc = api.service
    game = new_game(svc)
    position, seq, options = pending(svc, game.uid)
    with Unchanged(api):
        huge = token_path(api, "whatever", OptionLink(game.uid, 10**20, seq, options[0]))
        for path in ("/l/garbage", "/g/not.a.token", "/l/" + "x" * 40, huge):
            response = api.client.get(path)
            assert response.status_code == 400 and "damaged" in page(response)
        nowhere = OptionLink("0" * 32, position, seq, options[0])
        response = api.client.get(token_path(api, "whatever", nowhere))
        assert response.status_code == 404 and "does not know" in page(response)
        no_seat = OptionLink(game.uid, 9, seq, options[0])
        response = api.client.get(token_path(api, "whatever", no_seat))
        assert response.status_code == 400 and "forged" in page(response)


def test_a_finished_or_abandoned_game_says_so(api: Api) -> None:
    svc = api.service
    game = new_game(svc)
    position, seq, options = pending(svc, game.uid)
    path = path_of(api, game.uid, position, seq, options[0])
    token = fresh_csrf(api, path)
    svc.abandon(game.uid, game.creator_token)
    with Unchanged(api):
        for response in (api.client.get(path), api.client.post(path, data={"csrf_token": token})):
            assert response.status_code == 410
            assert "abandoned" in page(response)


# ---------------------------------------------------------------------- game links


def test_a_game_link_opens_the_game_only_by_its_button(api: Api) -> None:
    svc = api.service
    game = new_game(svc)
    url = game_link(svc.settings, secret(svc, game.uid, 1), game.uid, 1)
    assert url.startswith(BASE_URL + "/g/")
    path = url.removeprefix(BASE_URL)
    with Unchanged(api):
        response = api.client.get(path)
        assert response.status_code == 200
        text = page(response)
        assert f"Open this game as {game.names[1]}" in text
        assert api.client.head(path).status_code == 200
    response = api.client.post(path, data={"csrf_token": csrf_token(response)})
    assert response.status_code == 303
    assert response.headers["Location"].endswith(f"/games/{game.uid}")
    assert seats_in_session(api) == {game.uid: 1}

    forged = "/g/" + make_game_token(svc.settings.secret_key, secret(svc, game.uid, 0),
                                     game.uid, 1)
    with Unchanged(api):
        response = api.client.get(forged)
        assert response.status_code == 400 and "forged" in page(response).lower()
        # an option link is not a game link
        position, seq, options = pending(svc, game.uid)
        option_path = path_of(api, game.uid, position, seq, options[0])
        response = api.client.get("/g/" + option_path.removeprefix("/l/"))
        assert response.status_code == 400 and "forged" in page(response).lower()


# ---------------------------------------------------------------------- Polish


def test_pages_speak_polish_to_a_polish_seat(api: Api) -> None:
    svc = api.service
    game = new_game(svc, ("pl", "pl", "pl"))
    position, seq, options = pending(svc, game.uid)
    path = path_of(api, game.uid, position, seq, options[0])
    response = api.client.get(path)
    assert response.status_code == 200
    text = page(response)
    assert 'lang="pl"' in text and "Potwierdź swój ruch" in text
    assert describe_option(options[0], "pl") in text
    body, stamp, signature = path.removeprefix("/l/").split(".")
    flipped = ("B" if signature[0] == "A" else "A") + signature[1:]
    response = api.client.get(f"/l/{body}.{stamp}.{flipped}")
    assert response.status_code == 400 and "Sfałszowany link" in page(response)
    response = api.client.post(path)
    assert response.status_code == 400 and "ochrona CSRF" in page(response)


def test_lang_in_the_address_is_honoured_on_link_pages(api: Api) -> None:
    """``?lang=`` works on the confirm page and on every refusal, a damaged link's included,
    whatever the seat's or the browser's language (issue 40: it was ignored there)."""
    svc = api.service
    game = new_game(svc)  # English seats
    position, seq, options = pending(svc, game.uid)
    path = path_of(api, game.uid, position, seq, options[0])
    text = page(api.client.get(path + "?lang=pl"))
    assert 'lang="pl"' in text and "Potwierdź swój ruch" in text
    assert "Confirm your move" in page(api.client.get(path))
    damaged = api.client.get("/l/garbage?lang=pl", headers={"Accept-Language": "en"})
    assert damaged.status_code == 400 and 'lang="pl"' in page(damaged)
    assert "damaged" not in page(damaged)
    polish_seats = new_game(svc, ("pl", "pl", "pl"))
    position, seq, options = pending(svc, polish_seats.uid)
    english = page(api.client.get(path_of(api, polish_seats.uid, position, seq, options[0])
                                  + "?lang=en"))
    assert 'lang="en"' in english and "Confirm your move" in english


def test_words() -> None:
    assert describe_option("pick yellow", "en") == "Take the yellow die"
    assert describe_option("pick yellow", "pl") == "Weź kość: żółta"
    assert describe_option("move SL", "en") == "Move straight, left"
    assert describe_option("move SL", "pl") == "Ruch: prosto, w lewo"
    assert describe_option("play tribal-trap C3", "en") == "Play Tribal Trap (C3)"
    assert describe_option("ability C5 BL", "en", {"titan": "ragnarok"}) == (
        "Ragnarok · Ability: push the Titan on C5 1 space back left")
    assert describe_option("end", "pl") == "Zakończ turę"
    assert describe_option("frobnicate", "en") == "frobnicate"
    turn = {"kind": "turn", "titan": "grinder", "die": "green"}
    assert describe_decision(turn, "en") == "It is Grinder's turn with the green die."
    assert describe_decision(turn, "pl") == "Tura: Masakrator, kość zielona."
