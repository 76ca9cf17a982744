"""A Polish player meets no English on the pages, for every registered game: the new-game form
(``/new?lang=pl``), its set-up page, the invitation of a Polish seat, the player's settings, the
game page and its log.

Each page is fetched with Flask's test client on a real database (SQLite and PostgreSQL). The
test asserts that English phrases those pages used to show are gone; besides, the autouse
fixture of ``tests/conftest.py`` fails it on any message the Polish catalogue lacks.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from flask.testing import FlaskClient

from app.games import GAMES, ruleset
from app.games.ui import game_ui
from tests.apifixtures import Api, dispose, make_api

CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')
JOIN_LINK = re.compile(r'value="[^"]+/join/([^"]+)" onfocus="this.select\(\)" data-seat="(\d+)"')

# Words these pages showed in English to a Polish reader before every word went through tr().
ENGLISH = {
    "new": ("Seat 1", ">Who", "A player (by e-mail)", "The computer<", ">Language",
            "Settings", "Anyone with the link may watch", "Create the game", ">random<",
            "the computer moves for the player", "the computer plays the seat from then on",
            "friend@example.com"),
    "setup": ("Your creator token", "keep it:", "Invitation link", "Take this seat yourself",
              "Webhooks", "Tell a chat room", "Add webhook", "Start the race",
              "Still waiting for seat", "fill the empty seats", "Open the game page",
              "Abandon the game", ">Status<", ">Seat<", ">joined<", ">invited<",
              "waiting for players", "Computer"),
    "join": ("Invitation", "You are invited to race", "Seat 1", ">joined<", ">invited<",
             "(you)", "Your name", "Take my seat", "This browser will remember your seat",
             ">standard<", " for <strong>"),
    "me": ("My settings", "Mail and language", "every mail:", "Quiet hours", "Away dates",
           ">Polski<", "my deadlines stretch over the absence"),
    "game": ("You play seat", ">Players<", "The clock", "When time runs out",
             "the computer moves for the player", ">Log<", ">Chat<", "Leave the game",
             "Resign?", ">racing<", ">standard<", "Your hand", "Computer"),
    "log": (">Log", "Back to the game", ">Who<", ">What<", ">When<"),
}


@pytest.fixture
def site(migrated_database_url: str) -> Iterator[Api]:
    made = make_api(migrated_database_url)
    yield made
    dispose(made)


def _token(page: str) -> str:
    found = CSRF.search(page)
    assert found, "no CSRF token on the page"
    return found.group(1)


def _polish(page: str, kind: str) -> None:
    """The page is Polish and shows none of the English it used to."""
    assert '<html lang="pl">' in page
    shown = [phrase for phrase in ENGLISH[kind] if phrase in page]
    assert shown == [], f"English on the Polish {kind} page: {shown}"


def _new_game_form(game: str, token: str) -> dict[str, str]:
    ui = game_ui(game)
    form = {"csrf_token": token, "game": game, "name": "Wyścig",
            "variant": ruleset(game).variants[0],
            "circuit0": ui.board_choices[0], "spectators": "on"}
    seats = [("human", "ann@example.com", "Ania"), ("human", "ben@example.com", "Bartek"),
             ("computer", "", "")]
    for i in range(6):
        kind, email, name = seats[i] if i < len(seats) else ("none", "", "")
        form.update({f"seat{i}_kind": kind, f"seat{i}_email": email, f"seat{i}_name": name,
                     f"seat{i}_lang": "pl"})
    return form


@pytest.mark.parametrize("game", sorted(GAMES))
def test_a_polish_player_reads_no_english(site: Api, game: str) -> None:
    creator: FlaskClient = site.app.test_client()
    new = creator.get(f"/new?lang=pl&game={game}")
    assert new.status_code == 200
    _polish(new.text, "new")
    assert "Utwórz grę" in new.text and "od tej chwili gra komputer" in new.text

    made = creator.post("/new?lang=pl", data=_new_game_form(game, _token(new.text)))
    assert made.status_code == 303, made.text
    assert made.location.endswith("?lang=pl")  # the set-up page speaks the form's language
    setup = creator.get(made.location)
    _polish(setup.text, "setup")
    assert "Gra utworzona" in setup.text and "Dodaj webhook" in setup.text
    uid = made.location.split("/games/")[1].split("/")[0]
    links = {int(seat): token for token, seat in JOIN_LINK.findall(setup.text)}
    assert sorted(links) == [0, 1]

    players: dict[int, FlaskClient] = {}
    for position, token in links.items():
        players[position] = site.app.test_client()
        invitation = players[position].get(f"/join/{token}")  # a Polish seat: no ?lang=
        assert invitation.status_code == 200
        _polish(invitation.text, "join")
        assert "Zajmij miejsce" in invitation.text
        taken = players[position].post(f"/join/{token}",
                                       data={"csrf_token": _token(invitation.text)})
        assert taken.status_code == 303

    ready = creator.get(f"/games/{uid}/setup?lang=pl")
    _polish(ready.text, "setup")
    assert "Wszyscy dołączyli." in ready.text
    started = creator.post(f"/games/{uid}/start?lang=pl", data={"csrf_token": _token(ready.text)})
    assert started.status_code == 303 and started.location.endswith("?lang=pl")

    for position, player in players.items():
        page = player.get(f"/games/{uid}")
        assert page.status_code == 200
        _polish(page.text, "game")
        assert f"Grasz na miejscu {position + 1}." in page.text
        me = player.get(f"/games/{uid}/me")
        _polish(me.text, "me")
        assert ">polski<" in me.text and "Europe/Warsaw" in me.text
        log = player.get(f"/games/{uid}/log")
        _polish(log.text, "log")


def test_a_polish_form_problem_is_polish(site: Api) -> None:
    creator: FlaskClient = site.app.test_client()
    new = creator.get("/new?lang=pl")
    form = _new_game_form("titan-race", _token(new.text))
    form["seat1_email"] = ""
    refused = creator.post("/new?lang=pl", data=form)
    assert refused.status_code == 400
    assert "miejsce 2: podaj adres e-mail gracza" in refused.text
    assert '<html lang="pl">' in refused.text and site.move_count() == 0


def test_a_refused_move_is_explained_in_polish(site: Api) -> None:
    """The service's refusals a player meets on the game page (not your decision, the game
    moved on) come in the seat's language."""
    table = site.create([{"email": f"p{i}@example.com", "language": "pl"} for i in range(3)])
    players: dict[int, FlaskClient] = {}
    for position, token in table.invitations.items():
        players[position] = site.app.test_client()
        page = players[position].get(f"/join/{token}")
        taken = players[position].post(f"/join/{token}", data={"csrf_token": _token(page.text)})
        assert taken.status_code == 303
    site.start(table)
    acting = site.to_act(table.uid)[0]
    options = site.service.options(table.uid, acting)
    seq, option = options["seq"], options["pending"]["options"][0]

    waiting = players[(acting + 1) % 3]
    page = waiting.get(f"/games/{table.uid}")
    refused = waiting.post(f"/games/{table.uid}/move", data={
        "csrf_token": _token(page.text), "seq": str(seq), "option": option})
    assert refused.status_code == 403
    assert "to nie Twoja decyzja: czekamy na: " in refused.text

    mover = players[acting]
    page = mover.get(f"/games/{table.uid}")
    form = {"csrf_token": _token(page.text), "seq": str(seq), "option": option}
    assert mover.post(f"/games/{table.uid}/move", data=form).status_code == 303
    other = options["pending"]["options"][-1]  # another answer to the decision just made
    assert other != option
    stale = mover.post(f"/games/{table.uid}/move", data={**form, "option": other})
    assert stale.status_code == 409
    assert "gra poszła dalej" in stale.text.lower() and "moved on" not in stale.text
