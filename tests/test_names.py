"""Names and one-line texts cannot impersonate: no fake lines, no reordered text.

A player's or a game's name and a pause reason are one line: a control character (CR, LF,
tab, escape, DEL, C1), a Unicode line or paragraph separator or a bidirectional override or
isolate is refused with a clear 400 naming the character (``U+000A``), and nothing changes:
on the JSON API (a new game's name and seats, an accepted invitation, a pause), the new-game
form, the join page, the owner's pause and replace forms, and the player's command line
(``login --name``), which asks the API. A name too long is refused, not cut. A chat message
keeps its line breaks and loses every other control or direction character. The service
itself refuses them (the command line and mail reach it without the API), so that neither
database is ever handed a NUL or a lone surrogate: PostgreSQL would refuse the NUL (a 500)
where SQLite stored it, and no database or mail takes a lone surrogate. On SQLite and
PostgreSQL.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from click.testing import CliRunner
from flask.testing import FlaskClient
from werkzeug.serving import make_server

from app.core.textrules import unusable_character
from app.features.chat import messages as chat
from app.service import BadRequest, GameService
from cli.main import main
from tests.apifixtures import Api, Table, human_game, table_rows
from tests.cases import each_case
from tests.netutil import free_port, serve_in_thread

pytest_plugins = ["tests.apifixtures"]

CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')
TABLES = ("games", "seats", "moves", "api_tokens", "chat_messages", "webhooks")
IMPERSONATING = {
    "line feed": ("Ann\nBob resigned", "U+000A"),
    "carriage return": ("Ann\rBob", "U+000D"),
    "tab": ("Ann\tBob", "U+0009"),
    "escape": ("Ann\x1b[2J", "U+001B"),
    "delete": ("Ann\x7f", "U+007F"),
    "next line (C1)": ("Ann\x85Bob", "U+0085"),
    "line separator": ("Ann\u2028Bob", "U+2028"),
    "paragraph separator": ("Ann\u2029Bob", "U+2029"),
    "right-to-left override": ("Ann\u202egnp.exe", "U+202E"),
    "first-strong isolate": ("Ann\u2068Bob", "U+2068"),
    "right-to-left mark": ("Ann\u200fBob", "U+200F"),
    # characters nobody sees: two names that look alike would be two names (issue 36)
    "zero width space": ("An\u200bn", "U+200B"),
    "zero width joiner between letters": ("An\u200dn", "U+200D"),
    "word joiner": ("Ann\u2060", "U+2060"),
    "invisible times": ("Ann\u2062Bob", "U+2062"),
    "byte order mark": ("\ufeffAnn", "U+FEFF"),
    "soft hyphen": ("An\u00adn", "U+00AD"),
    "tag letter": ("Ann\U000e0041", "U+E0041"),
    "tag text after a flag": ("\U0001f3f4\U000e0067\U000e0062\U000e007f", "U+E0067"),
    "variation selectors with nothing to style": ("Ann\ufe0f\ufe0f", "U+FE0F"),
    "hangul filler": ("\u3164", "U+3164"),
    "blank braille pattern": ("Ann\u2800", "U+2800"),
    "private use": ("Ann\ue000", "U+E000"),
    "unassigned": ("Ann\u0378", "U+0378"),
}
"""Names that would start a fake line, show text in another order or hold what nobody sees,
and what is named."""
GOOD_NAMES = ("Zoë O'Brien-Łukasiewicz", "محمد", "李小龍", "Ann & <Bob> ❤️", "family 👨‍👩‍👧",
              "@everyone 👩🏽‍💻🏳️‍🌈")
"""(An emoji keeps what it is made of: a variation selector after the character it styles,
a skin tone, a zero-width joiner between two pictographs.)"""
UNSEEN_IN_ADDRESSES = {
    "zero width space": ("ann\u200b@example.com", "U+200B"),
    "tag letters": ("ann@example.com\U000e0041\U000e0042", "U+E0041"),
    "byte order mark": ("\ufeffann@example.com", "U+FEFF"),
    "soft hyphen": ("an\u00adn@example.com", "U+00AD"),
    "zero width joiner": ("ann@exa\u200dmple.com", "U+200D"),
    "private use": ("ann@example.com\ue000", "U+E000"),
}
"""Invitation addresses that look like another, and what is named."""


def refused(response: Any, point: str, status: int = 400) -> str:
    text = response.get_data(as_text=True)
    assert response.status_code == status, text
    assert point in text, text
    return text


def browser(api: Api) -> FlaskClient:
    client: FlaskClient = api.app.test_client()
    return client


def csrf(client: FlaskClient, url: str = "/new") -> str:
    found = CSRF.search(client.get(url).get_data(as_text=True))
    assert found, url
    return found.group(1)


# ---------------------------------------------------------------------- the JSON API


def test_api_refuses_a_game_name_or_seat_name_that_is_not_one_line(api: Api) -> None:
    def check(text: str, point: str) -> None:
        seats = [{"email": f"{c}@example.com"} for c in "abc"]
        refused(api.client.post("/api/games", json={"seats": seats, "name": text}), point)
        seats[1]["name"] = text
        refused(api.client.post("/api/games", json={"seats": seats}), point)
        assert api.scalar("SELECT count(*) FROM games") == 0

    each_case(IMPERSONATING.items(), check)


def test_api_refuses_such_a_name_on_accepting(api: Api) -> None:
    table = api.create(3)
    before = table_rows(api, *TABLES)

    def check(text: str, point: str) -> None:
        refused(api.client.post("/api/invitations/accept",
                                json={"invite_token": table.invitations[0], "name": text}),
                point)
        assert table_rows(api, *TABLES) == before

    each_case(IMPERSONATING.items(), check)
    taken = api.client.post("/api/invitations/accept",
                            json={"invite_token": table.invitations[0], "name": "Ann"})
    assert taken.status_code == 201  # the invitation is still good


def test_api_refuses_such_a_pause_reason(api: Api, started: Table) -> None:
    before = table_rows(api, *TABLES)

    def check(text: str, point: str) -> None:
        refused(api.client.post(f"/api/games/{started.uid}/pause", json={"reason": text},
                                headers=started.creator), point)
        assert table_rows(api, *TABLES) == before

    each_case(IMPERSONATING.items(), check)
    assert api.state(started.uid)["game"]["paused"] is False


def test_names_too_long_are_refused_not_cut(api: Api) -> None:
    seats = [{"email": f"{c}@example.com"} for c in "abc"]
    seats[0]["name"] = "n" * 101
    answer = api.client.post("/api/games", json={"seats": seats})
    assert answer.status_code == 400 and "at most 100" in answer.get_json()["error"]
    assert api.scalar("SELECT count(*) FROM games") == 0


def test_good_names_are_kept_as_written(api: Api) -> None:
    seats = [{"email": f"p{i}@example.com", "name": name} for i, name in enumerate(GOOD_NAMES)]
    table = api.create(seats, name="  Ünïcode race 🏁  ")
    state = api.state(table.uid)["game"]
    assert state["name"] == "Ünïcode race 🏁"
    assert [seat["name"] for seat in state["seats"]] == list(GOOD_NAMES)


@pytest.mark.parametrize("email", ["ann\u202e@example.com", "ann@exa\u2028mple.com",
                                   "a" * 250 + "@example.com"])
def test_api_refuses_such_an_address_for_a_replaced_seat(api: Api, started: Table,
                                                         email: str) -> None:
    before = table_rows(api, *TABLES)
    answer = api.client.post(f"/api/games/{started.uid}/seats/1/replace", json={"email": email},
                             headers=started.creator)
    assert answer.status_code == 400, answer.get_json()
    assert table_rows(api, *TABLES) == before


@pytest.mark.parametrize(("text", "name", "address"), [
    ("\u2764\ufe0f", None, "U+FE0F"),  # a heart in colour: a name, never an address
    ("\u2764\ufe0f\ufe0f", "U+FE0F", "U+FE0F"),  # a second selector styles nothing
    ("\ufe0fAnn", "U+FE0F", "U+FE0F"),  # nor one at the start
    ("Ann\ufe0f", "U+FE0F", "U+FE0F"),  # nor after a letter ("Ann" would look the same)
    ("\u845b\U000e0100", "U+E0100", "U+E0100"),  # nor another kind of selector
    ("\U0001f469\U0001f3fd\u200d\U0001f4bb", None, "U+200D"),  # tone, joiner, laptop
    ("\u2b50\u200d", "U+200D", "U+200D"),  # a joiner joining nothing
    ("\U0001f468\u200d\u200d\U0001f469", "U+200D", "U+200D"),
    ("a\u200db", "U+200D", "U+200D"),  # between letters it only hides
    ("Ann", None, None),
])
def test_what_an_emoji_keeps_and_an_address_does_not(
        text: str, name: str | None, address: str | None) -> None:
    from app.core.textrules import hidden_character, line_problem

    assert line_problem(text) == name
    assert hidden_character(text, emoji=False) == address


def test_api_refuses_an_address_holding_what_nobody_sees(api: Api, started: Table) -> None:
    """On a new game's seats, as its owner, for a new invitation and for a replaced seat: a
    400 naming the character, and nothing changed."""
    open_table = api.create(3)
    before = table_rows(api, *TABLES)

    def check(email: str, point: str) -> None:
        seats: list[dict[str, Any]] = [{"email": f"{c}@example.com"} for c in "abc"]
        answer = api.client.post("/api/games", json={"seats": [*seats[:2], {"email": email}]})
        refused(answer, point)
        assert answer.get_json()["error"].startswith(f"seat 3: the address '{email}' holds")
        refused(api.client.post("/api/games", json={"seats": seats, "owner_email": email}),
                point)
        refused(api.client.post(f"/api/games/{open_table.uid}/invitations",
                                json={"position": 1, "email": email},
                                headers=open_table.creator), point)
        refused(api.client.post(f"/api/games/{started.uid}/seats/1/replace",
                                json={"email": email}, headers=started.creator), point)
        assert table_rows(api, *TABLES) == before

    each_case(UNSEEN_IN_ADDRESSES.items(), check)


def test_the_command_line_refuses_an_address_holding_what_nobody_sees(
        api: Api, tmp_path: Path, titanpost: str) -> None:
    from tests.apifixtures import run_titanpost

    email, point = UNSEEN_IN_ADDRESSES["zero width space"]
    done = run_titanpost(titanpost, "admin", "new-game", "--seat", "ann@example.com",
                         "--seat", email, "--bot", database_url=api.url)
    assert done.returncode == 1 and point in done.stderr, done.stderr
    assert "Traceback" not in done.stderr
    assert api.scalar("SELECT count(*) FROM games") == 0


# ---------------------------------------------------------------------- the pages


def _new_game_form(token: str, **changes: str) -> dict[str, str]:
    return {"csrf_token": token, "name": "Friday race", "variant": "standard",
            "circuit0": "kaldheira", "seat0_kind": "human", "seat0_email": "ann@example.com",
            "seat1_kind": "human", "seat1_email": "ben@example.com", "seat2_kind": "computer",
            **changes}


def test_the_new_game_form_refuses_such_names(api: Api) -> None:
    client = browser(api)
    token = csrf(client)

    def check(text: str, point: str) -> None:
        refused(client.post("/new", data=_new_game_form(token, name=text)), point)
        page = refused(client.post("/new", data=_new_game_form(token, seat1_name=text)), point)
        if unusable_character(text) is None:  # (else refused before the form is read)
            assert "seat 2" in page  # (the form numbers its seats from 1)
        assert api.scalar("SELECT count(*) FROM games") == 0

    each_case(IMPERSONATING.items(), check)
    assert client.post("/new", data=_new_game_form(token)).status_code == 303


def test_the_new_game_form_speaks_polish_when_asked(api: Api) -> None:
    client = browser(api)
    token = csrf(client, "/new?lang=pl")
    page = refused(client.post("/new?lang=pl", data=_new_game_form(token, name="a\nb")),
                   "U+000A")
    assert "nazwa gry to jeden wiersz" in page
    page = refused(client.post("/new?lang=pl", data=_new_game_form(token, name="a\x1bb")),
                   "U+001B")
    assert "To żądanie zawiera znak" in page
    assert api.scalar("SELECT count(*) FROM games") == 0


def test_the_new_game_form_refuses_a_long_name_instead_of_cutting_it(api: Api) -> None:
    client = browser(api)
    refused(client.post("/new", data=_new_game_form(csrf(client), name="n" * 201)),
            "at most 200")
    assert api.scalar("SELECT count(*) FROM games") == 0


def test_the_join_page_refuses_such_a_name(api: Api) -> None:
    table = api.create(3)
    client = browser(api)
    token = csrf(client, f"/join/{table.invitations[0]}")
    before = table_rows(api, *TABLES)

    def check(text: str, point: str) -> None:
        refused(client.post(f"/join/{table.invitations[0]}", data={"csrf_token": token,
                                                                   "name": text}), point)
        assert table_rows(api, *TABLES) == before

    each_case(IMPERSONATING.items(), check)
    joined = client.post(f"/join/{table.invitations[0]}", data={"csrf_token": token,
                                                                "name": "Ann"})
    assert joined.status_code == 303
    assert api.rows("SELECT player_name FROM seats WHERE position = 0") == [("Ann",)]


def _owner(api: Api, table: Table) -> tuple[FlaskClient, str]:
    """A browser holding the game's creator token, and its CSRF token."""
    client = browser(api)
    token = csrf(client)
    answer = client.post(f"/games/{table.uid}/setup", data={"csrf_token": token,
                                                            "creator_token": table.creator_token})
    assert answer.status_code == 303
    return client, token


def test_the_owner_pause_form_refuses_such_a_reason(api: Api, started: Table) -> None:
    client, token = _owner(api, started)
    before = table_rows(api, *TABLES)

    def check(text: str, point: str) -> None:
        refused(client.post(f"/games/{started.uid}/pause", data={"csrf_token": token,
                                                                 "reason": text}), point)
        assert table_rows(api, *TABLES) == before

    each_case(IMPERSONATING.items(), check)
    assert client.post(f"/games/{started.uid}/pause",
                       data={"csrf_token": token, "reason": "tea"}).status_code == 303


def test_the_owner_replace_form_refuses_an_address_with_a_direction_mark(
        api: Api, started: Table) -> None:
    client, token = _owner(api, started)
    before = table_rows(api, *TABLES)
    answer = client.post(f"/games/{started.uid}/seats/1/replace",
                         data={"csrf_token": token, "email": "moc.elpmaxe@\u202eann"})
    assert answer.status_code == 400
    assert table_rows(api, *TABLES) == before


def test_the_pages_refuse_an_address_holding_what_nobody_sees(api: Api, started: Table) -> None:
    client, token = _owner(api, started)
    form_client = browser(api)
    form_token = csrf(form_client)
    before = table_rows(api, *TABLES)

    def check(email: str, point: str) -> None:
        refused(client.post(f"/games/{started.uid}/seats/1/replace",
                            data={"csrf_token": token, "email": email}), point)
        refused(form_client.post("/new", data=_new_game_form(form_token, seat1_email=email)),
                point)
        assert table_rows(api, *TABLES) == before

    each_case(UNSEEN_IN_ADDRESSES.items(), check)
    page = refused(form_client.post("/new?lang=pl", data=_new_game_form(
        csrf(form_client, "/new?lang=pl"), seat1_email="ben\u200b@example.com")), "U+200B")
    assert "znak, którego nie widać" in page


# ---------------------------------------------------------------------- the command line


@pytest.fixture
def served(api: Api) -> Iterator[str]:
    """The app served over HTTP on loopback (the player's command line talks to it)."""
    port = free_port()
    server = make_server("127.0.0.1", port, api.app, threaded=True)
    serve_in_thread(server)
    yield f"http://127.0.0.1:{port}"
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize(("text", "point"), [IMPERSONATING["line feed"],
                                             IMPERSONATING["right-to-left override"],
                                             IMPERSONATING["escape"],
                                             IMPERSONATING["zero width space"],
                                             IMPERSONATING["tag letter"]])
def test_login_name_on_the_command_line_is_refused(api: Api, served: str, tmp_path: Path,
                                                   text: str, point: str) -> None:
    table = api.create(3)
    link = f"{served}/join/{table.invitations[0]}"
    env = {"TITANPOST_CONFIG": str(tmp_path / "config")}
    before = table_rows(api, *TABLES)
    result = CliRunner().invoke(main, ["login", link, "--name", text], env=env)
    assert result.exit_code == 1, result.output
    assert point in result.stderr and "Traceback" not in result.stderr
    assert table_rows(api, *TABLES) == before
    result = CliRunner().invoke(main, ["login", link, "--name", "Ann"], env=env)
    assert result.exit_code == 0, result.output
    assert api.rows("SELECT player_name FROM seats WHERE position = 0") == [("Ann",)]


# ---------------------------------------------------------------------- chat


def test_chat_keeps_line_breaks_and_refuses_other_controls_over_the_api(
        api: Api, started: Table) -> None:
    url = f"/api/games/{started.uid}/chat"
    posted = api.client.post(url, json={"text": "first\r\nsecond"}, headers=started.seat(0))
    assert posted.status_code == 201
    assert posted.get_json()["message"]["text"] == "first\nsecond"
    before = table_rows(api, *TABLES)
    refused(api.client.post(url, json={"text": "hi\x1b[2J"}, headers=started.seat(0)),
            "U+001B")
    refused(api.client.post(url, json={"text": "hi\x00"}, headers=started.seat(0)), "U+0000")
    assert table_rows(api, *TABLES) == before


def test_chat_from_mail_or_the_command_line_loses_what_is_not_text(service: GameService) -> None:
    uid = human_game(service, 3)["game"]
    posted = chat.post(service, uid, 0, "a\u202eb\u2028c\td\x00e\udc00f\x85g\x1b")
    assert posted["message"]["text"] == "ab\nc def\ng"
    assert [m["text"] for m in chat.read(service, uid, 0)["messages"]] == ["ab\nc def\ng"]


# ---------------------------------------------------------------------- the service, both databases


@pytest.mark.parametrize("bad", ["a\x00b", "a\udc00b", "a\nb", "a\u202eb", "a\u200bb",
                                 "a\U000e0041b"])
def test_the_service_refuses_before_the_database_sees_it(service: GameService,
                                                         bad: str) -> None:
    """What reaches the service without the API (the command line, mail): refused with
    BadRequest, never a database error, on either database."""
    seats = [{"email": f"{c}@example.com"} for c in "abc"]
    with pytest.raises(BadRequest):
        service.create_game(seats=seats, name=bad)
    with pytest.raises(BadRequest):
        service.create_game(seats=[{**seats[0], "name": bad}, *seats[1:]])
    with pytest.raises(BadRequest):
        service.create_game(seats=[{"email": f"x{bad}y@example.com"}, *seats[1:]])
    created = service.create_game(seats=seats)
    with pytest.raises(BadRequest):
        service.accept(created["invitations"][0]["invite_token"], name=bad)
    game = human_game(service, 3)
    with pytest.raises(BadRequest):
        service.pause(game["game"], game["creator_token"], reason=bad)
    with service.engine.connect() as conn:
        stored = conn.execute(sa.text("SELECT player_name, email FROM seats UNION ALL "
                                      "SELECT name, '' FROM games")).all()
    assert not any(bad in text for row in stored for text in row)


def test_an_import_holding_a_surrogate_is_refused(service: GameService) -> None:
    game = human_game(service, 3)
    export = service.export(game["game"])
    export["seats"][0]["name"] = "Ann\udc00"
    with pytest.raises(BadRequest, match="U\\+DC00"):
        service.import_game(export)

