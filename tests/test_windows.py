"""Windows on the server: a seat's standing choice answers its windows at once, the same way
whatever its hand holds; the computer answers its windows at once at every level; whoever owes
a window is told by mail. On SQLite and PostgreSQL.

The games start at a scenario's position: a real game is made, started and exported, and its
export, with the scenario's state as its start, is imported as a new game (the import checks it
replays).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from sqlmodel import select

from app.core.models import BotTurn, Game, OutboxMail
from app.features.clock.playersettings import SettingsChange
from app.features.clock.timekeeper import install as install_timekeeper
from app.games import ruleset
from app.games.titanrace.engine.cards import CARDS
from app.games.titanrace.engine.scenario import load_scenario
from app.mail.notify import install as install_notifier
from app.service import GameService
from tests.apifixtures import make_service

pytest_plugins = ["tests.apifixtures"]

ANN, BOB, CYD = 0, 1, 2
TITAN_RACE = ruleset("titan-race")


@pytest.fixture
def svc(migrated_database_url: str) -> Iterator[GameService]:
    made = make_service(migrated_database_url)
    install_notifier(made)
    yield made
    made.engine.dispose()


def push_position(bob_hand: list[str], *, ann_hand: list[str] | None = None) -> dict[str, Any]:
    """Ann's Grinder, her red die picked, before Bob's Craken (holding ``bob_hand``); every
    other card face down in the deck."""
    held = [*bob_hand, *(ann_hand or [])]
    return {
        "circuit": {"name": "plain"},
        "titans": [
            {"titan": "grinder", "space": "D6", "hand": ann_hand or []},
            {"titan": "craken", "space": "D8", "hand": bob_hand},
            {"titan": "rassik", "space": "A3"},
        ],
        "deck": sorted(card for card in CARDS if card not in held),
        "turn": {"titan": "grinder", "die": "red"},
    }


def game_at(svc: GameService, scenario: dict[str, Any], seats: list[dict[str, Any]]) -> str:
    """A running game of ``seats`` whose log starts at ``scenario``'s position."""
    created = svc.create_game(seats=seats, rules_name="titan-race", name="Windows")
    for invitation in created["invitations"]:
        svc.accept(invitation["invite_token"])
    svc.start(created["game"], created["creator_token"])
    export = svc.export(created["game"])
    race, _ = load_scenario(scenario)
    export["game"]["initial_state"] = race.state.to_json()
    export["moves"] = []
    for seat in export["seats"]:
        titan = scenario["titans"][seat["position"]]["titan"]
        seat["pieces"] = {"titans": [titan]}
    uid: str = svc.import_game(export)["game"]
    return uid


def people(n: int = 3) -> list[dict[str, Any]]:
    return [{"email": f"{who}@example.com", "name": who.title()}
            for who in ("ann", "bob", "cyd")[:n]]


def standing(svc: GameService, uid: str, position: int, choice: str) -> dict[str, Any]:
    return install_timekeeper(svc).change_settings(uid, position,
                                                   SettingsChange(reactions=choice))


def log(svc: GameService, uid: str) -> list[dict[str, Any]]:
    moves: list[dict[str, Any]] = svc.export(uid)["moves"]
    return moves


def seen_by(svc: GameService, uid: str, position: int | None) -> dict[str, Any]:
    """What a seat (or a spectator) reads of the game, the times of the log aside."""
    body = svc.state(uid, position)
    body.pop("game", None)
    return body


@pytest.mark.parametrize("choice", ["never", "dispel"])
def test_a_standing_choice_answers_at_once_whatever_the_hand(svc: GameService,
                                                             choice: str) -> None:
    """Bob's Craken is pushed holding Dispel or Speed Potion: with "never" (or "dispel",
    which does not fit a push) his window is passed at once, and Ann and a spectator cannot
    tell the two hands apart."""
    seen = []
    for hand in (["dispel"], ["speed-potion"]):
        uid = game_at(svc, push_position(hand), people())
        assert standing(svc, uid, BOB, choice)["reactions"] == choice
        seq = svc.state(uid, ANN)["seq"]
        answer = svc.submit(uid, ANN, seq, "move S")
        assert answer["applied"] and answer["game"]["to_act"] == [ANN], answer
        entries = log(svc, uid)
        assert [(e["seat"], e["input"], e["actor"]) for e in entries] == [
            (ANN, "move S", "player"), (BOB, "pass", "player")]
        seen.append({who: seen_by(svc, uid, who) for who in (ANN, CYD, None)})
    assert seen[0] == seen[1]


def test_a_card_chosen_in_advance_is_played_when_it_fits(svc: GameService) -> None:
    """Bob's standing "dispel": Ann's Thunderbolt on his Craken is dispelled at once when he
    holds one, and passed at once when he does not; the card played shows, as the rules say."""
    for hand, answer in ((["dispel"], "play dispel"), (["leap"], "pass")):
        uid = game_at(svc, push_position(hand, ann_hand=["thunderbolt"]), people())
        standing(svc, uid, BOB, "dispel")
        svc.submit(uid, ANN, svc.state(uid, ANN)["seq"], "play thunderbolt D8")
        assert [(e["seat"], e["input"]) for e in log(svc, uid)] == [
            (ANN, "play thunderbolt D8"), (BOB, answer)]
        assert svc.state(uid, ANN)["game"]["to_act"] == [ANN]


def test_a_seat_that_asks_is_asked_and_told_by_mail(svc: GameService) -> None:
    uid = game_at(svc, push_position(["leap"]), people())
    assert standing(svc, uid, BOB, "ask")["reactions"] == "ask"
    svc.submit(uid, ANN, svc.state(uid, ANN)["seq"], "move S")
    state = svc.state(uid, BOB)
    assert state["game"]["to_act"] == [BOB]
    assert state["view"]["pending"]["kind"] == "react"
    assert state["view"]["pending"]["options"] == ["pass"]
    with svc.session() as s:
        game = s.exec(select(Game).where(Game.uid == uid)).one()
        kinds = [(row.recipient, row.kind) for row in s.exec(
            select(OutboxMail).where(OutboxMail.game_id == game.id)).all()]
    assert ("bob@example.com", "react") in kinds, kinds


def test_a_standing_choice_is_the_seats_own(svc: GameService) -> None:
    uid = game_at(svc, push_position(["leap"]), people())
    with pytest.raises(Exception, match="reactions must be one of ask, never, last-shield"):
        standing(svc, uid, BOB, "thunderbolt")
    standing(svc, uid, BOB, "never")
    settings = install_timekeeper(svc).settings_of(uid, BOB)
    assert settings["reactions"] == "never"
    assert install_timekeeper(svc).settings_of(uid, ANN)["reactions"] == "ask"
    for who in (ANN, CYD, None):  # nobody else reads it
        assert "never" not in str(svc.state(uid, who)).replace("'never'", "")


@pytest.mark.parametrize("level", ["easy", "normal", "strong"])
def test_the_computer_answers_its_window_at_once_at_every_level(svc: GameService,
                                                                level: str) -> None:
    """A computer's window is answered inside the move that opened it (no worker's turn), so
    how long it stays open tells nothing of the computer's hand."""
    seats = [*people(1), {"bot": True, "level": level}, *people(3)[2:]]
    uid = game_at(svc, push_position(["repulse"]), seats)
    svc.submit(uid, ANN, svc.state(uid, ANN)["seq"], "move S")
    entries = log(svc, uid)
    assert entries[0]["input"] == "move S"
    assert entries[1]["seat"] == BOB and entries[1]["actor"] == "computer"
    assert entries[1]["input"] in ("play repulse", "pass")
    with svc.session() as s:
        game = s.exec(select(Game).where(Game.uid == uid)).one()
        assert s.exec(select(BotTurn).where(BotTurn.game_id == game.id)).all() == []


def test_no_takeback_after_the_computer_showed_a_card(svc: GameService) -> None:
    """Ann alone with the computer: after its Dispel answered her Thunderbolt, taking her move
    back would leave her knowing its hand; refused. Without a card shown it is taken back."""
    from app.features.takeback.takebacks import HIDDEN
    from app.features.takeback.takebacks import install as install_takebacks
    from app.games.ui import game_ui
    from app.service.errors import Phrase

    computer = [*people(1), {"bot": True}, {"bot": True}]
    uid = game_at(svc, push_position(["dispel"], ann_hand=["thunderbolt"]), computer)
    svc.submit(uid, ANN, svc.state(uid, ANN)["seq"], "play thunderbolt D8")
    assert [e["input"] for e in log(svc, uid)] == ["play thunderbolt D8", "play dispel"]
    with pytest.raises(Exception) as refused:
        install_takebacks(svc).ask(uid, ANN)
    assert getattr(refused.value, "words", None) == (
        HIDDEN, {"what": Phrase(game_ui("titan-race").hidden_since)})

    quiet = game_at(svc, push_position(["leap"]), computer)
    svc.submit(quiet, ANN, svc.state(quiet, ANN)["seq"], "move S")
    assert [e["input"] for e in log(svc, quiet)] == ["move S", "pass"]
    done = install_takebacks(svc).ask(quiet, ANN)["takeback"]
    assert done["status"] == "agreed"


@pytest.mark.parametrize(("hand", "assistants", "choice", "answer"), [
    (["militia"], {"S": 1, "P": 1}, "never", "take"),
    (["militia"], {"S": 1, "P": 1}, "militia", "play militia"),
    (["militia"], {"S": 1, "P": 1}, "guard", "guard"),
    (["militia"], {"P": 1}, "guard", "take"),
    (["jerrycan"], {"S": 1, "P": 1}, "militia", "take"),
    (["militia"], {"S": 1, "P": 1}, "ask", None),
])
def test_the_great_races_avoid_is_answered_by_the_standing_choice(
        hand: list[str], assistants: dict[str, int], choice: str, answer: str | None) -> None:
    from app.games.greatrace.engine.scenario import load_scenario as load_great_race

    rules = ruleset("great-race")
    game, _ = load_great_race({
        "game": "great-race", "phase": "convoy",
        "crews": [{"crew": "french", "hand": ["saboteur"], "assistants": {"P": 1}},
                  {"crew": "belgian", "hand": hand, "assistants": assistants}]})
    game.apply("play saboteur belgian")
    pending = rules.pending(game)
    assert pending is not None and pending["kind"] == "avoid" and rules.is_window(pending)
    seat = rules.to_act(game)[0]
    assert rules.standing_answer(game, seat, choice) == answer
    assert rules.standing_answer(game, 1 - seat, "never") is None  # (not its decision)
