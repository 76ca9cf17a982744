"""A refused form speaks the page's language (issue 23): every problem a Polish player can meet
on ``/new`` and on their settings page ``/me`` (quiet hours, time zone, away dates, e-mail
addresses, reminder points, clock ranges, Titans chosen twice) comes in Polish, not in the
service's English."""

from __future__ import annotations

import html
import re
from datetime import timedelta

import pytest
from flask.testing import FlaskClient

from app.core.models import utcnow
from app.games.ui import game_ui
from tests.apifixtures import Api, csrf_token

ERROR = re.compile(r'<div class="error-box" role="alert">(.*?)</div>', re.S)


pytest_plugins = ["tests.apifixtures"]


def _new_game_form(game: str, token: str) -> dict[str, str]:
    ui = game_ui(game)
    form = {"csrf_token": token, "game": game, "name": "Wyścig", "variant": "standard",
            "circuit0": ui.board_choices[0], "spectators": "on"}
    for i, (kind, email) in enumerate((("human", "ann@example.com"),
                                        ("human", "ben@example.com"), ("computer", ""))):
        form.update({f"seat{i}_kind": kind, f"seat{i}_email": email, f"seat{i}_lang": "pl"})
    return form


NEW_GAME_PROBLEMS = [
    ("titan-race", {"seat1_email": "ben-at-example"},
     "miejsce 2: 'ben-at-example' nie jest adresem e-mail"),
    ("great-race", {"owner_email": "owner"}, "adres właściciela 'owner' nie jest adresem e-mail"),
    ("titan-race", {"seat0_quiet": "late"}, "miejsce 1: godziny ciszy 'late' należy podać"),
    ("titan-race", {"seat0_quiet": "22-8", "seat0_timezone": "Mars/Base"},
     "miejsce 1: 'Mars/Base' nie jest strefą czasową"),
    ("great-race", {"reminders": "soon"}, "przypomnienia: punkt przypomnienia 'soon'"),
    ("titan-race", {"reminders": "0h"}, "przypomnienia: punkt przypomnienia w godzinach"),
    ("titan-race", {"deadline_hours": "100000"}, "termin decyzji: podaj liczbę od 0 do 720"),
    ("titan-race", {"seat0_titan": "grinder", "seat1_titan": "grinder"},
     "Masakrator: to samo wybrały dwa miejsca"),
    ("great-race", {"seat0_titan": "belgian", "seat2_titan": "belgian", "seat2_kind": "human",
                    "seat2_email": "cyd@example.com"}, "to samo wybrały dwa miejsca"),
    ("titan-race", {"seat2_kind": "none"}, "w grze standardowej gra od 3 do 6 graczy, nie 2"),
]


@pytest.mark.parametrize(("game", "change", "polish"), NEW_GAME_PROBLEMS)
def test_a_refused_new_game_is_explained_in_polish(api: Api, game: str, change: dict[str, str],
                                                   polish: str) -> None:
    creator: FlaskClient = api.app.test_client()
    new = creator.get(f"/new?lang=pl&game={game}")
    form = _new_game_form(game, csrf_token(new.text)) | change
    refused = creator.post("/new?lang=pl", data=form)
    assert refused.status_code == 400, refused.text
    shown = [html.unescape(found) for found in ERROR.findall(refused.text)]
    assert len(shown) == 1 and polish in shown[0], shown


def _seated(api: Api) -> tuple[str, FlaskClient, str]:
    """A game of Polish seats, seat 1 taken in a browser; its uid, the browser and the
    settings page."""
    table = api.create([{"email": f"p{i}@example.com", "language": "pl"} for i in range(3)])
    player = api.app.test_client()
    token = table.invitations[0]
    page = player.get(f"/join/{token}")
    assert player.post(f"/join/{token}",
                       data={"csrf_token": csrf_token(page.text)}).status_code == 303
    me = player.get(f"/games/{table.uid}/me")
    assert me.status_code == 200
    return table.uid, player, me.text


def _later(days: float) -> str:
    return (utcnow() + timedelta(days=days)).strftime("%Y-%m-%dT%H:%M")


SETTINGS_PROBLEMS = [
    ("quiet", {"quiet": "at night", "timezone": ""}, "godziny ciszy 'at night' należy podać"),
    ("quiet", {"quiet": "22:00-22:00", "timezone": ""},
     "godziny ciszy nie mogą zaczynać się i kończyć o tej samej porze"),
    ("quiet", {"quiet": "", "timezone": "Europe/Nowhere"},
     "'Europe/Nowhere' nie jest strefą czasową"),
    ("away", {"from": _later(3), "until": _later(2), "mode": "stretch"},
     "nieobecność kończy się, zanim się zaczyna"),
    ("away", {"from": _later(1), "until": _later(200), "mode": "stretch"},
     "nieobecność trwa najwyżej trzy miesiące"),
    ("away", {"from": _later(-9), "until": _later(-8), "mode": "stretch"},
     "ta nieobecność już minęła"),
    ("away", {"from": _later(1), "until": _later(2), "mode": "sleep"},
     "tryb nieobecności to stretch lub computer, nie 'sleep'"),
    ("settings", {}, "nic do zmiany"),
]


@pytest.mark.parametrize(("action", "form", "polish"), SETTINGS_PROBLEMS)
def test_a_refused_setting_is_explained_in_polish(api: Api, action: str, form: dict[str, str],
                                                  polish: str) -> None:
    uid, player, page = _seated(api)
    refused = player.post(f"/games/{uid}/me/{action}",
                          data={"csrf_token": csrf_token(page), **form})
    assert refused.status_code == 400, refused.text
    assert '<html lang="pl">' in refused.text
    shown = [html.unescape(found) for found in ERROR.findall(refused.text)]
    assert len(shown) == 1 and polish in shown[0], shown
