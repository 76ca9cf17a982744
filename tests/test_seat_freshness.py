"""The API's seat data is never stale (issue 38): a join, however it is made (the invitation
link a page or the CLI accepts, a seat kept for an address), is seen at once by every answer,
in the process that made it and in any other (several web workers share one database)."""

from __future__ import annotations

from typing import Any

from app.service import GameService
from tests.apifixtures import Api, make_service

pytest_plugins = ["tests.apifixtures"]


def accepted(api: Api, uid: str) -> list[bool]:
    return [bool(seat["accepted"]) for seat in api.state(uid)["game"]["seats"]]


def test_a_join_is_seen_at_once_by_the_api(api: Api) -> None:
    table = api.create(3)
    assert accepted(api, table.uid) == [False, False, False]  # (read once: a cache would keep it)
    api.service.accept(table.invitations[0])
    assert accepted(api, table.uid) == [True, False, False]
    response = api.client.post("/api/invitations/accept",
                               json={"invite_token": table.invitations[2], "name": "Cy"})
    assert response.status_code == 201
    assert accepted(api, table.uid) == [True, False, True]
    assert [seat["name"] for seat in api.state(table.uid)["game"]["seats"]][2] == "Cy"


def test_a_join_in_another_worker_is_seen_at_once(api: Api,
                                                  migrated_database_url: str) -> None:
    """Two services on one database stand for two web workers: each keeps its own copies."""
    other: GameService = make_service(migrated_database_url)
    try:
        table = api.create(3)
        assert accepted(api, table.uid) == [False, False, False]
        other.accept(table.invitations[1])
        assert accepted(api, table.uid) == [False, True, False]
        seen: dict[str, Any] = other.state(table.uid, None)
        assert [bool(s["accepted"]) for s in seen["game"]["seats"]] == [False, True, False]
        api.service.accept(table.invitations[0])
        again = other.state(table.uid, None)
        assert [bool(s["accepted"]) for s in again["game"]["seats"]] == [True, True, False]
    finally:
        other.engine.dispose()
