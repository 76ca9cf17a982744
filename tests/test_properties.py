"""Property tests: random legal games to the end for every variant and circuit.

After every input the invariants hold; at sampled points every listed option is accepted, random
illegal inputs are refused with the state unchanged, and the state survives a JSON round trip;
at the end, replaying the recorded inputs rebuilds the identical state.

``TITANPOST_PROPERTY_GAMES`` sets the games per variant and circuit (default 40; 4 variants x 6
circuits, so 960 games per run, always the same ones: a deeper run before a release sets it
higher, e.g. 500).
"""

from __future__ import annotations

import json
import os
import random
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.games.titanrace.engine import BUILT_IN, CARDS, COLOURS, TITANS, InputError, Race, new_game
from app.games.titanrace.engine.geometry import ALL_DIRECTIONS, ALL_SPACES, location
from app.games.titanrace.engine.rules import TRAP_TOKENS
from app.games.titanrace.engine.state import OVER

GAMES = int(os.environ.get("TITANPOST_PROPERTY_GAMES", "40"))
VARIANT_NAMES = ("standard", "two-player", "teams", "grand-slam")
SAMPLE_EVERY = 17


def check_invariants(race: Race) -> None:
    st = race.state
    seen: dict[int, str] = {}
    for t in st.titans.values():
        assert 0 <= t.life <= 6, f"{t.name} has {t.life} life"
        assert t.ko == (t.life == 0), f"{t.name}: KO exactly at 0 Life Points"
        assert len(t.hand) <= 2, f"{t.name} holds {t.hand}"
        if t.pos is not None:
            loc = location(t.pos, st.cycle_rows)
            assert loc not in seen, f"{t.name} and {seen[loc]} share a space"
            assert loc not in st.traps, f"a trap lies under {t.name}"
            seen[loc] = t.name
    assert len(st.traps) <= TRAP_TOKENS
    view = race.view()
    assert len(view["traps"]) + view["trap_supply"] == TRAP_TOKENS
    cards = [c for t in st.titans.values() for c in t.hand] + st.deck + st.discard
    assert sorted(cards) == sorted(CARDS), "a Bonus card was lost or duplicated"
    pending = race.pending()
    if st.phase == OVER:
        assert pending is None and st.winner is not None and st.winner in st.winners
    else:
        assert pending is not None and pending["options"], "no decision pending"
        assert st.winner is None


def random_illegal(rnd: random.Random, legal: list[str]) -> Iterator[str]:
    """Inputs drawn from the notation's vocabulary (and some garbage) that are not legal now."""
    words = ["pick", "start", "move", "trap", "hit", "ability", "play", "discard", "reroll",
             "end", "pass", "lose", "jump", "", ";"]
    args = [*COLOURS, *ALL_SPACES, *ALL_DIRECTIONS, *CARDS, *TITANS, "SS", "LLL", "RS", "X9",
            "A0", "G3", "borrowed-power craken", "0", "-1", "é"]
    for _ in range(3):
        text = f"{rnd.choice(words)} {' '.join(rnd.choices(args, k=rnd.randint(0, 2)))}".strip()
        if text and text.split(";")[0].strip() and text not in legal:
            yield text


def assert_refused_unchanged(race: Race, text: str) -> None:
    before = json.dumps(race.to_json(), sort_keys=True)
    legal = race.options()
    try:
        race.apply(text)
    except InputError as exc:
        assert exc.message
        assert exc.legal == legal or not legal
    else:  # it turned out legal after normalisation (e.g. case): that is fine, nothing to check
        return
    assert json.dumps(race.to_json(), sort_keys=True) == before, f"'{text}' changed the state"


def assert_all_options_accepted(race: Race) -> None:
    for option in race.options():
        trial = race.copy()
        trial.apply(option)


def assert_round_trip(race: Race) -> None:
    data = race.to_json()
    text = json.dumps(data, sort_keys=True)
    again = Race.from_json(json.loads(text))
    assert json.dumps(again.to_json(), sort_keys=True) == text
    assert again.options() == race.options()
    assert again.view() == race.view()


def setup_game(variant: str, circuit: str, seed: int) -> Race:
    rnd = random.Random(seed)
    if variant == "two-player":
        titans = rnd.sample(TITANS, 4)
        return new_game(titans, circuits=[circuit], variant=variant, seed=seed)
    if variant == "teams":
        titans = rnd.sample(TITANS, rnd.choice([4, 6]))
        if len(titans) == 4 or rnd.random() < 0.5:
            teams = [titans[0::2], titans[1::2]]
        else:
            teams = [[titans[0], titans[3]], [titans[1], titans[4]], [titans[2], titans[5]]]
        return new_game(titans, circuits=[circuit], variant=variant, teams=teams, seed=seed)
    titans = rnd.sample(TITANS, rnd.randint(3, 6))
    if variant == "grand-slam":
        boards = [circuit, *rnd.sample([c for c in BUILT_IN if c != circuit], 2)]
        rnd.shuffle(boards)
        return new_game(titans, circuits=boards, variant=variant, seed=seed)
    anytime = rnd.sample(titans, rnd.randint(0, len(titans)))
    return new_game(titans, circuits=[circuit], variant=variant, seed=seed,
                    anytime_windows=anytime)


def play_random_game(race: Race, seed: int) -> None:
    rnd = random.Random(seed ^ 0x5EED)
    count = 0
    while not race.is_over:
        assert count < 20_000, "the game does not end"
        options = race.options()
        if count % SAMPLE_EVERY == 0:
            assert_all_options_accepted(race)
            for text in random_illegal(rnd, options):
                assert_refused_unchanged(race, text)
            assert_round_trip(race)
        race.apply(rnd.choice(options))
        check_invariants(race)
        count += 1
    assert_round_trip(race)
    replayed = race.replay()
    assert replayed.to_json() == race.to_json(), "replaying the inputs gave another state"
    assert race.verify() == []
    assert race.options() == []


@pytest.mark.parametrize("circuit", BUILT_IN)
@pytest.mark.parametrize("variant", VARIANT_NAMES)
def test_random_games_to_the_end(variant: str, circuit: str) -> None:
    @settings(max_examples=GAMES, deadline=None, derandomize=True,
              suppress_health_check=[HealthCheck.too_slow])
    @given(seed=st.integers(min_value=0, max_value=2**32 - 1))
    def one_game(seed: int) -> None:
        race = setup_game(variant, circuit, seed)
        check_invariants(race)
        play_random_game(race, seed)

    one_game()


@settings(max_examples=40, deadline=None, derandomize=True)
@given(seed=st.integers(min_value=0, max_value=2**32 - 1),
       cut=st.floats(min_value=0.0, max_value=1.0))
def test_replay_from_any_point_matches(seed: int, cut: float) -> None:
    """A game rebuilt from its first k inputs equals the game as it stood after k inputs."""
    race = setup_game("standard", BUILT_IN[seed % len(BUILT_IN)], seed)
    rnd = random.Random(seed)
    snapshots = [race.to_json()["state"]]
    while not race.is_over:
        race.apply(rnd.choice(race.options()))
        snapshots.append(race.to_json()["state"])
    k = int(cut * (len(race.inputs)))
    assert race.replay(k).to_json()["state"] == snapshots[k]


@settings(max_examples=60, deadline=None, derandomize=True)
@given(seed=st.integers(min_value=0, max_value=2**32 - 1), data=st.data())
def test_joined_submissions_are_atomic(seed: int, data: st.DataObject) -> None:
    """Several inputs joined with ';' apply all together, or none when one is illegal."""
    race = setup_game("standard", BUILT_IN[seed % len(BUILT_IN)], seed)
    rnd = random.Random(seed)
    for _ in range(rnd.randint(0, 60)):
        if race.is_over:
            return
        race.apply(rnd.choice(race.options()))
    trial = race.copy()
    parts = []
    for _ in range(data.draw(st.integers(min_value=1, max_value=4))):
        if trial.is_over:
            break
        choice = rnd.choice(trial.options())
        trial.apply(choice)
        parts.append(choice)
    if not parts:
        return
    joined = race.copy()
    joined.apply("; ".join(parts))
    assert joined.to_json()["state"] == trial.to_json()["state"]
    before = race.to_json()
    with pytest.raises(InputError) as refused:
        race.apply("; ".join([*parts, "jump"]))
    assert refused.value.index == len(parts)
    assert race.to_json() == before


def test_windows_and_pirates_survive_round_trip() -> None:
    """Suspended resolutions (reaction windows, pirate choices) serialise and resume exactly."""
    seen = set()
    for seed in range(400):
        race = setup_game("standard", BUILT_IN[seed % 6], seed)
        rnd = random.Random(seed)
        while not race.is_over:
            pending = race.pending()
            assert pending is not None
            if pending["kind"] in ("react", "pirates"):
                seen.add(pending["kind"])
                again = Race.from_json(json.loads(json.dumps(race.to_json())))
                choice = rnd.choice(race.options())
                race.apply(choice)
                again.apply(choice)
                assert again.to_json() == race.to_json()
            else:
                race.apply(rnd.choice(race.options()))
        if seen == {"react", "pirates"} and seed > 50:
            break
    assert seen == {"react", "pirates"}
