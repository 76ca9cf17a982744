"""Results that close the evening (issue 38): every seat's place and score, as each game's rules
give them (:meth:`app.games.base.Ruleset.placings`), and "you placed 2nd" for the reader, the
same numbers on the game page, in the game-over mail, the command line and the API."""

from __future__ import annotations

import re
from typing import Any

import sqlalchemy as sa
from rich.console import Console, Group

from app.core.models import OutboxMail
from app.games import ruleset
from app.games.greatrace.engine.game import GreatRace
from app.games.greatrace.engine.state import OVER as RACE_OVER
from app.games.placings import (
    Placing,
    ordinal,
    place_words,
    result_rows,
    shared_places,
    winners_first,
    your_place,
)
from app.games.titanrace.engine import new_game
from app.games.titanrace.engine.state import OVER
from app.games.ui import game_ui
from app.mail.render import MailRenderer
from cli.player_state import results_view
from cli.speech import speak
from tests.apifixtures import Api, Table
from tests.test_rematch import finished

pytest_plugins = ["tests.apifixtures"]


def test_places_shared_by_equal_keys() -> None:
    assert shared_places({0: 5, 1: 2, 2: 5, 3: 9}) == {0: 2, 1: 1, 2: 2, 3: 4}
    assert shared_places({0: 0, 1: 3, 2: 3, 3: 1}) == {0: 1, 1: 3, 2: 3, 3: 2}


def test_ordinals_in_english_and_polish() -> None:
    assert [ordinal(n, "en") for n in (1, 2, 3, 4, 11, 12, 13, 21, 22, 23, 101, 111)] == [
        "1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "22nd", "23rd", "101st",
        "111th"]
    assert [ordinal(n, "pl") for n in (1, 2, 12, 22)] == ["1.", "2.", "12.", "22."]


def test_the_kits_default_names_the_winners_first() -> None:
    seats = {0: ["a"], 1: ["b", "c"], 2: ["d"]}
    assert winners_first(None, seats) == []
    assert winners_first(["c"], seats) == [Placing(1, 1), Placing(0, 2), Placing(2, 2)]


def titan_race(variant: str = "standard", titans: tuple[str, ...] = (
        "grinder", "rassik", "craken", "slaugg"), **more: Any) -> Any:
    race = new_game(list(titans), variant=variant, **more)
    race.state.phase = OVER
    return race


def test_titan_race_ranks_by_rows_to_the_finish_and_shares_ties() -> None:
    race = titan_race()
    st = race.state
    at = {"grinder": (1, 30), "rassik": (2, 36), "craken": (3, 30), "slaugg": (0, 12)}
    for name, pos in at.items():
        st.titans[name].pos = pos
    st.titans["craken"].life, st.titans["craken"].ko = 0, True
    st.winner, st.winners = "rassik", ["rassik"]
    seats = {t.seat: [t.name] for t in st.titans.values()}
    found = ruleset("titan-race").placings(race, seats)
    assert [(p.position, p.place) for p in found] == [(1, 1), (0, 2), (2, 2), (3, 4)]
    parts = {p.position: dict(p.parts) for p in found}
    assert parts[1] == {"lap": 3, "to_go": 0, "life": st.titans["rassik"].life}
    assert parts[0] == {"lap": 3, "to_go": 6, "life": st.titans["grinder"].life}
    assert parts[2]["life"] == 0  # KO
    assert parts[3] == {"lap": 2, "to_go": 24, "life": st.titans["slaugg"].life}


def test_titan_race_two_players_are_ranked_by_their_leading_titan() -> None:
    race = titan_race("two-player")
    st = race.state
    for name, pos in {"grinder": (0, 36), "rassik": (0, 20), "craken": (1, 3),
                      "slaugg": (2, 31)}.items():
        st.titans[name].pos = pos
    st.winner, st.winners = "grinder", ["grinder", "craken"]
    found = ruleset("titan-race").placings(race, {0: ["grinder", "craken"],
                                                  1: ["rassik", "slaugg"]})
    assert [(p.position, p.place, dict(p.parts)["to_go"]) for p in found] == [
        (0, 1, 0), (1, 2, 5)]


def test_the_great_race_ranks_finishers_by_prestige_then_those_who_did_not_finish() -> None:
    crews = ["french", "belgian", "italian", "english"]
    game = GreatRace.new(crews)
    st = game.state
    for crew, arrived, engine in (("english", 1, 1), ("italian", 2, 4), ("belgian", 3, 3)):
        st.crews[crew].finished = arrived
        st.crews[crew].engine, st.crews[crew].chassis, st.crews[crew].money = engine, 0, 20
    st.finishers = ["english", "italian", "belgian"]
    from app.games.greatrace.engine.options import prestige

    st.scores = {name: prestige(st.crews[name]) for name in st.finishers}
    st.phase = RACE_OVER
    rules = ruleset("great-race")
    seats = {st.crews[c].seat: [c] for c in crews}
    found = rules.placings(game, seats)
    # english 5 + 1 = 6; italian 3 + 4 = 7; belgian 1 + 3 = 4: a tie would go to the earlier
    assert [(p.position, p.place) for p in found] == [(2, 1), (3, 2), (1, 3), (0, None)]
    assert dict(found[0].parts) == {"prestige": 7, "arrived": 2, "place": 3, "engine": 4,
                                    "chassis": 0, "money": 0}
    assert found[3].note == "not_finished" and found[3].parts == ()
    assert rules.winners(game) == ["italian"]
    st.crews["english"].engine = 2  # 7 as well: the earlier finisher wins the tie
    st.scores = {name: prestige(st.crews[name]) for name in st.finishers}
    assert [p.place for p in rules.placings(game, seats)][:2] == [1, 2]
    assert rules.placings(game, seats)[0].position == 3
    assert rules.winners(game) == ["english"]


# ---------------------------------------------------------------------- every channel

def api_result(api: Api, table: Table, position: int | None) -> dict[str, Any]:
    headers = table.seat(position) if position is not None else {}
    response = api.client.get(f"/api/games/{table.uid}", headers=headers)
    assert response.status_code == 200, response.get_json()
    result: dict[str, Any] = response.get_json()["result"]
    return result


def test_the_api_gives_every_seats_place_and_the_callers_own(api: Api) -> None:
    table = finished(api)
    result = api_result(api, table, 1)
    places = result["places"]
    assert sorted(p["position"] for p in places) == [0, 1, 2]
    assert [p["place"] for p in places] == sorted(p["place"] for p in places)
    assert places[0]["place"] == 1
    for entry in places:
        assert {part["id"] for part in entry["parts"]} == {"lap", "to_go", "life"}
        assert entry["pieces"] and isinstance(entry["name"], str)
    assert result["you"] == next(p for p in places if p["position"] == 1)
    assert api_result(api, table, None)["you"] is None
    running = api.new_started(3)
    assert "result" not in api.state(running.uid)


def words_of(api: Api, table: Table, lang: str) -> dict[int, tuple[str, str]]:
    """Each seat's place and score in words, from the API's result (what every channel shows)."""
    ui = game_ui("titan-race")
    places = api_result(api, table, 1)["places"]
    return {entry["position"]: (
        place_words(entry, ui, lang),
        ", ".join(ui.score_part(part["id"], part["value"], lang) for part in entry["parts"]))
        for entry in places}


def game_over_mail(api: Api, recipient: str) -> Any:
    renderer = MailRenderer(api.service)
    with api.service.session() as s:
        rows = s.exec(sa.select(OutboxMail).where(OutboxMail.kind == "game_over",
                                                  OutboxMail.recipient == recipient)
                      ).scalars().all()
        assert rows
        return renderer.render(rows[0], always=True, session=s)


def test_the_game_over_mail_gives_every_place_and_the_readers_own(api: Api) -> None:
    table = finished(api)
    result = api_result(api, table, 1)
    bobs = next(p for p in result["places"] if p["position"] == 1)
    mail = game_over_mail(api, "bob@example.com")
    english = words_of(api, table, "en")
    assert f"You placed {english[1][0]}." in mail.text
    assert f'<strong>You placed {english[1][0]}.</strong>' in mail.html
    for place, score in english.values():
        assert f"{place} · " in mail.text and score in mail.text
        assert f">{place}</td>" in mail.html and f">{score}</td>" in mail.html
    assert "RESULTS" in mail.text and bobs["place"] >= 1
    anns = game_over_mail(api, "ann@example.com")  # a Polish seat: no gendered verb
    polish = words_of(api, table, "pl")
    assert f"Twoje miejsce: {polish[0][0]}\n" in anns.text  # ("2.", not "2..")
    assert polish[0][0].endswith(".") and "WYNIKI" in anns.text
    assert "okrążenie 3 z 3, 0 rzędów do mety" in anns.text and "Zająłeś" not in anns.text
    for place, score in polish.values():
        assert score in anns.text and f">{place}</td>" in anns.html


def test_titanpost_show_gives_the_same_places(api: Api, monkeypatch: Any) -> None:
    table = finished(api)
    state = api.client.get(f"/api/games/{table.uid}", headers=table.seat(1)).get_json()
    english = words_of(api, table, "en")
    console = Console(record=True, width=160)
    speak("en")
    console.print(Group(*results_view(state)))
    shown = console.export_text()
    assert f"You placed {english[1][0]}." in shown
    for place, score in english.values():
        assert re.search(rf"^ *{re.escape(place)} .*{re.escape(score)}", shown, re.MULTILINE), \
            shown
    speak("pl")
    try:
        console.print(Group(*results_view(state)))
    finally:
        speak(None)
    assert "Twoje miejsce: " in console.export_text()
    assert results_view(api.state(api.new_started(3).uid)) == []


def test_your_place_in_english_and_polish() -> None:
    titans, crews = game_ui("titan-race"), game_ui("great-race")
    places = [{"position": 0, "place": 1}, {"position": 1, "place": 2},
              {"position": 2, "place": None, "note": "not_finished"}]
    assert your_place(places, 1, titans, "en") == "You placed 2nd."
    assert your_place(places, 1, titans, "pl") == "Twoje miejsce: 2."
    assert your_place(places, None, titans, "en") is None
    assert your_place(places, 2, crews, "en") == "You have no place: the crew did not finish."
    assert your_place(places, 2, crews, "pl") == (
        "Twoje miejsce: brak (ekipa nie dojechała do mety).")
    assert crews.score_part("arrived", 2, "en") == "2nd at the finish"
    assert crews.score_part("arrived", 2, "pl") == "2. na mecie"
    assert titans.score_part("to_go", 1, "en") == "1 row to the finish"
    assert titans.score_part("to_go", 5, "pl") == "5 rzędów do mety"
    assert titans.score_part("life", 0, "en") == "KO"


def test_a_finished_great_race_lists_its_finishers_then_the_crews_that_did_not_finish(
        api: Api) -> None:
    table = api.accept_all(api.create([{"bot": True}, {"bot": True}, {"bot": True}],
                                      game="great-race", seed=3))
    api.start(table)
    state = api.state(table.uid)
    assert state["game"]["status"] == "finished"
    places = state["result"]["places"]
    view = state["view"]
    finished_crews = [c for c, info in view["crews"].items() if info.get("finished")]
    assert [p["place"] for p in places] == [
        *range(1, len(finished_crews) + 1), *[None] * (3 - len(finished_crews))]
    first = places[0]
    assert first["pieces"] == view["winners"]
    parts = {part["id"]: part["value"] for part in first["parts"]}
    score = view["scores"][first["pieces"][0]]
    assert parts["prestige"] == score["total"] == sum(parts[k] for k in (
        "place", "engine", "chassis", "money"))
    assert all(p["note"] == "not_finished" and p["parts"] == [] for p in places
               if p["place"] is None)
    ui = game_ui("great-race")
    rows = result_rows(places, ui, {p["position"]: f"P{p['position']}" for p in places},
                       {p["position"]: p["pieces"] for p in places}, None, "en")
    assert rows[0]["ordinal"] == "1st" and "prestige" in rows[0]["score"]
    assert rows[-1]["ordinal"] == "the crew did not finish" or len(finished_crews) == 3


def test_the_api_reference_says_what_result_holds(api: Api) -> None:
    document = api.client.get("/api/openapi.json").get_json()
    description = document["paths"]["/api/games/{uid}"]["get"]["description"]
    assert "result" in description and "place" in description and "parts" in description
