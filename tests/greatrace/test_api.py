"""The Great Race through the JSON API, on SQLite and PostgreSQL: a game is created, joined and
started like a Titan Race; the planning phase is a simultaneous secret decision (each seat's plan
sealed until the last is in, then revealed as one log entry); hidden information (plans, hands,
the bag and deck order) reaches nobody else through the state, options and log; computer seats
play a whole race to a winner."""

from __future__ import annotations

import json
from typing import Any

from app.games.greatrace.engine.pieces import CARDS
from tests.apifixtures import ADMIN_TOKEN, Api, Table, bearer

pytest_plugins = ["tests.apifixtures"]

HAND_CARDS = set(CARDS)


def great_race(api: Api, seats: int | list[dict[str, Any]] = 3, **body: Any) -> Table:
    table = api.accept_all(api.create(seats, game="great-race", **body))
    api.start(table)
    return table


def plan_seats(api: Api, table: Table) -> list[int]:
    """The seats that owe a plan now (the API's to_act), checking the decision is a plan."""
    acting = api.to_act(table.uid, next(iter(table.tokens.values())))
    for position in acting:
        options = api.options(table, position)
        assert options["yours"] and options["pending"]["kind"] == "plan", options
    return acting


def mine_view(api: Api, table: Table, crew: str) -> Any:
    return api.state(table.uid, table.tokens[0])["view"]["crews"][crew]["assistants"]


def play_until_planning(api: Api, table: Table) -> None:
    """Answer the bivouac (each seat's first option) until the planning phase."""
    for _ in range(20):
        acting = api.to_act(table.uid, next(iter(table.tokens.values())))
        options = api.options(table, acting[0])
        if options["pending"]["kind"] == "plan":
            return
        status, body = api.submit(table, acting[0], options["seq"], options["options"][0])
        assert status == 200, body
    raise AssertionError("no planning phase after 20 bivouac answers")


def test_a_great_race_starts_in_the_bivouac(api: Api) -> None:
    table = great_race(api, 3)
    state = api.state(table.uid, table.tokens[0])
    assert state["game"]["ruleset"] == "great-race"
    view = state["view"]
    assert view["game"] == "great-race" and view["phase"] == "bivouac"
    assert sorted(view["crews"]) == sorted(seat["titans"][0] for seat in state["game"]["seats"])
    assert len(view["market"]) == 4
    assert isinstance(view["bag"], int) and isinstance(view["deck"], int)


def test_unknown_start_city_and_too_many_players_are_refused(api: Api) -> None:
    response = api.client.post("/api/games", json={
        "game": "great-race", "circuits": ["kaldheira"],
        "seats": [{"email": "a@example.com"}, {"email": "b@example.com"}]})
    assert response.status_code == 400
    assert "alger" in json.dumps(response.get_json())
    response = api.client.post("/api/games", json={
        "game": "great-race", "seats": [{"email": f"p{i}@example.com"} for i in range(5)]})
    assert response.status_code == 400
    assert "2 to 4" in json.dumps(response.get_json())


def test_plans_are_sealed_until_the_last_then_revealed_as_one_entry(api: Api) -> None:
    table = great_race(api, 3)
    play_until_planning(api, table)
    acting = plan_seats(api, table)
    assert sorted(acting) == [0, 1, 2]
    seq = api.options(table, 0)["seq"]
    rows_before = api.move_count(table.uid)
    status, body = api.submit(table, 0, seq, "plan P2 M2 S1")
    assert status == 200 and body["applied"] and body["sealed"], body
    assert api.move_count(table.uid) == rows_before  # nothing in the log yet
    # the sealing seat sees its own plan; the others and spectators do not
    mine = api.state(table.uid, table.tokens[0])
    own_crew = mine["game"]["seats"][0]["titans"][0]
    assert mine.get("sealed", "").endswith("P2 M2 S1")
    for position in (1, 2):
        other = api.state(table.uid, table.tokens[position])
        assert "sealed" not in other
        assert other["view"]["crews"][own_crew]["assistants"] is None
        assert "P2 M2 S1" not in json.dumps({k: v for k, v in other.items() if k != "view"})
        assert "P2 M2 S1" not in json.dumps(other["view"]["crews"])
    assert "P2 M2 S1" not in json.dumps(api.state(table.uid))
    assert "P2 M2 S1" not in json.dumps(api.log(table.uid))
    assert sorted(api.to_act(table.uid, table.tokens[1])) == [1, 2]
    # everyone sees that the crew has planned (not what), and who still owes a plan
    for token in (table.tokens[0], table.tokens[1], None):
        view = api.state(table.uid, token)["view"]
        assert view["crews"][own_crew]["planned"] is True
        assert own_crew not in view["pending"]["crews"]
        assert len(view["pending"]["crews"]) == 2
    assert api.state(table.uid, table.tokens[0])["view"]["pending"]["options"] == []
    # the player who sealed sees their own plan as their crew's assistants
    assert mine_view(api, table, own_crew) == {"P": 2, "M": 2, "S": 1, "F": 0}
    # a plan once sealed is final; the same plan again is a harmless retry
    status, body = api.submit(table, 0, seq, "plan P1 M4")
    assert status == 403, body
    status, body = api.submit(table, 0, seq, "plan M2 P2 S1")
    assert status == 200 and body.get("already_applied"), body
    # a seat cannot plan for another crew
    other_crew = mine["game"]["seats"][2]["titans"][0]
    status, body = api.submit(table, 1, seq, f"plan {other_crew} F5")
    assert status in (403, 409, 422), body
    api.submit(table, 1, seq, "plan F5")
    assert api.move_count(table.uid) == rows_before
    status, body = api.submit(table, 2, seq, "plan M3 S2")
    assert status == 200 and body["applied"], body
    log = api.log(table.uid)
    assert api.move_count(table.uid) == rows_before + 1
    reveal = log[-1]["input"].split("; ")
    assert len(reveal) == 3 and all(part.startswith("plan ") for part in reveal)
    view = api.state(table.uid)["view"]
    assert view["phase"] == "convoy"
    assert view["crews"][own_crew]["assistants"] == {"P": 2, "M": 2, "S": 1, "F": 0}


def test_hands_and_hidden_cards_reach_only_their_owner(api: Api) -> None:
    table = great_race(api, 3)
    play_until_planning(api, table)
    full = {p: api.state(table.uid, t) for p, t in table.tokens.items()}
    for position, state in full.items():
        crew = state["game"]["seats"][position]["titans"][0]
        for name, entry in state["view"]["crews"].items():
            if name == crew:
                assert isinstance(entry["hand"], list) and len(entry["hand"]) in (1, 2)
            else:
                assert isinstance(entry["hand"], int)
    spectator = api.state(table.uid)["view"]
    assert all(isinstance(c["hand"], int) for c in spectator["crews"].values())
    # drawn cards are hidden in the log's outcomes (a deal to the market is public)
    for move in api.log(table.uid):
        for outcomes in move["outcomes"]:
            for outcome in outcomes:
                word, _, rest = outcome.partition(" ")
                if word == "card":
                    assert rest == "", outcome


def test_computer_crews_race_to_a_winner(api: Api) -> None:
    created = api.create([{"email": "ann@example.com"}, {"bot": True}, {"bot": True}],
                         game="great-race", seed=11)
    table = api.accept_all(created)
    api.start(table)
    # the human seat plays its first option whenever it must act, computers do the rest
    for _ in range(3000):
        state = api.state(table.uid, table.tokens[0])
        if state["game"]["status"] == "finished":
            break
        options = api.options(table, 0)
        assert options["yours"], state["game"]
        status, body = api.submit(table, 0, options["seq"], options["options"][0])
        assert status == 200, body
    final = api.state(table.uid)
    assert final["game"]["status"] == "finished"
    assert final["game"]["winner"]
    assert final["view"]["phase"] == "over" and final["view"]["winner"]
    response = api.client.get("/api/admin/verify", headers=bearer(ADMIN_TOKEN))
    assert response.status_code == 200 and response.get_json() == {"ok": True, "games": {}}
