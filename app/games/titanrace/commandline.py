"""Titan Race for the ``titanpost`` command (:mod:`app.games.commandline`): its circuits and
variant from the set-up flags, and a demo race between computer Titans."""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, Any

from app.core.i18n import N_, translate
from app.games.commandline import FlagsRefused, SetupFlags

from . import DEFAULT_TITANS
from .engine import BUILT_IN, VARIANTS, CircuitError, EngineError, local_circuit, new_game
from .engine.bot import choose
from .engine.race import Race

if TYPE_CHECKING:
    from app.games.base import Ruleset

GAME = "titan-race"

NOT_OURS = N_("--start and --leaders are The Great Race's (--game great-race)")
NOT_OUR_PIECES = N_("--crews are The Great Race's (--game great-race): give Titans with --titans")
CHOOSE_A_VARIANT = N_("choose a variant: {choices}")
TITLE = N_("Titan Race demo - {circuits} - seed {seed}")
RESULT = N_("{winner} wins after {rounds} rounds ({inputs} inputs) - replay with --seed {seed}")


def _only_ours(flags: SetupFlags, lang: str) -> None:
    if flags.start or flags.leaders:
        raise FlagsRefused(translate(lang, NOT_OURS))
    if flags.crews:
        raise FlagsRefused(translate(lang, NOT_OUR_PIECES))
    if flags.variant is not None and flags.variant not in VARIANTS:
        raise FlagsRefused(translate(lang, CHOOSE_A_VARIANT, choices=", ".join(VARIANTS)))


def setup_of(flags: SetupFlags, lang: str) -> tuple[dict[str, Any], str]:
    """The circuits ``--circuit`` names (built-in ones by name, a TOML file read and stored in
    the game, inline: the server takes a circuit inline only), else the variant's default;
    the variant given, else grand-slam for three circuits and standard for one."""
    from app.games import ruleset

    _only_ours(flags, lang)
    rules = ruleset(GAME)
    boards = _circuit_specs(flags, rules)
    variant = flags.variant or ("grand-slam" if len(boards) == 3 else "standard")
    return rules.setup_from_circuits(boards), variant


def _circuit_specs(flags: SetupFlags, rules: Ruleset) -> list[Any]:
    if not flags.circuits:
        if flags.variant == "grand-slam":
            return list(BUILT_IN[:3])
        return list(rules.circuits_of(rules.default_setup(flags.variant or "standard")))
    specs: list[Any] = []
    for circuit in flags.circuits:
        if circuit.strip().lower() in BUILT_IN:
            specs.append(circuit.strip().lower())
            continue
        try:
            specs.append(local_circuit(circuit).to_data())
        except CircuitError as exc:
            raise FlagsRefused(str(exc)) from None
    return specs


def demo(flags: SetupFlags, seed: int, lang: str) -> TitanRaceDemo:
    """A race between computer Titans (``--titans``: their names, comma-separated; default four)
    on the circuits given (default: one built-in circuit drawn with ``seed``)."""
    _only_ours(flags, lang)
    names = [n.strip() for n in (flags.titans or DEFAULT_TITANS).split(",") if n.strip()]
    chosen = list(flags.circuits) or [random.Random(seed).choice(BUILT_IN)]
    variant = flags.variant or ("grand-slam" if len(chosen) == 3 else "standard")
    teams = [names[0::2], names[1::2]] if variant == "teams" else None
    try:
        boards = [local_circuit(c) for c in chosen]
        race = new_game(names, circuits=boards, variant=variant, teams=teams, seed=seed)
    except EngineError as exc:
        raise FlagsRefused(str(exc)) from None
    return TitanRaceDemo(race, boards, seed, lang)


class TitanRaceDemo:
    """:class:`app.games.commandline.Demo` for a Titan Race."""

    def __init__(self, race: Race, boards: list[Any], seed: int, lang: str) -> None:
        self.race, self.boards, self.seed, self.lang = race, boards, seed, lang

    def title(self) -> str:
        return translate(self.lang, TITLE, circuits=", ".join(b.title for b in self.boards),
                         seed=self.seed)

    def over(self) -> bool:
        return self.race.is_over

    def step(self) -> tuple[str, str, str]:
        from .describe import describe_option, titan_name

        move = choose(self.race)
        titan = (self.race.pending() or {}).get("titan")
        self.race.apply(move)
        return titan_name(titan, self.lang), describe_option(move, self.lang, titan), move

    def turn(self) -> tuple[int, int]:
        return self.race.state.round, self.race.state.turn_index

    def board(self) -> Any:
        from .textboard import render_board

        return render_board(self.race.view(), self.boards, lang=self.lang)

    def result(self) -> str:
        from .describe import titan_name

        return translate(self.lang, RESULT, winner=titan_name(self.race.winner, self.lang),
                         rounds=self.race.state.round, inputs=len(self.race.inputs),
                         seed=self.seed)
