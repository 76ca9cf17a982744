"""The Great Race rules, one position at a time (docs/great-race-rules.md sections 3-9)."""

from __future__ import annotations

from typing import Any

import pytest

from app.games.errors import IllegalInputError, InputError, InvalidInputError
from app.games.greatrace.engine import GREAT_RACE_VERSION, GreatRace
from app.games.greatrace.engine.scenario import load_scenario

WAITING = {"crew": "belgian", "assistants": {"F": 1}}
"""A second crew with one assistant left, so the convoy goes on after the first crew's action."""


def game(inputs: tuple[str, ...] = (), **spec: Any) -> GreatRace:
    data: dict[str, Any] = {
        "game": "great-race",
        "phase": "convoy",
        "crews": [{"crew": "french", "assistants": {"M": 1}}, WAITING],
        "deck": [],
        **spec,
    }
    race, _ = load_scenario(data)
    for text in inputs:
        race.apply(text)
    return race


def french(race: GreatRace) -> dict[str, Any]:
    crew: dict[str, Any] = race.view()["crews"]["french"]
    return crew


def kind(race: GreatRace) -> str | None:
    pending = race.pending()
    return None if pending is None else str(pending["kind"])


# ---------------------------------------------------------------------- driving


def test_known_tiles_cost_petrol_and_damage_split_by_the_driver() -> None:
    race = game(("drive", "go E2", "go E3", "damage C1"), tiles={"E2": "p1", "E3": "p2d1"})
    crew = french(race)
    assert (crew["space"], crew["petrol"], crew["engine"], crew["chassis"]) == ("E3", 7, 5, 4)
    assert crew["progress"] == 2
    assert race.pending()["kind"] == "drive"  # type: ignore[index]
    assert race.pending()["entered"] == 2  # type: ignore[index]


def test_a_risk_zone_adds_one_petrol_to_a_tile() -> None:
    race = game(("drive", "go F2", "go G3"), tiles={"F2": "p1", "G3": "p1"})
    assert french(race)["petrol"] == 10 - 1 - 2


def test_a_tile_whose_requirements_cannot_be_met_is_not_an_option() -> None:
    race = game(("drive",), tiles={"E2": "p3", "F2": "p1d2"},
                crews=[{"crew": "french", "assistants": {"M": 1}, "petrol": 2, "engine": 1,
                        "chassis": 0}, WAITING])
    assert "go E2" not in race.options() and "go F2" not in race.options()
    assert "go E1" in race.options()


def test_an_unpayable_unfamiliar_tile_stays_and_the_vehicle_does_not_move() -> None:
    race = game(("drive", "go E2"), bag=["p3"],
                crews=[{"crew": "french", "assistants": {"M": 1}, "petrol": 2}, WAITING])
    crew = french(race)
    assert crew["space"] == "F1" and crew["petrol"] == 2
    assert race.view()["tiles"] == {"E2": "p3"}
    assert race.pending()["crew"] == "belgian"  # type: ignore[index]
    assert race.outcomes[-1] == ["tile p3"]


def test_a_payable_unfamiliar_tile_goes_under_the_vehicle_and_the_drive_goes_on() -> None:
    race = game(("drive", "go E2"), bag=["p1", "p2"])
    assert french(race)["space"] == "E2" and race.view()["tiles"] == {"E2": "p1"}
    assert kind(race) == "drive"


def test_with_an_empty_bag_a_blank_space_is_open_track() -> None:
    race = game(("drive", "go E2"), bag=[])
    assert french(race)["space"] == "E2" and french(race)["petrol"] == 8
    assert race.view()["tiles"] == {}


def test_entering_a_city_costs_one_petrol_draws_its_cards_and_ends_the_drive() -> None:
    race = game(("drive", "go E2", "go F3"), tiles={"E2": "p1"}, deck=["guide", "militia"])
    crew = french(race)
    assert (crew["space"], crew["petrol"], crew["hand"]) == ("F3", 8, ["guide"])
    assert race.pending()["crew"] == "belgian"  # type: ignore[index]


def test_stop_ends_the_drive_unless_a_guide_was_played() -> None:
    tiles = {"E2": "p1s", "E3": "p1"}
    stopped = game(("drive", "go E2"), tiles=tiles)
    assert french(stopped)["space"] == "E2" and kind(stopped) == "turn"
    crews = [{"crew": "french", "assistants": {"M": 1}, "hand": ["guide"]}, WAITING]
    guided = game(("drive", "play guide", "go E2", "go E3"), tiles=tiles, crews=crews)
    assert french(guided)["space"] == "E3"


def test_engine_at_zero_ends_the_drive() -> None:
    crews = [{"crew": "french", "assistants": {"M": 1}, "engine": 2, "chassis": 0}, WAITING]
    race = game(("drive", "go E2"), tiles={"E2": "p1d2", "E3": "p1"}, crews=crews)
    assert french(race)["engine"] == 0 and race.pending()["crew"] == "belgian"  # type: ignore[index]


def test_a_drive_enters_at_most_the_engine_level_it_began_with() -> None:
    crews = [{"crew": "french", "assistants": {"M": 1}, "engine": 1}, WAITING]
    race = game(("drive", "go E2"), tiles={"E2": "p1", "E3": "p1"}, crews=crews)
    assert race.pending()["crew"] == "belgian"  # type: ignore[index]


def test_a_sea_line_with_a_transport_card_and_the_english_leader() -> None:
    crews = [{"crew": "english", "assistants": {"M": 1}, "hand": ["transport"], "money": 60},
             WAITING]
    race = game(("drive",), crews=crews, leaders=True, deck=["guide", "militia", "driver"])
    assert "go A4" not in race.options()  # 100F to Dakar, 60F in hand
    race.apply("play transport")
    assert "go A4" in race.options()
    race.apply("leader; go A4")
    crew = race.view()["crews"]["english"]
    assert (crew["space"], crew["money"], crew["petrol"], crew["leader_used"]) == (
        "A4", 60, 9, True)
    assert crew["hand"] == ["guide", "militia"]


def test_an_air_line_costs_its_fare_and_one_petrol() -> None:
    crews = [{"crew": "french", "assistants": {"M": 1}, "money": 130}, WAITING]
    race = game(("drive", "go C5"), crews=crews, deck=["militia"])
    assert (french(race)["space"], french(race)["money"], french(race)["petrol"]) == ("C5", 30, 9)


# ---------------------------------------------------------------------- dangers


def test_a_danger_tile_is_avoided_by_a_guard_or_costs_two_damage() -> None:
    crews = [{"crew": "french", "assistants": {"M": 1, "S": 1}}, WAITING]
    race = game(("drive", "go E2"), tiles={"E2": "p1x"}, crews=crews)
    assert race.pending()["kind"] == "avoid"  # type: ignore[index]
    assert race.options() == ["guard", "take"]
    guarded = race.copy()
    guarded.apply("guard")
    assert french(guarded)["assistants"]["S"] == 0 and french(guarded)["engine"] == 5
    race.apply("take")
    assert race.options() == ["damage E2", "damage E1 C1", "damage C2"]
    race.apply("damage C2")
    assert french(race)["chassis"] == 3


def test_a_crew_that_cannot_avoid_is_not_asked() -> None:
    race = game(("drive", "go E2"), tiles={"E2": "p1x"},
                crews=[{"crew": "french", "assistants": {"M": 1}, "chassis": 0}, WAITING])
    assert french(race)["engine"] == 3  # the only split, applied without asking


def test_the_saboteur_target_may_avoid_else_the_saboteur_splits() -> None:
    crews = [{"crew": "french", "assistants": {"M": 1}, "hand": ["saboteur"]},
             {"crew": "belgian", "assistants": {"F": 1}, "hand": ["militia"]}]
    race = game(("play saboteur belgian",), crews=crews)
    pending = race.pending()
    assert pending is not None and (pending["kind"], pending["crew"]) == ("avoid", "belgian")
    assert race.to_act() == [1]
    race.apply("take")
    assert race.pending()["crew"] == "french"  # type: ignore[index]
    race.apply("damage E2")
    assert race.view()["crews"]["belgian"]["engine"] == 3
    assert kind(race) == "turn" and race.pending()["begun"] is True  # type: ignore[index]


def test_a_trail_hunter_is_cancelled_by_the_first_other_crew_that_avoids() -> None:
    crews = [{"crew": "french", "assistants": {"M": 1}, "hand": ["trail-hunter"]},
             {"crew": "belgian", "assistants": {"F": 1}},
             {"crew": "italian", "assistants": {"F": 1}, "hand": ["militia"]}]
    race = game(("play trail-hunter E3 E2",), crews=crews, tiles={"E2": "p1", "E3": "p2"})
    assert race.pending()["crew"] == "italian"  # type: ignore[index]
    cancelled = race.copy()
    cancelled.apply("play militia")
    assert cancelled.view()["tiles"] == {"E2": "p1", "E3": "p2"}
    assert cancelled.view()["discard"][-2:] == ["trail-hunter", "militia"]
    race.apply("take")
    assert race.view()["tiles"] == {} and race.view()["removed"] == ["p1", "p2"]


def test_the_con_artist_swaps_two_tiles_without_vehicles() -> None:
    crews = [{"crew": "french", "space": "E2", "assistants": {"M": 1}, "hand": ["con-artist"]},
             WAITING]
    race = game(crews=crews, tiles={"E2": "p1", "E3": "p2", "G3": "p2x"})
    assert "play con-artist E2 E3" not in race.options()
    race.apply("play con-artist g3 e3")
    assert race.view()["tiles"] == {"E2": "p1", "E3": "p2x", "G3": "p2"}


# ---------------------------------------------------------------------- cards and hands


def test_the_hand_limit_offers_a_jerrycan_instead_of_a_discard() -> None:
    crews = [{"crew": "french", "assistants": {"P": 1}, "chassis": 1, "petrol": 5,
              "hand": ["jerrycan"]}, WAITING]
    race = game(("draw",), crews=crews, deck=["militia"])
    assert race.options() == ["discard jerrycan", "discard militia", "play jerrycan"]
    race.apply("play jerrycan")
    assert french(race)["hand"] == ["militia"] and french(race)["petrol"] == 6


def test_chassis_lost_shrinks_the_hand_at_once() -> None:
    race = game(
        ("play saboteur french",),
        crews=[{"crew": "belgian", "assistants": {"F": 1}, "hand": ["saboteur"]},
               {"crew": "french", "assistants": {"M": 1}, "hand": ["guide", "militia"],
                "chassis": 2, "engine": 0}],
    )
    assert race.pending()["kind"] == "avoid"  # type: ignore[index]
    race.apply("take")
    assert race.pending()["kind"] == "discard"  # type: ignore[index]
    assert race.pending()["crew"] == "french"  # type: ignore[index]
    race.apply("discard guide")
    assert race.options("french") == ["discard militia"]  # asked: its one answer is hidden
    race.apply("discard militia")
    assert french(race)["hand"] == [] and french(race)["chassis"] == 0


def test_the_tracker_keeps_two_and_discards_the_third() -> None:
    crews = [{"crew": "french", "assistants": {"M": 1}, "hand": ["tracker"]}, WAITING]
    race = game(("play tracker",), crews=crews, deck=["guide", "militia", "driver"])
    assert race.view(seat=0)["pending"]["tracker"] == ["guide", "militia", "driver"]
    assert "tracker" not in race.view(seat=1)["pending"]
    assert race.options() == ["keep guide militia", "keep driver guide", "keep driver militia"]
    race.apply("keep militia driver")
    assert french(race)["hand"] == ["driver", "militia"]
    assert race.view()["discard"][-2:] == ["tracker", "guide"]


def test_a_repairman_uses_cards_and_buys_parts() -> None:
    crews = [{"crew": "french", "assistants": {"M": 1}, "engine": 1, "chassis": 2, "money": 50,
              "hand": ["spare-parts", "toolbox"]}, WAITING]
    race = game(("repair", "play spare-parts E", "play toolbox E1 C2", "buy E"), crews=crews)
    crew = french(race)
    assert (crew["engine"], crew["chassis"], crew["money"]) == (4, 4, 30)
    assert race.options() == ["buy E", "buy C", "done"]
    race.apply("done")
    assert race.pending()["crew"] == "belgian"  # type: ignore[index]


def test_petrol_is_bought_first_in_a_sequence_at_the_city_or_wild_price() -> None:
    crews = [{"crew": "french", "assistants": {"M": 1}, "petrol": 6, "money": 30,
              "hand": ["financial"]}, WAITING]
    race = game(crews=crews)
    assert [o for o in race.options() if o.startswith("buy")] == ["buy 1", "buy 2", "buy 3"]
    race.apply("play financial")
    assert not [o for o in race.options() if o.startswith("buy")]
    wild = game(crews=[{**crews[0], "space": "E2"}, WAITING], tiles={"E2": "p1"})
    assert [o for o in wild.options() if o.startswith("buy")] == ["buy 1"]


# ---------------------------------------------------------------------- tiles


def test_tiles_are_placed_next_to_the_vehicles_network_only() -> None:
    crews = [{"crew": "french", "assistants": {"P": 1}}, WAITING]
    race = game(("scout",), crews=crews, bag=["p1", "p2"], tiles={"E2": "p1", "J3": "p1"})
    spaces = {o.split()[2] for o in race.options()}
    assert "D2" in spaces and "E3" in spaces and "J4" not in spaces and "E2" not in spaces
    with pytest.raises(IllegalInputError, match="joined to your vehicle"):
        race.apply("place p1 J4")
    race.apply("place p2 E3")
    assert "D4" in {o.split()[2] for o in race.options()}  # the first tile extends the network
    race.apply("place p1 D4")
    assert race.view()["tiles"]["D4"] == "p1"


def test_the_topographer_places_two_of_four_and_removes_the_rest() -> None:
    crews = [{"crew": "french", "assistants": {"M": 1}, "hand": ["topographer"]}, WAITING]
    race = game(("play topographer", "place p3 E2", "place p2 F2"), crews=crews, leaders=True,
                bag=["p1", "p2", "p3", "p1x"])
    assert race.view()["removed"] == ["p1", "p1x"] and race.view()["drawn"] == []


def test_a_security_guard_discards_a_free_tile_next_to_the_vehicle() -> None:
    crews = [{"crew": "french", "assistants": {"S": 1}}, {"crew": "belgian", "space": "F2",
                                                         "assistants": {"F": 1}}]
    race = game(crews=crews, tiles={"E2": "p1", "F2": "p2"})
    assert [o for o in race.options() if o.startswith("guard")] == ["guard E2"]
    race.apply("guard E2")
    assert race.view()["removed"] == ["p1"]


# ---------------------------------------------------------------------- leaders


BELGIAN_DRIVES_FROM = {"E2": "p1", "E14": "p1"}
"""Tiles under the Belgian vehicle: E2 is next to Alger (F1) and Tamanrasset (F3), E14 to Le
Cap (F15)."""


def belgian_drive(city: str, space: str = "E2") -> GreatRace:
    """A Leader-module race whose Belgian crew drives from ``space`` into ``city``, the deck
    holding guide, militia, driver from the top."""
    crews = [{"crew": "belgian", "space": space, "assistants": {"M": 1}},
             {"crew": "french", "assistants": {"F": 1}}]
    return game(("drive", f"go {city}"), crews=crews, leaders=True, tiles=BELGIAN_DRIVES_FROM,
                deck=["guide", "militia", "driver"])


def first_version(race: GreatRace) -> GreatRace:
    """``race`` as a game set up before the rules were versioned: its state without
    ``version``, as such games' states are stored."""
    data = race.state.to_json()
    del data["version"]
    return GreatRace.from_state(data)


def test_the_belgian_leader_draws_at_least_two_cards_in_a_city() -> None:
    race = belgian_drive("F3")  # Tamanrasset gives 1 card
    assert race.view()["crews"]["belgian"]["hand"] == ["guide", "militia"]


def test_the_belgian_leader_draws_two_cards_entering_the_start_city() -> None:
    race = belgian_drive("F1")  # Alger, the start: no card for other crews
    belgian = race.view()["crews"]["belgian"]
    assert (belgian["city"], belgian["hand"]) == ("alger", ["guide", "militia"])
    assert race.view()["deck"] == 1


def test_the_belgian_leader_draws_two_cards_at_the_finish_and_discards_them_at_once() -> None:
    race = belgian_drive("F15", "E14")
    view = race.view()
    assert view["crews"]["belgian"]["finished"] == 1 and view["crews"]["belgian"]["hand"] == []
    assert view["deck"] == 1 and view["discard"][-2:] == ["guide", "militia"]


def test_other_crews_draw_no_card_in_the_purple_cities() -> None:
    for city, space in (("F1", "E2"), ("F15", "E14")):
        crews = [{"crew": "italian", "space": space, "assistants": {"M": 1}},
                 {"crew": "french", "assistants": {"F": 1}}]
        race = game(("drive", f"go {city}"), crews=crews, leaders=True,
                    tiles=BELGIAN_DRIVES_FROM, deck=["guide", "militia", "driver"])
        assert race.view()["deck"] == 3 and race.view()["crews"]["italian"]["hand"] == []


def test_a_first_version_game_keeps_the_belgian_leader_out_of_the_purple_cities() -> None:
    for city, space, cards in (("F1", "E2", 0), ("F15", "E14", 0), ("F3", "E2", 2)):
        crews = [{"crew": "belgian", "space": space, "assistants": {"M": 1}},
                 {"crew": "french", "assistants": {"F": 1}}]
        race = first_version(game(crews=crews, leaders=True, tiles=BELGIAN_DRIVES_FROM,
                                  deck=["guide", "militia", "driver"]))
        race.apply(f"drive; go {city}")
        assert race.view()["deck"] == 3 - cards, city
        assert "version" not in race.state.to_json()


def test_the_french_and_italian_leaders_once_per_turn() -> None:
    crews = [{"crew": "italian", "assistants": {"M": 1}, "engine": 3, "money": 20}, WAITING]
    race = game(("leader", "buy E"), crews=crews, leaders=True)
    assert race.view()["crews"]["italian"]["engine"] == 4
    assert "leader" not in race.options()
    crews = [{"crew": "french", "assistants": {"M": 1}}, WAITING]
    race = game(("leader", "place p1 E2", "place p2 F2", "place p3 E3"), crews=crews,
                leaders=True, bag=["p1", "p2", "p3"])
    assert race.view()["tiles"] == {"E2": "p1", "F2": "p2", "E3": "p3"}
    assert "leader" not in race.options()


# ---------------------------------------------------------------------- turn structure


def test_bivouac_last_player_takes_first_and_gets_the_leftover() -> None:
    race = GreatRace.new(["french", "belgian", "italian"], seed=3)
    market = race.view()["market"]
    assert len(market) == 4 and race.pending()["crew"] == "italian"  # type: ignore[index]
    race.apply(f"take {market[0]}")
    assert race.pending()["crew"] == "belgian"  # type: ignore[index]
    rest = race.view()["market"]
    race.apply(f"take {rest[0]}")
    race.apply(f"take {race.view()['market'][0]}")
    crews = race.view()["crews"]
    assert len(crews["italian"]["hand"]) == 2 and len(crews["french"]["hand"]) == 1
    assert race.pending()["kind"] == "plan" and race.to_act() == [0, 1, 2]  # type: ignore[index]


def test_plans_are_secret_until_the_last_one_reveals_them() -> None:
    race = game(phase="planning", crews=[{"crew": "french"}, {"crew": "belgian"}])
    assert len(race.options()) == 112 and len(race.options("french")) == 56
    race.apply("plan french M2 P1 F2")
    assert race.view(seat=1)["crews"]["french"]["assistants"] is None
    assert race.view(seat=0)["crews"]["french"]["assistants"] == {"P": 1, "M": 2, "S": 0, "F": 2}
    assert race.to_act() == [1]
    race.apply("plan belgian S5")
    view = race.view(seat=1)
    assert view["phase"] == "convoy" and view["crews"]["french"]["assistants"]["M"] == 2


def test_pass_keeps_security_assistants_and_a_passed_crew_still_guards() -> None:
    crews = [{"crew": "french", "assistants": {"M": 1, "S": 1, "F": 1}},
             {"crew": "belgian", "assistants": {"M": 1}}]
    race = game(("pass", "drive", "go E2"), crews=crews, tiles={"E2": "p1x"})
    assert french(race)["assistants"] == {"P": 0, "M": 0, "S": 1, "F": 0}
    assert race.pending()["crew"] == "belgian"  # type: ignore[index]
    crews = [{"crew": "belgian", "assistants": {"M": 1}},
             {"crew": "french", "assistants": {"S": 1}, "passed": True, "hand": ["militia"]}]
    race = game(crews=crews, tiles={"E2": "p1"})
    race.apply("drive")
    assert race.pending()["crew"] == "belgian"  # type: ignore[index]


def test_maintenance_orders_by_progress_and_stack_and_pays_the_bonus() -> None:
    crews = [{"crew": "french", "space": "E2", "assistants": {"F": 1}, "money": 0},
             {"crew": "belgian", "space": "E3", "money": 0},
             {"crew": "italian", "space": "F2", "money": 0}]
    race = game(("fund",), crews=crews, tiles={"E2": "p1", "E3": "p1", "F2": "p1"},
                deck=["militia"] * 3 + ["driver"])
    view = race.view()
    assert view["order"] == ["belgian", "french", "italian"] and view["turn"] == 2
    assert [view["crews"][c]["money"] for c in ("belgian", "french", "italian")] == [20, 20, 0]
    two = game(("fund",), crews=crews[:2], tiles={"E2": "p1", "E3": "p1"},
               deck=["militia"] * 3)
    assert [two.view()["crews"][c]["money"] for c in ("belgian", "french")] == [20, 10]


def test_the_race_ends_with_the_convoy_after_a_finish_and_prestige_decides() -> None:
    crews = [{"crew": "french", "space": "F14", "assistants": {"M": 1}, "engine": 1,
              "chassis": 1, "money": 10, "hand": ["guide"]},
             {"crew": "belgian", "space": "E14", "assistants": {"M": 1}, "engine": 2,
              "chassis": 2, "money": 50}]
    race = game(("drive", "go F15"), crews=crews, tiles={"F14": "p1", "E14": "p1"})
    assert french(race)["finished"] == 1 and french(race)["hand"] == []
    assert not race.is_over
    race.apply("drive; go F15")
    assert race.is_over
    view = race.view()
    assert view["finishers"] == ["french", "belgian"]
    assert view["scores"]["french"]["total"] == 5 + 1 + 1 + 0
    assert view["scores"]["belgian"]["total"] == 3 + 2 + 2 + 1
    assert view["winners"] == ["belgian"] and view["pending"] is None


@pytest.mark.parametrize("turn", [30, 31, 250])
def test_the_race_goes_on_past_turn_thirty_until_a_vehicle_finishes(turn: int) -> None:
    crews = [{"crew": "french", "assistants": {"F": 1}}, {"crew": "belgian", "space": "E2"}]
    race = game(("fund",), crews=crews, turn=turn, tiles={"E2": "p1"},
                deck=["militia"] * 3)
    view = race.view()
    assert not race.is_over and view["turn"] == turn + 1 and view["phase"] != "over"
    assert view["finishers"] == [] and view["winners"] == [] and view["scores"] is None
    assert race.pending() is not None and race.to_act()


def test_a_first_version_game_is_still_called_off_at_turn_thirty() -> None:
    crews = [{"crew": "french", "assistants": {"F": 1}}, {"crew": "belgian", "space": "E2"}]
    race = first_version(game(crews=crews, turn=30, tiles={"E2": "p1"}))
    race.apply("fund")
    assert race.is_over and race.view()["finishers"] == ["belgian", "french"]
    early = first_version(game(crews=crews, turn=29, tiles={"E2": "p1"}, deck=["militia"] * 3))
    early.apply("fund")
    assert not early.is_over and early.view()["turn"] == 30


def test_new_games_write_their_rules_version_and_old_states_stay_as_stored() -> None:
    new = GreatRace.new(["french", "belgian"], seed=1)
    assert new.state.to_json()["version"] == GREAT_RACE_VERSION == new.to_json()["engine_version"]
    assert all("hand_answers" in crew for crew in new.state.to_json()["crews"])
    for version in (1, 2):  # written as the engines of those rules wrote them
        old = GreatRace.new(["french", "belgian"], seed=1, version=version).state.to_json()
        assert ("version" in old) == (version > 1)
        assert not any("hand_answers" in crew for crew in old["crews"])
        assert GreatRace.from_state(old).state.to_json() == old


# ---------------------------------------------------------------------- inputs


def test_a_refused_part_applies_nothing_and_names_its_index() -> None:
    race = game(tiles={"E2": "p1"})
    before = race.state.to_json()
    with pytest.raises(IllegalInputError) as caught:
        race.apply("drive; go J9")
    assert caught.value.index == 1 and "go E2" in caught.value.legal
    assert "not next to your vehicle" in caught.value.message
    assert race.state.to_json() == before and race.inputs == []
    with pytest.raises(InvalidInputError) as bad:
        race.apply("drive; fly E2")
    assert bad.value.index == 1 and bad.value.legal


def test_own_input_seals_only_the_seats_own_plan() -> None:
    race = game(phase="planning", crews=[{"crew": "french"}, {"crew": "belgian"}])
    assert race.own_input(1, "plan M2 P1 F2") == "plan belgian P1 M2 F2"
    assert race.own_input(0, "PLAN french f5") == "plan french F5"
    for text in ("plan belgian F5", "drive", "plan P1"):
        with pytest.raises(InputError):
            race.own_input(0, text)


def test_json_round_trip_in_the_middle_of_a_drive() -> None:
    race = game(("drive", "go E2"), bag=["p1x", "p1"],
                crews=[{"crew": "french", "assistants": {"M": 1, "S": 1}}, WAITING])
    again = GreatRace.from_json(race.to_json())
    assert again.state.to_json() == race.state.to_json()
    again.apply("take")
    race.apply("take")
    assert again.state.to_json() == race.state.to_json()
    assert again.verify() == []


def test_a_drive_run_again_knows_a_choice_without_listing_the_options(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The shortcut a drive run again takes (:meth:`rules.Rules.drive_step_asked`) says what
    listing the options would: whether the step is asked (more than "stop" alone, or, from
    rules version 3 on, a hand holding cards), at every step of many computer races under
    either rules; and :func:`rules.can_choose_drive` says whether there is more than "stop"."""
    from app.games.greatrace.engine import CREWS, options, rules
    from app.games.greatrace.engine.bot import choose

    plain_step, plain_choice = rules.Rules.drive_step_asked, rules.can_choose_drive
    asked: list[tuple[int, bool]] = []

    def checked_choice(st: Any, crew: Any, trip: Any) -> bool:
        found = plain_choice(st, crew, trip)
        assert found == (len(options.drive_options(st, crew, trip)) > 1)
        return found

    def checked_step(self: Any, crew: Any, trip: Any) -> bool:
        found = plain_step(self, crew, trip)
        many = len(options.drive_options(self.st, crew, trip)) > 1
        assert found == (many or (self.st.version >= 3 and bool(crew.hand)))
        asked.append((self.st.version, found))
        return found

    monkeypatch.setattr(rules, "can_choose_drive", checked_choice)
    monkeypatch.setattr(rules.Rules, "drive_step_asked", checked_step)
    for seed in range(6):
        game = GreatRace.new(list(CREWS[: 2 + seed % 3]), seed=40 + seed, leaders=seed % 2 == 0,
                             version=3 if seed % 3 else 2)
        while not game.is_over:
            seats = game.to_act()
            game.apply("; ".join(choose(game, game.crew_of(s)) for s in seats))
    for version in (2, 3):
        assert sum(v == version for v, _ in asked) > 100, version
