"""The web pages through Flask's test client, on a migrated SQLite database.

Every page is fetched; every form is posted with its CSRF token taken from the page, and without
it (400, nothing changed); every GET is checked to change nothing in the database.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from flask.testing import FlaskClient

from app.web.browser_seats import store_seat
from app.web.pages.gamewords import describe_input
from app.web.pages.newgame import parse_new_game
from tests.apifixtures import ADMIN_TOKEN, SEED, Api, dispose, make_api

CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')
TABLES = ("games", "seats", "moves", "api_tokens", "snapshots")


@pytest.fixture
def site(tmp_path: Path) -> Iterator[Api]:
    made = make_api(f"sqlite:///{tmp_path / 'pages.db'}")
    yield made
    dispose(made)


def browser(site: Api) -> FlaskClient:
    """A new browser: its own cookie jar (session)."""
    client: FlaskClient = site.app.test_client()
    return client


def csrf(client: FlaskClient, url: str) -> str:
    page = client.get(url)
    assert page.status_code == 200, page.text
    found = CSRF.search(page.text)
    assert found, f"no CSRF token on {url}"
    return found.group(1)


def snapshot(site: Api) -> dict[str, Any]:
    """Everything a GET (or a refused POST) must leave as it was."""
    with site.engine.connect() as conn:
        return {
            table: [tuple(row) for row in conn.execute(sa.text(f"SELECT * FROM {table}"))]
            for table in TABLES
        }


def give_seat(client: FlaskClient, uid: str, position: int) -> None:
    secret = client.application.extensions["titanpost.service"].link_seat(uid, position).secret
    with client.session_transaction() as sess:
        store_seat(sess, uid, position, secret)


def started_game(site: Api, *, settings: dict[str, Any] | None = None,
                 languages: tuple[str, str] = ("en", "en")) -> dict[str, Any]:
    """A started game of two humans and the computer; each human in their own browser."""
    svc = site.service
    created = svc.create_game(
        seats=[
            {"email": "ann@example.com", "name": "Ann", "language": languages[0]},
            {"email": "ben@example.com", "name": "Ben", "language": languages[1]},
            {"bot": True},
        ],
        seed=SEED,
        settings=settings,
        name="Pages race",
    )
    for invitation in created["invitations"]:
        svc.accept(invitation["invite_token"])
    svc.start(created["game"], created["creator_token"])
    uid = created["game"]
    clients = {}
    for position in (0, 1):
        clients[position] = browser(site)
        give_seat(clients[position], uid, position)
    return {"uid": uid, "creator_token": created["creator_token"], "clients": clients}


def acting(site: Api, uid: str) -> int:
    to_act: list[int] = site.service.state(uid, 0)["game"]["to_act"]
    assert len(to_act) == 1
    return to_act[0]


def new_game_form(token: str, **changes: str) -> dict[str, str]:
    form = {
        "csrf_token": token,
        "name": "Friday race",
        "variant": "standard",
        "circuit0": "kaldheira",
        "circuit1": "dead-mans-lagoon",
        "circuit2": "moltenchest",
        "seat0_kind": "human",
        "seat0_email": "ann@example.com",
        "seat0_name": "Ann",
        "seat0_lang": "en",
        "seat1_kind": "human",
        "seat1_email": "ben@example.com",
        "seat1_lang": "pl",
        "seat1_titan": "craken",
        "seat2_kind": "computer",
        "seat3_kind": "none",
        "seat4_kind": "none",
        "seat5_kind": "none",
        "spectators": "on",
    }
    form.update(changes)
    return form


def create_through_pages(site: Api, client: FlaskClient, **changes: str) -> tuple[str, str]:
    """Create a game with the form; return its id and the set-up page's HTML."""
    response = client.post("/new", data=new_game_form(csrf(client, "/new"), **changes))
    assert response.status_code == 303, response.text
    uid = response.location.split("/games/")[1].split("/")[0]
    setup = client.get(response.location)
    assert setup.status_code == 200
    return uid, setup.text


def invitation_links(html: str) -> dict[int, str]:
    return {
        int(seat): link.split("/join/")[1]
        for link, seat in re.findall(r'value="([^"]+/join/[^"]+)" onfocus="this.select\(\)" '
                                     r'data-seat="(\d+)"', html)
    }


# ------------------------------------------------------------------ home, new, setup, join


def test_home_and_new_game_form(site: Api) -> None:
    client = browser(site)
    home = client.get("/")
    assert home.status_code == 200
    assert 'href="/new"' in home.text and 'href="/games"' in home.text
    form = client.get("/new")
    assert form.status_code == 200
    for variant in ("standard", "two-player", "teams", "grand-slam"):
        assert f'value="{variant}"' in form.text
    for circuit in ("kaldheira", "dead-mans-lagoon", "moltenchest", "ban-kog", "anglieh",
                    "estenggaard"):
        assert f'value="{circuit}"' in form.text
    for i in range(6):
        assert f'name="seat{i}_email"' in form.text and f'name="seat{i}_titan"' in form.text
    assert 'value="computer"' in form.text and 'name="deadline_hours"' in form.text
    assert 'name="spectators"' in form.text and CSRF.search(form.text)


def test_create_shows_creator_token_and_invitations(site: Api) -> None:
    client = browser(site)
    uid, html = create_through_pages(site, client, deadline_hours="24")
    assert 'id="creator-token"' in html
    links = invitation_links(html)
    assert sorted(links) == [0, 1]
    assert f"{site.service.settings.base_url}/join/" in html
    game = site.rows("SELECT name, variant, status, settings FROM games WHERE uid = :u", u=uid)
    assert game[0][:3] == ("Friday race", "standard", "open")
    assert '"deadline_hours": 24' in game[0][3] and '"spectators": true' in game[0][3]
    seats = site.rows("SELECT position, email, is_bot, language, pieces FROM seats ORDER BY "
                      "position")
    assert [(s[0], s[1], bool(s[2]), s[3]) for s in seats] == [
        (0, "ann@example.com", False, "en"),
        (1, "ben@example.com", False, "pl"),
        (2, "", True, "en"),
    ]
    assert "craken" in seats[1][4]
    # the game is listed in this browser's games, with a way to manage it
    mine = client.get("/games")
    assert uid in mine.text and f"/games/{uid}/setup" in mine.text


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"seat1_kind": "none", "seat2_kind": "none"}, "2 to 6 seats"),
        ({"seat0_email": ""}, "e-mail address"),
        ({"seat0_email": "not-an-address"}, "is not an e-mail address"),
        ({"variant": "teams"}, "teams"),
        ({"seat0_titan": "craken"}, "chosen by two seats"),
        ({"deadline_hours": "soon"}, "whole number"),
        ({"circuit0": "atlantis"}, "built-in"),
    ],
)
def test_create_refuses_bad_forms(site: Api, changes: dict[str, str], message: str) -> None:
    client = browser(site)
    before = snapshot(site)
    response = client.post("/new", data=new_game_form(csrf(client, "/new"), **changes))
    assert response.status_code == 400
    assert message in response.text
    assert 'value="Friday race"' in response.text  # the form keeps what was typed
    assert snapshot(site) == before


def test_create_grand_slam_and_private_game(site: Api) -> None:
    client = browser(site)
    uid, _ = create_through_pages(site, client, variant="grand-slam", circuit1="ban-kog",
                                  circuit2="anglieh")
    (circuits,) = site.rows("SELECT setup FROM games WHERE uid = :u", u=uid)[0]
    assert "ban-kog" in circuits and "anglieh" in circuits
    form = new_game_form(csrf(client, "/new"))
    del form["spectators"]
    response = client.post("/new", data=form)
    assert response.status_code == 303
    private = response.location.split("/games/")[1].split("/")[0]
    (settings,) = site.rows("SELECT settings FROM games WHERE uid = :u", u=private)[0]
    assert '"spectators": false' in settings
    assert private in client.get("/games").text  # the creator still finds it


def test_join_get_changes_nothing_and_post_takes_the_seat(site: Api) -> None:
    creator = browser(site)
    uid, html = create_through_pages(site, creator)
    token = invitation_links(html)[1]
    player = browser(site)
    before = snapshot(site)
    page = player.get(f"/join/{token}")
    assert page.status_code == 200
    assert "ben@example.com" in page.text and "Miejsce 2" in page.text  # Ben's seat: Polish
    assert snapshot(site) == before
    # without the CSRF token: refused, nothing changed
    refused = player.post(f"/join/{token}", data={"name": "Ben"})
    assert refused.status_code == 400 and "expired" in refused.text
    assert snapshot(site) == before
    response = player.post(f"/join/{token}", data={"csrf_token": csrf(player, f"/join/{token}"),
                                                   "name": "Benjamin"})
    assert response.status_code == 303 and response.location.endswith(f"/games/{uid}")
    assert site.rows("SELECT player_name, accepted_at IS NOT NULL FROM seats WHERE position = 1"
                     ) == [("Benjamin", 1)]
    game = player.get(f"/games/{uid}")
    # Ben's seat reads Polish
    assert '<html lang="pl">' in game.text
    assert "Grasz na miejscu 2." in game.text and "Benjamin" in game.text
    # the seat's API token is not shown unasked (issue 38): the seat's settings page issues
    # one when asked, shown once
    assert "Token API" not in game.text
    settings = player.get(f"/games/{uid}/me")
    assert 'id="issue-token-button"' in settings.text
    issued = player.post(f"/games/{uid}/me/token",
                         data={"csrf_token": csrf(player, f"/games/{uid}/me")})
    assert issued.status_code == 303 and issued.location.endswith("/me#api-token")
    shown = player.get(f"/games/{uid}/me").text
    found = re.search(r"\(pokazany tylko raz\): ([A-Za-z0-9_-]{20,})", shown)
    assert found, shown
    assert site.client.get("/api/me", headers={"Authorization": f"Bearer {found.group(1)}"}
                           ).get_json()["position"] == 1
    assert found.group(1) not in player.get(f"/games/{uid}/me").text  # shown once
    # a used invitation cannot be used again
    again = browser(site).get(f"/join/{token}")
    assert again.status_code == 404 and "already used" in again.text
    assert browser(site).get("/join/nonsense").status_code == 404


def test_start_from_setup_with_computer_players(site: Api) -> None:
    creator = browser(site)
    uid, html = create_through_pages(site, creator)
    token = invitation_links(html)[0]
    creator.post(f"/join/{token}", data={"csrf_token": csrf(creator, f"/join/{token}")})
    waiting = creator.get(f"/games/{uid}")
    assert "Waiting for players: 2 of 3" in waiting.text and f"/games/{uid}/setup" in waiting.text
    # without a CSRF token: nothing happens
    assert creator.post(f"/games/{uid}/start", data={"fill_with_bots": "1"}).status_code == 400
    assert site.rows("SELECT status FROM games WHERE uid = :u", u=uid) == [("open",)]
    # another browser is not the creator
    other = browser(site)
    setup_other = other.get(f"/games/{uid}/setup")
    assert 'name="creator_token"' in setup_other.text and 'id="creator-token"' not in (
        setup_other.text)
    refused = other.post(f"/games/{uid}/start", data={"csrf_token": csrf(other, "/new")})
    assert refused.status_code == 403
    # not everyone has joined: the creator must allow computer players
    token_c = csrf(creator, f"/games/{uid}/setup")
    not_yet = creator.post(f"/games/{uid}/start", data={"csrf_token": token_c})
    assert not_yet.status_code == 409 and "not every player has accepted" in not_yet.text
    started = creator.post(f"/games/{uid}/start", data={"csrf_token": token_c,
                                                        "fill_with_bots": "1"})
    assert started.status_code == 303 and started.location.endswith(f"/games/{uid}")
    assert site.rows("SELECT status FROM games WHERE uid = :u", u=uid) == [("active",)]
    assert site.rows("SELECT is_bot FROM seats WHERE position = 1") == [(1,)]
    page = creator.get(f"/games/{uid}")
    assert "<svg" in page.text and 'id="board"' in page.text


def test_claim_creator_token_reinvite_and_abandon(site: Api) -> None:
    first = browser(site)
    uid, html = create_through_pages(site, first)
    creator_token = re.search(r'id="creator-token" readonly value="([^"]+)"', html)
    assert creator_token
    old = invitation_links(html)[0]
    second = browser(site)
    wrong = second.post(f"/games/{uid}/setup", data={
        "csrf_token": csrf(second, f"/games/{uid}/setup"), "creator_token": "wrong"})
    assert wrong.status_code == 403
    claimed = second.post(f"/games/{uid}/setup", data={
        "csrf_token": csrf(second, f"/games/{uid}/setup"),
        "creator_token": creator_token.group(1)})
    assert claimed.status_code == 303
    token = csrf(second, f"/games/{uid}/setup")
    assert second.post(f"/games/{uid}/invite", data={"position": "0",
                                                     "email": "x@example.com"}).status_code == 400
    reinvited = second.post(f"/games/{uid}/invite", data={
        "csrf_token": token, "position": "0", "email": "new@example.com"})
    assert reinvited.status_code == 303
    links = invitation_links(second.get(f"/games/{uid}/setup").text)
    assert 0 in links and links[0] != old
    assert browser(site).get(f"/join/{old}").status_code == 404
    assert browser(site).get(f"/join/{links[0]}").status_code == 200
    assert site.rows("SELECT email FROM seats WHERE position = 0") == [("new@example.com",)]
    abandoned = second.post(f"/games/{uid}/abandon", data={"csrf_token": token})
    assert abandoned.status_code == 303
    assert site.rows("SELECT status FROM games WHERE uid = :u", u=uid) == [("abandoned",)]
    assert "abandoned" in second.get(f"/games/{uid}").text


# ------------------------------------------------------------------ the game page


def test_game_page_composer_lists_the_legal_options(site: Api) -> None:
    game = started_game(site)
    uid = game["uid"]
    position = acting(site, uid)
    page = game["clients"][position].get(f"/games/{uid}")
    assert page.status_code == 200
    legal = site.service.options(uid, position)
    shown = re.findall(r'<button type="submit" name="option" value="([^"]+)"', page.text)
    assert shown == legal["options"]
    assert f'name="seq" value="{legal["seq"]}"' in page.text
    assert CSRF.search(page.text)
    assert "Take the" in page.text or "Start on" in page.text  # plain words
    assert 'id="hand"' in page.text
    view = site.service.state(uid, position)["view"]
    mine = next(t for t, i in view["titans"].items() if i["seat"] == position)
    for card in view["titans"][mine]["hand"]:
        assert f'data-card="{card}"' in page.text
    for titan, info in view["titans"].items():
        if info["space"]:
            assert f'data-titan="{titan}" data-space="{info["space"]}"' in page.text
    for die in view["dice"]:
        assert f'data-colour="{die}"' in page.text
    # the other player sees no composer and is told whom the game waits for
    other = game["clients"][1 - position].get(f"/games/{uid}")
    assert 'id="composer"' not in other.text and "Waiting for" in other.text


def play_until(site: Api, game: dict[str, Any], verb: str, limit: int = 40) -> tuple[int, str]:
    """Answer decisions (first option) through the pages until one offers ``verb`` options."""
    uid = game["uid"]
    for _ in range(limit):
        position = acting(site, uid)
        options = site.service.options(uid, position)
        if any(o.startswith(verb + " ") for o in options["options"]):
            return position, next(o for o in options["options"] if o.startswith(verb + " "))
        client = game["clients"][position]
        response = client.post(f"/games/{uid}/move", data={
            "csrf_token": csrf(client, f"/games/{uid}"), "seq": str(options["seq"]),
            "option": options["options"][0]})
        assert response.status_code == 303, response.text
    raise AssertionError(f"no '{verb}' option came up")


def test_options_show_where_they_lead_and_preview_draws_it(site: Api) -> None:
    game = started_game(site)
    uid = game["uid"]
    position, option = play_until(site, game, "move")
    client = game["clients"][position]
    legal = site.service.options(uid, position)
    titan = legal["pending"]["titan"]
    after = site.service.preview(uid, position, option)
    assert after is not None
    space = after["titans"][titan]["space"]
    page = client.get(f"/games/{uid}")
    assert f"{titan.capitalize()} to {space}" in page.text
    before = snapshot(site)
    svg = client.get(f"/games/{uid}/preview", query_string={"option": option,
                                                             "seq": legal["seq"]})
    assert svg.status_code == 200 and svg.mimetype == "image/svg+xml"
    assert f'class="highlight" data-space="{space}"' in svg.text
    assert f'data-titan="{titan}" data-space="{space}"' in svg.text
    # previews change nothing, and only the seat whose decision it is may ask
    assert snapshot(site) == before
    stale = client.get(f"/games/{uid}/preview", query_string={"option": option, "seq": 0})
    assert stale.status_code == 409
    other = game["clients"][1 - position]
    assert other.get(f"/games/{uid}/preview", query_string={"option": option}).status_code == 422
    assert browser(site).get(f"/games/{uid}/preview",
                             query_string={"option": option}).status_code == 403
    illegal = client.get(f"/games/{uid}/preview", query_string={"option": "move LRLR"})
    assert illegal.status_code == 422
    assert snapshot(site) == before


def test_move_submits_and_refusals_change_nothing(site: Api) -> None:
    game = started_game(site)
    uid = game["uid"]
    position = acting(site, uid)
    client = game["clients"][position]
    legal = site.service.options(uid, position)
    token = csrf(client, f"/games/{uid}")
    before = snapshot(site)
    # no CSRF token
    response = client.post(f"/games/{uid}/move", data={"seq": legal["seq"],
                                                       "option": legal["options"][0]})
    assert response.status_code == 400 and "security token" in response.text
    # an illegal option: 422 with the reason
    response = client.post(f"/games/{uid}/move", data={"csrf_token": token, "seq": legal["seq"],
                                                       "option": "move LRLR"})
    assert response.status_code == 422 and 'role="alert"' in response.text
    # the other seat: not their decision
    other = game["clients"][1 - position]
    response = other.post(f"/games/{uid}/move", data={
        "csrf_token": csrf(other, f"/games/{uid}"), "seq": legal["seq"],
        "option": legal["options"][0]})
    assert response.status_code == 403 and "not your decision" in response.text
    # a browser without a seat
    stranger = browser(site)
    response = stranger.post(f"/games/{uid}/move", data={
        "csrf_token": csrf(stranger, "/new"), "seq": legal["seq"], "option": "end"})
    assert response.status_code == 403
    assert snapshot(site) == before
    # the real thing
    response = client.post(f"/games/{uid}/move", data={"csrf_token": token, "seq": legal["seq"],
                                                       "option": legal["options"][0]})
    assert response.status_code == 303 and response.location.endswith(f"/games/{uid}#board")
    assert site.service.state(uid, 0)["seq"] > legal["seq"]
    assert "Done: " in client.get(f"/games/{uid}").text
    # the same submission again is answered as already made
    response = client.post(f"/games/{uid}/move", data={"csrf_token": token, "seq": legal["seq"],
                                                       "option": legal["options"][0]})
    assert response.status_code == 303
    assert "already made" in client.get(f"/games/{uid}").text
    # an answer to an old decision: 409, the game moved on, nothing applied
    now = snapshot(site)
    position = acting(site, uid)
    client = game["clients"][position]
    response = client.post(f"/games/{uid}/move", data={
        "csrf_token": csrf(client, f"/games/{uid}"), "seq": "0", "option": "end"})
    assert response.status_code == 409 and "moved on" in response.text
    assert 'id="board"' in response.text  # the current game is shown
    assert snapshot(site) == now


def test_typed_notation_goes_through_the_same_path(site: Api) -> None:
    game = started_game(site)
    uid = game["uid"]
    position = acting(site, uid)
    client = game["clients"][position]
    legal = site.service.options(uid, position)
    response = client.post(f"/games/{uid}/move", data={
        "csrf_token": csrf(client, f"/games/{uid}"), "seq": legal["seq"],
        "text": legal["options"][-1].upper()})
    assert response.status_code == 303
    assert site.service.log(uid, 0)["moves"][legal["seq"]]["input"] == legal["options"][-1]


def test_log_page_and_spectators(site: Api) -> None:
    game = started_game(site)
    uid = game["uid"]
    play_until(site, game, "move")
    watcher = browser(site)
    page = watcher.get(f"/games/{uid}")
    assert page.status_code == 200
    assert "spectator" in page.text
    assert 'id="composer"' not in page.text and 'id="hand"' not in page.text
    assert "data-card=" not in page.text
    log = watcher.get(f"/games/{uid}/log")
    assert log.status_code == 200
    moves = site.service.log(uid)["moves"]
    for move in moves:
        assert f'data-seq="{move["seq"]}"' in log.text
    assert "Take the" in log.text and "Start on" in log.text
    assert "shuffle " not in log.text  # the deck's order stays hidden


def test_private_game_refuses_spectators(site: Api) -> None:
    game = started_game(site, settings={"spectators": False})
    uid = game["uid"]
    before = snapshot(site)
    for url in (f"/games/{uid}", f"/games/{uid}/log"):
        page = browser(site).get(url)
        assert page.status_code == 403 and "no spectators" in page.text
        assert page.mimetype == "text/html"
        assert game["clients"][0].get(url).status_code == 200
    assert snapshot(site) == before


def test_unknown_game_is_a_page_not_found(site: Api) -> None:
    client = browser(site)
    for url in ("/games/" + "0" * 32, "/games/nonsense", "/games/" + "0" * 32 + "/log"):
        page = client.get(url)
        assert page.status_code == 404 and page.mimetype == "text/html"


def test_my_games_marks_whose_turn_it_is(site: Api) -> None:
    game = started_game(site)
    uid = game["uid"]
    position = acting(site, uid)
    mine = game["clients"][position].get("/games")
    assert uid in mine.text and "your turn" in mine.text
    theirs = game["clients"][1 - position].get("/games")
    assert uid in theirs.text and "your turn" not in theirs.text
    assert uid not in browser(site).get("/games").text


def test_resign_hands_the_seat_to_the_computer(site: Api) -> None:
    game = started_game(site)
    uid = game["uid"]
    client = game["clients"][0]
    assert client.post(f"/games/{uid}/resign").status_code == 400
    response = client.post(f"/games/{uid}/resign", data={"csrf_token": csrf(client,
                                                                          f"/games/{uid}")})
    assert response.status_code == 303
    assert site.rows("SELECT is_bot, resigned_at IS NOT NULL FROM seats WHERE position = 0") == [
        (1, 1)]


def test_polish_seat_reads_polish_labels(site: Api) -> None:
    game = started_game(site, languages=("pl", "en"))
    uid = game["uid"]
    polish = game["clients"][0].get(f"/games/{uid}")
    assert '<html lang="pl">' in polish.text and "Twoja ręka" in polish.text
    english = game["clients"][1].get(f"/games/{uid}")
    assert '<html lang="en">' in english.text and "Your hand" in english.text
    assert "Twoja ręka" in game["clients"][1].get(f"/games/{uid}?lang=pl").text


# ------------------------------------------------------------------ admin replay


def admin(site: Api) -> FlaskClient:
    client = browser(site)
    response = client.post("/admin/login", data={
        "csrf_token": csrf(client, "/admin/login"), "token": ADMIN_TOKEN, "next": "/admin"})
    assert response.status_code == 303
    return client


def test_admin_login(site: Api) -> None:
    game = started_game(site)
    uid = game["uid"]
    client = browser(site)
    response = client.get(f"/admin/replay/{uid}?step=2")
    assert response.status_code == 302 and "/admin/login" in response.location
    assert client.post("/admin/login", data={"token": ADMIN_TOKEN}).status_code == 400
    wrong = client.post("/admin/login", data={"csrf_token": csrf(client, "/admin/login"),
                                              "token": "guess"})
    assert wrong.status_code == 403 and "wrong admin token" in wrong.text
    assert client.get(f"/admin/replay/{uid}").status_code == 302
    right = client.post("/admin/login", data={
        "csrf_token": csrf(client, "/admin/login"), "token": ADMIN_TOKEN,
        "next": f"/admin/replay/{uid}?step=2"})
    assert right.status_code == 303 and right.location == f"/admin/replay/{uid}?step=2"
    # never sent to another site after signing in
    client.post("/admin/logout", data={"csrf_token": csrf(client, "/admin")})
    away = client.post("/admin/login", data={
        "csrf_token": csrf(client, "/admin/login"), "token": ADMIN_TOKEN,
        "next": "https://evil.example/"})
    assert away.location == "/admin"
    listing = client.get("/admin")
    assert listing.status_code == 200 and uid in listing.text


def test_admin_login_is_off_without_a_token(tmp_path: Path) -> None:
    site = make_api(f"sqlite:///{tmp_path / 'noadmin.db'}", TITANPOST_ADMIN_TOKEN="")
    try:
        client = browser(site)
        page = client.get("/admin/login")
        assert page.status_code == 403 and "TITANPOST_ADMIN_TOKEN" in page.text
        response = client.post("/admin/login", data={"csrf_token": csrf(client, "/new"),
                                                     "token": ""})
        assert response.status_code == 403
    finally:
        dispose(site)


def test_admin_replay_steps_through_every_move(site: Api) -> None:
    game = started_game(site)
    uid = game["uid"]
    play_until(site, game, "move")
    client = admin(site)
    steps = site.service.replay(uid)["steps"]
    last = len(steps) - 1
    before = snapshot(site)
    start = client.get(f"/admin/replay/{uid}?step=0")
    assert start.status_code == 200 and "The start" in start.text
    for number in range(1, last + 1):
        page = client.get(f"/admin/replay/{uid}?step={number}")
        assert page.status_code == 200
        move = steps[number]["move"]
        assert f"Move {number}" in page.text
        assert f'<code id="move-input">{move["input"]}</code>' in page.text
        assert f"step {number} / {last}" in page.text
        if number < last:
            assert f"/admin/replay/{uid}?step={number + 1}" in page.text
        assert f"/admin/replay/{uid}?step={number - 1}" in page.text
        for titan, info in steps[number]["view"]["titans"].items():
            if info["space"]:
                assert f'data-titan="{titan}" data-space="{info["space"]}"' in page.text
    # the full view: every hand, the unredacted outcomes
    shuffled = next((n for n, s in enumerate(steps) if s["move"] and any(
        o.startswith("shuffle ") for part in s["move"]["outcomes"] for o in part)), None)
    if shuffled is not None:
        assert "shuffle " in client.get(f"/admin/replay/{uid}?step={shuffled}").text
    full = client.get(f"/admin/replay/{uid}?step={last}")
    for info in steps[last]["view"]["titans"].values():
        for card in info["hand"]:
            assert f'data-card="{card}"' in full.text
    assert client.get(f"/admin/replay/{uid}?step=9999").status_code == 200  # clamped
    assert client.get(f"/admin/replay/{uid}?step=x").status_code == 200
    assert client.get("/admin/replay/" + "0" * 32).status_code == 404
    assert snapshot(site) == before


def test_admin_replay_says_who_made_each_entry(site: Api) -> None:
    game = started_game(site)
    uid = game["uid"]
    position = acting(site, uid)
    site.service.resign(uid, position)
    client = admin(site)
    steps = site.service.replay(uid)["steps"]
    note = next(n for n, s in enumerate(steps) if s["move"] and s["move"]["kind"] == "resign")
    page = client.get(f"/admin/replay/{uid}?step={note}")
    assert 'data-actor="player"' in page.text and "<strong>resign</strong>" in page.text
    bot = client.get(f"/admin/replay/{uid}?step={note + 1}")
    assert 'data-actor="computer"' in bot.text and "a computer seat" in bot.text
    assert steps[note]["view"] == steps[note - 1]["view"]  # a note changes nothing on the board


# ------------------------------------------------------------------ GET changes nothing


def test_no_get_changes_anything(site: Api) -> None:
    creator = browser(site)
    open_uid, html = create_through_pages(site, creator)
    invite = invitation_links(html)[0]
    game = started_game(site)
    uid = game["uid"]
    position = acting(site, uid)
    option = site.service.options(uid, position)["options"][0]
    clients = [creator, game["clients"][position], game["clients"][1 - position], browser(site),
               admin(site)]
    urls = [
        "/", "/new", "/games", f"/games/{open_uid}", f"/games/{open_uid}/setup",
        f"/join/{invite}", f"/games/{uid}", f"/games/{uid}/log", f"/games/{uid}/setup",
        f"/games/{uid}/preview?option={option}", "/admin/login", "/admin",
        f"/admin/replay/{uid}", f"/admin/replay/{uid}?step=1", f"/admin/replay/{open_uid}",
        # a GET on a form's address never acts
        f"/games/{uid}/move?option={option}&seq=0", f"/games/{open_uid}/start",
    ]
    before = snapshot(site)
    for client in clients:
        for url in urls:
            response = client.get(url)
            assert response.status_code < 500, (url, response.status_code)
    assert snapshot(site) == before
    assert browser(site).get(f"/join/{invite}").status_code == 200  # still unused


# ------------------------------------------------------------------ words


def test_options_in_plain_words(site: Api) -> None:
    with site.app.test_request_context("/"):
        assert describe_input("pick purple") == "Take the purple die"
        assert describe_input("start C1") == "Start on C1"
        assert describe_input("move RS") == "Move right, straight"
        assert describe_input("trap B4") == "Put a trap on B4"
        assert describe_input("hit D4") == "Deal 1 damage on D4"
        assert describe_input("ability C5 BL", {"titan": "ragnarok"}) == (
            "Ragnarok · Ability: push the Titan on C5 1 space back left")
        assert describe_input("ability", {"titan": "slaugg"}).startswith("Slaugg · Ability")
        assert describe_input("play leap L") == "Play Leap (left)"
        assert describe_input("discard quake", {"kind": "pirates"}) == "Give Quake to the pirates"
        assert describe_input("move SS; end") == "Move straight, straight; End the turn"
        assert describe_input("pass") == "Pass (play no card)"
        assert describe_input("lose") == "Lose 1 Life Point"
    with site.app.test_request_context("/?lang=pl"):
        from flask import g

        g.lang = "pl"
        assert describe_input("move LS") == "Ruch: w lewo, prosto"
        assert describe_input("end") == "Zakończ turę"


def test_parse_new_game_builds_the_service_call() -> None:
    parsed = parse_new_game(new_game_form("t", deadline_hours="12", seat2_team="2"))
    assert parsed["seats"] == [
        {"name": "Ann", "pieces": {"titans": []}, "email": "ann@example.com", "language": "en"},
        {"pieces": {"titans": ["craken"]}, "email": "ben@example.com", "language": "pl"},
        {"pieces": {"titans": [], "team": 2}, "bot": True},
    ]
    assert parsed["settings"] == {"spectators": True, "deadline_hours": 12}
    assert parsed["setup"] == {"circuits": ["kaldheira"]}
    assert "seed" not in parsed  # (the admin's alone)
    slam = parse_new_game(new_game_form("t", variant="grand-slam"))
    assert slam["setup"] == {"circuits": ["kaldheira", "dead-mans-lagoon", "moltenchest"]}


@pytest.mark.parametrize(
    ("variant", "circuits", "seats"),
    [
        ("grand-slam", ["kaldheira", "ban-kog", "anglieh"], 3),
        ("two-player", ["estenggaard"], 2),
        ("teams", ["moltenchest"], 4),
    ],
)
def test_every_variant_plays_through_the_composer(
    site: Api, variant: str, circuits: list[str], seats: int
) -> None:
    specs: list[dict[str, Any]] = [{"email": f"p{i}@example.com"} for i in range(seats)]
    if variant == "teams":
        for i, spec in enumerate(specs):
            spec["team"] = i % 2 + 1
    created = site.service.create_game(seats=specs, variant=variant, circuits=circuits,
                                       seed=SEED)
    uid = created["game"]
    for invitation in created["invitations"]:
        site.service.accept(invitation["invite_token"])
    site.service.start(uid, created["creator_token"])
    clients = {}
    for position in range(seats):
        clients[position] = browser(site)
        give_seat(clients[position], uid, position)
    for _ in range(12):
        position = acting(site, uid)
        client = clients[position]
        page = client.get(f"/games/{uid}")
        assert page.status_code == 200 and 'id="composer"' in page.text
        legal = site.service.options(uid, position)
        option = next((o for o in legal["options"] if o.startswith("move ")), legal["options"][0])
        preview = client.get(f"/games/{uid}/preview", query_string={"option": option})
        assert preview.status_code == 200 and f'data-boards="{len(circuits)}"' in preview.text
        response = client.post(f"/games/{uid}/move", data={
            "csrf_token": CSRF.search(page.text).group(1),  # type: ignore[union-attr]
            "seq": legal["seq"], "option": option})
        assert response.status_code == 303, response.text
    view = site.service.state(uid, None)["view"]
    page = browser(site).get(f"/games/{uid}")
    for titan, info in view["titans"].items():
        if info["space"]:
            assert f'data-titan="{titan}" data-space="{info["space"]}"' in page.text


def test_finished_game_shows_the_winner(site: Api) -> None:
    created = site.service.create_game(seats=[{"bot": True}] * 3, seed=SEED, name="Bots")
    summary = site.service.start(created["game"], created["creator_token"])
    assert summary["status"] == "finished"
    uid = created["game"]
    page = browser(site).get(f"/games/{uid}")
    assert page.status_code == 200
    assert "The race is over." in page.text and 'class="winner"' in page.text
    assert summary["winner"].split(",")[0].capitalize() in page.text
    assert 'id="composer"' not in page.text and "Waiting for" not in page.text
    log = browser(site).get(f"/games/{uid}/log")
    assert log.text.count("<tr data-seq=") == summary["seq"]


def test_setup_page_hides_addresses_from_other_browsers(site: Api) -> None:
    creator = browser(site)
    uid, html = create_through_pages(site, creator)
    assert "ann@example.com" in html
    other = browser(site).get(f"/games/{uid}/setup")
    assert other.status_code == 200 and "ann@example.com" not in other.text
    assert "/join/" not in other.text


def test_join_warns_a_browser_that_already_plays_the_game(site: Api) -> None:
    creator = browser(site)
    _, html = create_through_pages(site, creator)
    links = invitation_links(html)
    creator.post(f"/join/{links[0]}", data={"csrf_token": csrf(creator, f"/join/{links[0]}")})
    page = creator.get(f"/join/{links[1]}")
    assert "gra już na miejscu 1" in page.text  # the invitation of a Polish seat


def test_the_server_serves_nothing_from_the_folder_it_runs_in(
        migrated_database_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Pages and mails come from the package's templates; a ``static/`` folder where the server
    happens to be started is not served (Flask's default would, at ``/static/``)."""
    (tmp_path / "static").mkdir()
    (tmp_path / "static" / "notes.txt").write_text("private")
    (tmp_path / "templates").mkdir()
    (tmp_path / "templates" / "base.html").write_text("not ours")
    monkeypatch.chdir(tmp_path)
    made = make_api(migrated_database_url)
    try:
        assert made.client.get("/static/notes.txt").status_code == 404
        home = made.client.get("/")
        assert home.status_code == 200 and b"not ours" not in home.data
    finally:
        dispose(made)


def test_a_preview_never_rewrites_the_session_cookie(site: Api) -> None:
    """A preview the page fetched just before the move was sent may be answered after it; had
    it set the cookie it came with, the move's "Done" notice (kept in the new cookie) would be
    lost. Background answers (pictures, previews) leave the cookie alone; pages refresh it."""
    game = started_game(site)
    uid = game["uid"]
    position, option = play_until(site, game, "move")
    client = game["clients"][position]
    legal = site.service.options(uid, position)
    svg = client.get(f"/games/{uid}/preview", query_string={"option": option,
                                                             "seq": legal["seq"]})
    assert svg.status_code == 200
    assert "Set-Cookie" not in svg.headers
    stale = client.get(f"/games/{uid}/preview", query_string={"option": option, "seq": 0})
    assert stale.status_code == 409 and "Set-Cookie" not in stale.headers
    page = client.get(f"/games/{uid}")
    assert "Set-Cookie" in page.headers  # a page keeps a remembered seat from expiring
