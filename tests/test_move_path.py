"""The lean parts of a move's path (issue 22): the move's body taken without its schema when
the schema would take it as it is, the log entry written without the ORM, and no cookie session
for the API."""

from __future__ import annotations

from typing import Any

import pytest
from marshmallow import ValidationError

from app.core.models import Move, table_of
from app.service.records import Entry
from app.web.api.access import plain_move
from app.web.api.schemas import MOVE_INPUT_MAX, MoveIn
from tests.apifixtures import Api

pytest_plugins = ["tests.apifixtures"]

BODIES: list[Any] = [
    {"expected_seq": 0, "input": "pick red"},
    {"expected_seq": 12345678901234, "input": "x" * MOVE_INPUT_MAX},
    {"expected_seq": 3, "input": "é; ü"},
    {"expected_seq": 3, "input": " "},
    {"expected_seq": -1, "input": "end"},
    {"expected_seq": True, "input": "end"},
    {"expected_seq": 3.0, "input": "end"},
    {"expected_seq": "3", "input": "end"},
    {"expected_seq": None, "input": "end"},
    {"expected_seq": 3, "input": ""},
    {"expected_seq": 3, "input": "x" * (MOVE_INPUT_MAX + 1)},
    {"expected_seq": 3, "input": ["end"]},
    {"expected_seq": 3, "input": None},
    {"expected_seq": 3},
    {"input": "end"},
    {"expected_seq": 3, "input": "end", "extra": 1},
    {"expected_seq": 3, "inputs": "end"},
    {},
    [],
    "end",
]


@pytest.mark.parametrize("body", BODIES)
def test_a_body_taken_as_it_is_is_one_the_schema_takes_unchanged(body: Any) -> None:
    try:
        loaded = MoveIn().load(body)
    except ValidationError:
        loaded = None
    if plain_move(body):
        assert loaded == body
        assert [type(value) for value in loaded.values()] == [int, str]


def test_nearly_every_move_is_taken_as_it_is() -> None:
    assert plain_move({"expected_seq": 7, "input": "pick red"})
    assert plain_move({"input": "pick red", "expected_seq": 0})
    assert not plain_move({"expected_seq": True, "input": "pick red"})
    assert not plain_move({"expected_seq": 7, "input": "pick red", "note": ""})


def test_an_entry_has_the_columns_of_the_log() -> None:
    assert Entry._fields == tuple(column.name for column in table_of(Move).columns)
    assert Entry.__annotations__.keys() == Move.model_fields.keys()


def test_the_api_has_no_cookie_session(api: Api) -> None:
    """The API authenticates with tokens: a cookie a browser sends along is not read, and no
    answer of the API sets one; pages still have their session."""
    app = api.app
    interface = app.session_interface
    with app.test_request_context("/api/games", headers={"Cookie": "session=anything"}):
        from flask import request

        assert interface.is_null_session(interface.open_session(app, request))
    with app.test_request_context("/"):
        from flask import request

        assert not interface.is_null_session(interface.open_session(app, request))
    table = api.new_started(3)
    position, options = api.actor(table)
    api.client.set_cookie("session", "a page's cookie")
    moved = api.client.post(f"/api/games/{table.uid}/moves", headers=table.seat(position),
                            json={"expected_seq": options["seq"], "input": options["options"][0]})
    assert moved.status_code == 200 and "Set-Cookie" not in moved.headers
