"""The Great Race for the ``titanpost`` command (:mod:`app.games.commandline`): its start city
and Leader module from the set-up flags, and a demo race between computer crews."""

from __future__ import annotations

from typing import Any

from app.core.i18n import N_, translate
from app.games.commandline import FlagsRefused, SetupFlags
from app.games.errors import EngineError

from . import DEFAULT_CREWS
from .engine.bot import choose
from .engine.game import GreatRace

GAME = "great-race"
DEFAULT_START = "alger"

NO_CIRCUIT = N_("The Great Race is played on the Africa map: give its start city with --start, "
                "not --circuit")
LEADERS_ALONE = N_("--leaders is the leaders variant: it goes with no --variant {variant}")
NOT_IN_THE_DEMO = N_("--circuit and --variant are Titan Race's: The Great Race takes --start "
                     "and --leaders")
TITLE = N_("The Great Race demo - from {start} - seed {seed}")
RESULT = N_("{crew} wins after {turns} turns ({inputs} inputs) - replay with --seed {seed}")


def setup_of(flags: SetupFlags, lang: str) -> tuple[dict[str, Any], str]:
    """The start city ``--start`` names (else the first purple city), and the variant:
    leaders with ``--leaders``, else the one given, else standard."""
    from app.games import ruleset

    if flags.circuits:
        raise FlagsRefused(translate(lang, NO_CIRCUIT))
    if flags.leaders and flags.variant not in (None, "leaders"):
        raise FlagsRefused(translate(lang, LEADERS_ALONE, variant=flags.variant))
    variant = "leaders" if flags.leaders else (flags.variant or "standard")
    rules = ruleset(GAME)
    setup = (rules.setup_from_circuits([flags.start.strip().lower()]) if flags.start
             else rules.default_setup(variant))
    return setup, variant


def demo(flags: SetupFlags, seed: int, lang: str) -> GreatRaceDemo:
    """A race between computer crews (``--crews``, or ``--titans`` as the demo took them before
    there was a flag of their own: their names, comma-separated; default four)
    from ``--start`` (default Alger), with the Leader module when ``--leaders`` says so."""
    if flags.circuits or flags.variant:
        raise FlagsRefused(translate(lang, NOT_IN_THE_DEMO))
    pieces = flags.crews or flags.titans or DEFAULT_CREWS
    names = [n.strip().lower() for n in pieces.split(",") if n.strip()]
    start = (flags.start or DEFAULT_START).strip().lower()
    try:
        race = GreatRace.new(names, start=start, leaders=flags.leaders, seed=seed)
    except EngineError as exc:
        raise FlagsRefused(str(exc)) from None
    return GreatRaceDemo(race, flags.start or DEFAULT_START, seed, lang)


class GreatRaceDemo:
    """:class:`app.games.commandline.Demo` for a Great Race."""

    def __init__(self, race: GreatRace, start: str, seed: int, lang: str) -> None:
        self.race, self.start, self.seed, self.lang = race, start, seed, lang

    def title(self) -> str:
        return translate(self.lang, TITLE, start=self.start, seed=self.seed)

    def over(self) -> bool:
        return self.race.is_over

    def step(self) -> tuple[str, str, str]:
        from .describe import crew_name, describe_option

        crew = (self.race.pending() or {}).get("crew")
        move = choose(self.race)
        words = describe_option(move, self.race.view(), self.lang)
        self.race.apply(move)
        return crew_name(crew, self.lang), words, move

    def turn(self) -> tuple[Any, Any, Any]:
        view = self.race.view()
        return view.get("turn"), view.get("phase"), (view.get("pending") or {}).get("active")

    def board(self) -> Any:
        from .textboard import board_text

        return board_text(self.race.view(), lang=self.lang)

    def result(self) -> str:
        from .describe import crew_name

        return translate(self.lang, RESULT, crew=crew_name(str(self.race.winner), self.lang),
                         turns=self.race.state.turn, inputs=len(self.race.inputs),
                         seed=self.seed)
