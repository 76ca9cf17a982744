"""The Great Race's rules versions (docs/great-race-rules.md section 11) on the server, on SQLite
and PostgreSQL: a game is set up under the newest rules when it starts, and its deal is checked
under the rules it names; a ruleset sets a game up under an older version of its rules only to
deal it again, and refuses a version it does not have."""

from __future__ import annotations

import json
from typing import Any

import pytest
import sqlalchemy as sa

from app.features.fairness.records import check_record, record_of_export
from app.games import ruleset
from app.games.base import SeatSetup, SetupError
from app.games.greatrace.engine import GREAT_RACE_VERSION
from app.games.rng import Dealing
from app.service import GameService
from tests.apifixtures import bot_game

pytest_plugins = ["tests.apifixtures"]


def stored(service: GameService, uid: str) -> tuple[int, dict[str, Any]]:
    """The game's ``engine_version`` and initial state as the database holds them."""
    with service.engine.connect() as conn:
        version, initial = conn.execute(sa.text(
            "SELECT engine_version, initial_state FROM games WHERE uid = :uid"), {"uid": uid}).one()
    return version, json.loads(initial) if isinstance(initial, str) else initial


def test_a_game_created_under_older_rules_starts_under_the_newest(service: GameService) -> None:
    created = service.create_game(seats=[{"bot": True}] * 2, rules_name="great-race")
    uid = created["game"]
    with service.engine.begin() as conn:  # created by the server before the newest rules
        conn.execute(sa.text("UPDATE games SET engine_version = 1 WHERE uid = :uid"),
                     {"uid": uid})
    service.start(uid, created["creator_token"])
    version, initial = stored(service, uid)
    assert version == GREAT_RACE_VERSION == initial["version"] == 3


def test_the_deal_is_checked_under_the_rules_version_the_record_names(
        service: GameService) -> None:
    record = record_of_export(service.export(bot_game(service, rules_name="great-race")))
    assert record["engine_version"] == GREAT_RACE_VERSION and check_record(record).fair
    older = {**record, "engine_version": 1}
    assert any("deal at the start" in p for p in check_record(older).problems)
    unnamed = {k: v for k, v in record.items() if k != "engine_version"}  # (an older record)
    assert any("deal at the start" in p for p in check_record(unnamed).problems)
    unknown = check_record({**record, "engine_version": 99}).problems
    assert unknown == ["the record cannot be dealt again: great-race has rules versions 1 to 3, "
                       "not 99"]


@pytest.mark.parametrize(("game", "versions"), [("great-race", (1, 2, 3)), ("titan-race", (1, 2))])
def test_a_ruleset_sets_up_its_own_versions_only(game: str, versions: tuple[int, ...]) -> None:
    rules = ruleset(game)
    assert rules.version == versions[-1]
    setup: dict[str, Any] = {"variant": "standard", "setup": rules.default_setup("standard"),
                             "seats": [SeatSetup(0), SeatSetup(1), SeatSetup(2)]}
    newest, _ = rules.start(**setup, dealing=Dealing(seed=4))
    for version in versions:
        dealt, _ = rules.start(**setup, dealing=Dealing(seed=4), version=version)
        if version == versions[-1]:
            assert dealt == newest
    if game == "great-race":  # the same deal, written as each version's engine wrote it
        first, _ = rules.start(**setup, dealing=Dealing(seed=4), version=1)
        second, _ = rules.start(**setup, dealing=Dealing(seed=4), version=2)
        crews = [{k: v for k, v in crew.items() if k != "hand_answers"}
                 for crew in newest["crews"]]
        assert "version" not in first and first == {k: v for k, v in newest.items()
                                                    if k != "version"} | {"crews": crews}
        assert second == {**first, "version": 2}
    for wrong in (0, versions[-1] + 1):
        with pytest.raises(SetupError, match=f"rules versions 1 to {versions[-1]}, not {wrong}"):
            rules.start(**setup, dealing=Dealing(seed=4), version=wrong)
