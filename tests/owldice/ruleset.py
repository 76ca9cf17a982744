"""Owl Dice as the game service plays it (the :class:`app.games.base.Ruleset` protocol), on the
kit of :mod:`app.games.seated`: a pool of owls (a seat's choice checked, the rest dealt) and
a secret hoot a round, sealed by the service (:meth:`OwlDiceRuleset.own_input`) until every
owl has hooted, then applied as one log entry."""

from __future__ import annotations

import random
from typing import Any

from app.games.apiwords import ApiWords
from app.games.base import (
    EASY,
    TURN,
    BotLevel,
    ClockKind,
    SeatSetup,
    SetupError,
    rules_version,
)
from app.games.rng import Dealing
from app.games.seated import PiecePool, SeatedRuleset, SecretDecision, deal_pieces

from .engine import HOOT, OWL_DICE_VERSION, OWLS, VERBS, OwlDice, OwlState, new_game, normalise
from .engine.game import options, pending, scores, winners
from .engine.notation import HOOTS

GLADES = ("hollow-oak",)
VARIANTS = ("standard",)
OWL_POOL = PiecePool(OWLS, salt=0x0E1, label="owls", unknown="unknown owl '{piece}'; the owls "
                     "are {pool}", twice="the owl {owl} is chosen by two seats", twice_field="owl")


class OwlDiceRuleset(SeatedRuleset):
    """Owl Dice through :mod:`tests.owldice.engine`."""

    normalise_input = staticmethod(normalise)
    input_words: tuple[str, ...] = VERBS
    name = "owl-dice"
    version = OWL_DICE_VERSION
    variants: tuple[str, ...] = VARIANTS
    most_seats = len(OWLS)
    secret = SecretDecision(kind="hoot", pieces="owls", piece="owl", answered="hooted")
    api_words = ApiWords(
        variants="standard", setup='{"glade": "..."}', older_setup="the glade, alone in the list",
        pieces='{"owl": "strix"}', older_pieces="the chosen owl, alone in the list",
        setup_example={"glade": GLADES[0]}, pieces_example={"owl": "strix"})

    # -------------------------------------------------------------- set-up

    def default_setup(self, variant: str) -> dict[str, Any]:
        return {"glade": GLADES[0]}

    def check_setup(self, variant: str, setup: dict[str, Any]) -> None:
        self.check_variant(variant)
        if not isinstance(setup, dict) or set(setup) != {"glade"} or setup["glade"] not in GLADES:
            raise SetupError(f"Owl Dice is played in the glade {GLADES[0]}")

    def setup_from_circuits(self, circuits: list[Any]) -> dict[str, Any]:
        return {"glade": circuits[0] if len(circuits) == 1 else circuits}

    def circuits_of(self, setup: dict[str, Any]) -> list[Any]:
        return [setup["glade"]] if "glade" in setup else []

    def pieces_from_fields(self, titans: list[str], team: int | None) -> dict[str, Any]:
        pieces: dict[str, Any] = {}
        if titans:
            pieces["owl"] = titans[0] if len(titans) == 1 else list(titans)
        if team is not None:
            pieces["team"] = team
        return pieces

    def fields_of(self, pieces: dict[str, Any]) -> dict[str, Any]:
        return {"titans": self.piece_names(pieces), "team": None}

    def piece_names(self, pieces: dict[str, Any]) -> list[str]:
        owl = pieces.get("owl")
        return [owl] if isinstance(owl, str) else []

    def check_seats(self, variant: str, seats: list[SeatSetup]) -> None:
        if not 2 <= len(seats) <= len(OWLS):
            raise SetupError(f"Owl Dice has 2 to {len(OWLS)} players, not {len(seats)}")
        self._owls(seats, Dealing())

    @staticmethod
    def _owls(seats: list[SeatSetup], dealing: Dealing) -> list[str]:
        asked: list[list[str]] = []
        for seat in seats:
            pieces = seat.pieces
            if not isinstance(pieces, dict) or not set(pieces) <= {"owl", "team"} or (
                    pieces.get("team") is not None):
                raise SetupError(f'seat {seat.position + 1}: an Owl Dice seat\'s pieces are '
                                 '{"owl": name}')
            owl = pieces.get("owl")
            if owl is not None and not isinstance(owl, str):
                raise SetupError("a seat plays one owl")
            asked.append([owl] if owl is not None else [])
        return [pieces[0] for pieces in deal_pieces(OWL_POOL, asked, 1, dealing)]

    def start(self, *, variant: str, setup: dict[str, Any], seats: list[SeatSetup],
              dealing: Dealing, version: int | None = None,
              ) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        rules_version(self.name, version, self.version)
        self.check_setup(variant, setup)
        self.check_seats(variant, seats)
        owls = self._owls(seats, dealing)
        state = new_game(owls, glade=setup["glade"], rng=dealing.source())
        return state.to_json(), [{"owl": owl} for owl in owls]

    # -------------------------------------------------------------- play

    def load(self, state: dict[str, Any]) -> OwlDice:
        return OwlDice(OwlState.from_json(state), initial={})

    def to_act(self, game: OwlDice) -> list[int]:
        return game.to_act()

    def options(self, game: OwlDice, seat: int | None = None) -> list[str]:
        return options(game.state, None if seat is None else game.owl_of(seat))

    def simultaneous(self, game: OwlDice) -> bool:
        return game.state.phase == HOOT

    def pending(self, game: OwlDice) -> dict[str, Any] | None:
        return pending(game.state)

    def view(self, game: OwlDice, seat: int | None, spectator: bool) -> dict[str, Any]:
        return game.view(seat=seat, spectator=spectator)

    def answer_piece(self, option: str) -> str:
        return option.split()[1]

    def show_own_answer(self, pieces: dict[str, Any], own: str) -> None:
        """The viewer's own sealed hoot shows as its owl's ``hoot``."""
        _, name, count = own.split()
        if name in pieces:
            pieces[name]["hoot"] = int(count)

    def winners(self, game: OwlDice) -> list[str] | None:
        return winners(game.state) or None

    def bot_move(self, game: OwlDice, seat: int | None = None, level: BotLevel = EASY) -> str:
        """The roll, or the highest hoot the owl's own pellets and the moon make good."""
        st = game.state
        if st.phase != HOOT:
            return "roll"
        name = st.owing()[0] if seat is None else game.owl_of(seat)
        owl, moon = st.owls[name], st.moon or 0
        best = max((n for n in HOOTS if scores(owl.pellets, moon, n)), default=1)
        return f"hoot {name} {best}"

    def think_seconds(self, level: BotLevel) -> float:
        return 0.0

    def viewer_world(self, game: OwlDice, seat: int) -> OwlDice | None:
        """The other owls' pellets and the deck dealt again from the seat's view."""
        world = game.copy()
        st = world.state
        mine = game.owl_of(seat)
        pool = list(st.deck) + [p for n, o in st.owls.items() if n != mine for p in o.pellets]
        rng: random.Random = self.viewer_random(game, seat)
        rng.shuffle(pool)
        for name, owl in st.owls.items():
            if name != mine:
                owl.pellets = [pool.pop() for _ in owl.pellets]
        st.deck = pool
        return world

    def timeout_move(self, game: OwlDice, mode: str, seat: int | None = None) -> str:
        if mode == "pass" and game.state.phase == HOOT and seat is not None:
            return f"hoot {game.owl_of(seat)} 1"
        return self.bot_move(game, seat)

    def same_turn(self, first: dict[str, Any], now: dict[str, Any]) -> bool:
        return False

    def clock_kind(self, pending: dict[str, Any]) -> ClockKind:
        return TURN

    def redact_outcomes(self, outcomes: list[list[str]]) -> list[list[str]]:
        return outcomes

    def public_input(self, text: str) -> str:
        return text

    def reveals_hidden(self, before: OwlDice, after: OwlDice) -> bool:
        """A moon rolled, or the hoots revealed (the round moved on)."""
        return (super().reveals_hidden(before, after)
                or before.state.round != after.state.round
                or (after.state.phase != HOOT and before.state.phase == HOOT))
