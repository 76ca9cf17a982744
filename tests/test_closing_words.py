"""The words that close a game (issue 38): the game-over mail puts a space before "… has won.",
the command line names the winner's player once ("Craken wins (Ewa)"), and a finished game's
page says no deadline."""

from __future__ import annotations

import re
from typing import Any

import sqlalchemy as sa

from app.core.models import OutboxMail
from app.mail.render import MailRenderer
from cli.player_state import winner_text
from tests.apifixtures import Api
from tests.test_pages import browser
from tests.test_rematch import finished

pytest_plugins = ["tests.apifixtures"]

DEADLINE = "Decisions have a deadline of"


def test_the_game_over_mail_says_the_winner_after_a_space(api: Api) -> None:
    finished(api)
    renderer = MailRenderer(api.service)
    with api.service.session() as s:
        rows = s.exec(sa.select(OutboxMail).where(OutboxMail.kind == "game_over",
                                                  OutboxMail.recipient == "bob@example.com")
                      ).scalars().all()
        assert rows
        html = renderer.render(rows[0], always=True, session=s).html
    assert "has won." in html
    assert not re.search(r"[.\w]<strong>[^<]*has won\.", html), html


def test_a_finished_game_says_no_deadline(api: Api) -> None:
    running = api.new_started(3)
    client = browser(api)
    assert DEADLINE in client.get(f"/games/{running.uid}").text
    table = finished(api)
    page = client.get(f"/games/{table.uid}").text
    assert api.state(table.uid)["game"]["status"] == "finished"
    assert DEADLINE not in page


def state_with(winner: str, winners: list[str], seats: list[dict[str, Any]]) -> dict[str, Any]:
    return {"game": {"ruleset": "titan-race", "seats": seats, "winner": winner},
            "view": {"winner": winner, "winners": winners}, "you": None}


def test_the_command_line_names_the_winners_player_once() -> None:
    ewa = state_with("craken", ["craken"],
                     [{"position": 0, "name": "Ewa", "titans": ["craken"]},
                      {"position": 1, "name": "Bob", "titans": ["rassik"]}])
    assert winner_text(ewa).plain == "Game over: Craken wins (Ewa)."
    computer = state_with("rassik", ["rassik", "grinder"],
                          [{"position": 0, "name": "Ewa", "titans": ["craken"]},
                           {"position": 1, "name": "Computer", "bot": True,
                            "titans": ["grinder", "rassik"]}])
    assert winner_text(computer).plain == "Game over: Rassik with Grinder wins (the computer)."


def test_the_page_counts_laps_as_the_mail_does() -> None:
    """A Titan past the finish line is on lap 3 of 3 on the page too (the engine counts on)."""
    from app.games.ui import game_ui

    view = {"titans": {"craken": {"space": "A1", "lap": 4, "life": 5, "hand": 2},
                       "rassik": {"space": "C3", "lap": 2, "life": 3, "hand": 1}}}
    seats = [{"position": 0, "name": "Ewa", "pieces": ["craken"], "bot": False},
             {"position": 1, "name": "Bob", "pieces": ["rassik"], "bot": False}]
    laps = {row["titan"]: row["lap"] for row in game_ui("titan-race").rows(view, seats, None, [])}
    assert laps == {"craken": 3, "rassik": 2}
