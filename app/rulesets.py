"""Rulesets: what the game service needs from a game's rules, and Titan Race's implementation.

The service stores and serves logs; it never looks inside a game state. A second game (for
example *The Great Race*) is added by writing another class with these methods and registering
it in :data:`RULESETS`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final, Literal, Protocol

from .clock import QUICK_DECISIONS
from .engine import (
    ENGINE_VERSION,
    VARIANTS,
    EngineError,
    InputError,
    Race,
    new_game,
)
from .engine.bot import choose
from .engine.cards import TITANS
from .engine.circuits import BUILT_IN, resolve_circuit
from .engine.logged import LoggedGame
from .engine.notation import normalise
from .engine.race import check_teams
from .engine.rng import Dealing
from .engine.state import RaceState
from .i18n import N_

ClockKind = Literal["turn", "continues", "quick"]
TURN: Final = "turn"
CONTINUES: Final = "continues"
QUICK: Final = "quick"


class SetupError(ValueError):
    """A game cannot be set up as asked (the message says why)."""


class MoveRejected(ValueError):
    """An input was refused; ``legal`` lists what was legal, ``index`` which part failed.

    ``words``, when given, is the refusal as a catalogue message and its fields (for pages and
    mails in the player's language); ``message`` is then that message in English."""

    def __init__(self, message: str, legal: list[str], index: int = 0,
                 words: tuple[str, dict[str, Any]] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.legal = legal
        self.index = index
        self.words = words


CHAIN_NOT_YOURS: Final = N_(
    "part {number} ('{input}') is not your decision: after part {before} the decision is "
    "another player's. Nothing was played: send only the inputs of your own decisions")
CHAIN_SECRET: Final = N_(
    "part {number} ('{input}') answers a decision that every player answers at once and in "
    "secret: send it on its own once it is asked. Nothing was played")
CHAIN_AFTER_CHANCE: Final = N_(
    "the inputs from part {number} ('{input}') on could not all be applied after the random "
    "outcomes of part {chance} (one was not a legal answer then, or not your decision). Nothing "
    "was played: send the inputs up to part {chance} first, and the rest once you have seen what "
    "chance gave")
SECRET_ALONE: Final = N_(
    "a secret answer is sent on its own: part {number} ('{input}') cannot be joined to it with "
    "';'. Nothing was sealed")
NOT_YOURS_NOW: Final = N_("'{input}' does not answer a decision of yours now")


@dataclass
class SeatSetup:
    position: int
    titans: list[str] = field(default_factory=list)
    team: int | None = None
    anytime_windows: bool = False


class Ruleset(Protocol):
    """The rules of one game, as the service sees them. States are opaque JSON-able values."""

    name: str
    version: int
    variants: tuple[str, ...]
    default_circuits: tuple[str, ...]
    """The board(s) a game is played on when the creator names none."""

    def check_circuits(self, variant: str, circuits: list[Any]) -> None:
        """Raise SetupError unless a game of ``variant`` may be played on ``circuits``."""

    def check_seats(self, variant: str, seats: list[SeatSetup]) -> None:
        """Raise SetupError unless a game of ``variant`` may be set up with these seats."""

    def start(
        self, *, variant: str, circuits: list[Any], seats: list[SeatSetup], dealing: Dealing
    ) -> tuple[dict[str, Any], list[list[str]]]:
        """The initial state, and the Titans (or pieces) given to each seat; every random
        outcome (the deal, the first player, pieces drawn for seats that chose none) comes
        from ``dealing``."""

    def load(self, state: dict[str, Any]) -> Any: ...

    def dump(self, game: Any) -> dict[str, Any]: ...

    def apply(self, game: Any, text: str, seat: int | None = None) -> list[list[str]]:
        """Apply a submission in place; return the random outcomes of each input.

        ``seat`` is the seat that sent it: every input must then answer a decision of that seat
        alone (not another seat's, nor a simultaneous one, whose answers are sealed), else the
        whole submission is refused (MoveRejected) and nothing changes. A refusal tells only
        what the sender could know before: the legal options at the first input, and for a
        later input a reason that names nothing chance gave to the inputs before it. None:
        the submission has no single author (the reveal of sealed answers, a replay of the
        log, the computer's own answers)."""

    def normalise(self, text: str) -> str: ...

    def to_act(self, game: Any) -> list[int]:
        """The seats who may answer the pending decision (empty once the game is over)."""

    def options(self, game: Any, seat: int | None = None) -> list[str]:
        """The legal answers to the pending decision (of ``seat`` only, when several owe one)."""

    def simultaneous(self, game: Any) -> bool:
        """Whether every seat in ``to_act`` answers the pending decision at once and in secret:
        the service seals each answer until all are in, then applies them as one entry."""

    def own_input(self, game: Any, seat: int, text: str) -> str:
        """``text`` as seat ``seat``'s answer to a simultaneous decision, in the notation the
        reveal applies; raises MoveRejected when it is not that seat's to give."""

    def pending(self, game: Any) -> dict[str, Any] | None: ...

    def view(self, game: Any, seat: int | None, spectator: bool) -> dict[str, Any]: ...

    def mark_sealed(self, view: dict[str, Any], seats: list[int],
                    own: str | None = None) -> dict[str, Any]:
        """``view`` with ``seats`` shown as having answered the pending simultaneous decision
        (that they answered, never what), and ``own``, the viewer's own sealed answer, shown
        as given: the engine knows of a sealed answer only once all are in and revealed."""

    def winners(self, game: Any) -> list[str] | None:
        """None while the game runs; then the winning pieces."""

    def bot_move(self, game: Any, seat: int | None = None) -> str:
        """The computer's answer (for ``seat``, when several owe the decision)."""

    def timeout_move(self, game: Any, mode: str, seat: int | None = None) -> str:
        """The input made for a seat whose time ran out: the computer's choice (``bot``), or
        with ``pass`` the answer that does the least (passing a reaction window, taking the
        pirates' loss, ending a turn), the computer choosing only what cannot be passed."""
        ...

    def same_turn(self, first: dict[str, Any], now: dict[str, Any]) -> bool:
        """Whether pending decision ``now`` continues the turn that pending decision ``first``
        was part of (a timeout plays the rest of a turn under one deadline)."""

    def clock_kind(self, pending: dict[str, Any]) -> ClockKind:
        """How the clock times a pending decision: ``quick`` (an out-of-turn reaction, with the
        shorter reaction time), ``continues`` (a further step of the turn its seat has just
        played, under that turn's deadline) or ``turn``."""

    def redact_outcomes(self, outcomes: list[list[str]]) -> list[list[str]]:
        """The random outcomes as players may see them (no hidden cards)."""

    def public_input(self, text: str) -> str:
        """A logged input as players other than its author may read it."""


class LoggedRuleset:
    """What the rulesets of games built on :class:`app.engine.logged.LoggedGame` share: a
    submission applied and normalised part by part, the engine's refusals turned into
    :class:`MoveRejected`. A subclass names its notation's ``normalise_input``."""

    normalise_input: Callable[[str], str]
    """The game's notation: one input in its canonical form (raises InputError)."""

    def apply(self, game: LoggedGame[Any], text: str, seat: int | None = None) -> list[list[str]]:
        sender = None if seat is None else SendersInputs(self, game, seat)
        try:
            return game.apply_each(text, sender)
        except InputError as exc:
            if sender is None:
                raise MoveRejected(exc.message, exc.legal, exc.index) from None
            raise sender.rejected(exc) from None

    # (what a seat's submission is checked against, input by input: each game's, see Ruleset)
    def to_act(self, game: Any) -> list[int]:
        raise NotImplementedError

    def options(self, game: Any, seat: int | None = None) -> list[str]:
        raise NotImplementedError

    def simultaneous(self, game: Any) -> bool:
        raise NotImplementedError

    def unseen(self, game: Any) -> int:
        """How many hidden things chance may hand out without an outcome saying so (Titan
        Race's face-down deck: a drawn card is in its drawer's hand, in no outcome): when this
        changes, an input met chance as surely as when it produced an outcome."""
        return 0

    def normalise(self, text: str) -> str:
        try:
            return "; ".join(self.normalise_input(part) for part in text.split(";"))
        except InputError as exc:
            raise MoveRejected(exc.message, exc.legal) from None


class ChainRefused(InputError):
    """An input of a seat's submission refused before the engine saw it (see
    :class:`SendersInputs`): ``words`` is the refusal as a catalogue message."""

    def __init__(self, text: str, fields: dict[str, Any], index: int) -> None:
        super().__init__(text.format(**fields), [], index)
        self.words = (text, fields)


class SendersInputs:
    """A seat's submission applied input by input (the :data:`app.engine.logged.Check` of
    :meth:`LoggedRuleset.apply`): each input must answer a decision of that seat alone, and a
    refusal tells only what the sender knew when sending it.

    Every refusal carries the legal options at the first input, which the sender could see.
    The inputs after the first one that met chance (a roll, a drawn tile or card, a shuffle)
    find a game the sender has not seen: what may follow then (which input is legal, whose
    decision it is, which input fails) depends on what chance gave. However they fail, the
    refusal is the same: the inputs from the one after the chance on could not all be applied.
    It names no die, tile or card, and no input that only chance made fail."""

    def __init__(self, rules: LoggedRuleset, game: LoggedGame[Any], seat: int) -> None:
        self.rules = rules
        self.game = game
        """The game as the submission found it (it changes only once every input is in)."""
        self.seat = seat
        self.unseen = rules.unseen(game)
        self.chance: int | None = None
        """The index of the first input that met chance, once one has."""
        self.parts: list[str] = []

    def __call__(self, game: LoggedGame[Any], index: int, part: str,
                 produced: list[list[str]]) -> None:
        self.parts.append(part.strip())
        if index > 0 and self.chance is None:
            unseen = self.rules.unseen(game)
            if produced[-1] or unseen != self.unseen:
                self.chance = index - 1
            self.unseen = unseen
        if self.seat not in self.rules.to_act(game):
            if index == 0:
                raise ChainRefused(NOT_YOURS_NOW, {"input": part.strip()}, index)
            if self.chance is None:
                raise ChainRefused(CHAIN_NOT_YOURS, self._fields(index) | {"before": index},
                                   index)
        elif not self.rules.simultaneous(game):
            return
        elif self.chance is None:
            raise ChainRefused(CHAIN_SECRET, self._fields(index), index)
        raise self._after_chance()

    def _fields(self, index: int) -> dict[str, Any]:
        return {"number": index + 1, "input": self.parts[index]}

    def _after_chance(self) -> ChainRefused:
        assert self.chance is not None
        after = self.chance + 1
        return ChainRefused(CHAIN_AFTER_CHANCE, self._fields(after) | {"chance": after}, after)

    def rejected(self, exc: InputError) -> MoveRejected:
        """The refusal of the submission, from what refused its input ``exc.index``."""
        if exc.index > 0 and self.chance is not None and not isinstance(exc, ChainRefused):
            exc = self._after_chance()
        if isinstance(exc, ChainRefused):
            return MoveRejected(exc.message, self._legal(), exc.index, exc.words)
        if exc.index == 0:
            return MoveRejected(exc.message, exc.legal, 0)
        return MoveRejected(exc.message, self._legal(), exc.index)

    def _legal(self) -> list[str]:
        """The sender's legal options at the first input."""
        return self.rules.options(self.game, self.seat)


class TitanRaceRuleset(LoggedRuleset):
    """Titan Race through :mod:`app.engine`."""

    normalise_input = staticmethod(normalise)

    name = "titan-race"
    version = ENGINE_VERSION
    variants: tuple[str, ...] = tuple(VARIANTS)
    default_circuits: tuple[str, ...] = ("kaldheira",)

    def check_circuits(self, variant: str, circuits: list[Any]) -> None:
        if variant == "grand-slam" and len(circuits) != 3:
            raise SetupError("Grand Slam is raced over three circuits, one per lap")
        if len(circuits) not in (1, 3):
            raise SetupError("a game uses one circuit, or three for Grand Slam")
        for circuit in circuits:
            try:
                resolve_circuit(circuit)
            except EngineError as exc:
                raise SetupError(str(exc)) from None

    def seat_count(self, variant: str, seats: int) -> None:
        if variant not in VARIANTS:
            raise SetupError(f"unknown variant '{variant}'; choose one of {', '.join(VARIANTS)}")
        allowed = {"two-player": (2,), "teams": (4, 6)}.get(variant, (3, 4, 5, 6))
        if seats not in allowed:
            raise SetupError(
                f"a {variant} game has {' or '.join(str(n) for n in allowed)} players, not {seats}"
            )

    def check_seats(self, variant: str, seats: list[SeatSetup]) -> None:
        self.seat_count(variant, len(seats))
        self._titans(seats, 2 if variant == "two-player" else 1, Dealing())
        if variant != "teams":
            return
        teams = [s.team for s in seats]
        if any(team is None for team in teams):
            raise SetupError("in a teams game every seat needs a team")
        sizes = {teams.count(team) for team in set(teams)}
        if len(sizes) != 1 or (len(seats), len(set(teams))) not in ((4, 2), (6, 2), (6, 3)):
            raise SetupError("teams are 2 teams of 2 (4 players), or 2 of 3 or 3 of 2 (6 players)")
        for i, team in enumerate(teams):
            if team == teams[(i + 1) % len(teams)]:
                raise SetupError(
                    f"seats {i} and {(i + 1) % len(teams)} are teammates: teammates may not "
                    "sit next to each other"
                )

    def start(
        self, *, variant: str, circuits: list[Any], seats: list[SeatSetup], dealing: Dealing
    ) -> tuple[dict[str, Any], list[list[str]]]:
        self.check_seats(variant, seats)
        per_seat = 2 if variant == "two-player" else 1
        chosen = self._titans(seats, per_seat, dealing)
        if variant == "two-player":
            order = [chosen[0][0], chosen[1][0], chosen[0][1], chosen[1][1]]
        else:
            order = [titans[0] for titans in chosen]
        teams = None
        if variant == "teams":
            team_ids = sorted({s.team for s in seats if s.team is not None})
            if len(team_ids) < 2 or any(s.team is None for s in seats):
                raise SetupError("in a teams game every seat needs a team")
            teams = [[chosen[i][0] for i, s in enumerate(seats) if s.team == t] for t in team_ids]
        anytime = [
            chosen[i][k] for i, s in enumerate(seats) if s.anytime_windows for k in range(per_seat)
        ]
        try:
            boards = [resolve_circuit(c) for c in circuits]
            if teams is not None:
                check_teams(order, teams)
            race = new_game(
                order,
                circuits=boards,
                variant=variant,
                teams=teams,
                rng=dealing.source(),
                anytime_windows=anytime,
            )
        except EngineError as exc:
            raise SetupError(str(exc)) from None
        return race.state.to_json(), chosen

    @staticmethod
    def _titans(seats: list[SeatSetup], per_seat: int, dealing: Dealing) -> list[list[str]]:
        """Each seat's Titans: its choice, else drawn at random from those nobody chose."""
        taken: list[str] = []
        for seat in seats:
            for titan in seat.titans:
                if titan not in TITANS:
                    raise SetupError(f"unknown Titan '{titan}'; the Titans are {', '.join(TITANS)}")
                if titan in taken:
                    raise SetupError(f"{titan} is chosen by two seats")
                taken.append(titan)
            if len(seat.titans) > per_seat:
                raise SetupError(f"a seat races {per_seat} Titan(s) in this variant")
        free = [t for t in TITANS if t not in taken]
        dealing.setup_source(0x7171).shuffle(free, "titans")
        return [
            list(s.titans) + [free.pop() for _ in range(per_seat - len(s.titans))] for s in seats
        ]

    def load(self, state: dict[str, Any]) -> Race:
        return Race(RaceState.from_json(state), initial={})

    def dump(self, game: Race) -> dict[str, Any]:
        return game.state.to_json()

    def to_act(self, game: Race) -> list[int]:
        seat = game.seat_to_act()
        return [] if seat is None else [seat]

    def unseen(self, game: Race) -> int:
        """The face-down deck: a card drawn from it is in no outcome."""
        return len(game.state.deck)

    def options(self, game: Race, seat: int | None = None) -> list[str]:
        return game.options()

    def simultaneous(self, game: Race) -> bool:
        return False

    def own_input(self, game: Race, seat: int, text: str) -> str:
        raise MoveRejected("Titan Race has no simultaneous decisions", game.options())

    def pending(self, game: Race) -> dict[str, Any] | None:
        return game.pending()

    def view(self, game: Race, seat: int | None, spectator: bool) -> dict[str, Any]:
        if seat is None and not spectator:
            return game.view()
        return game.view(seat=seat, spectator=spectator)

    def mark_sealed(self, view: dict[str, Any], seats: list[int],
                    own: str | None = None) -> dict[str, Any]:
        return view

    def winners(self, game: Race) -> list[str] | None:
        return list(game.state.winners) if game.is_over else None

    def bot_move(self, game: Race, seat: int | None = None) -> str:
        return choose(game)

    def timeout_move(self, game: Race, mode: str, seat: int | None = None) -> str:
        if mode == "pass":
            options = game.options()
            for passive in PASSIVE_INPUTS:
                if passive in options:
                    return passive
        return choose(game)

    def same_turn(self, first: dict[str, Any], now: dict[str, Any]) -> bool:
        """A Titan's turn is the pick of its die, the first round's start, its moves and its
        end."""
        return (now.get("kind") in ("start", "turn")
                and first.get("kind") in ("pick", "start", "turn")
                and now.get("titan") == first.get("titan"))

    def clock_kind(self, pending: dict[str, Any]) -> ClockKind:
        """Reactions and pirates are quick; a turn's start and moves go on after its pick."""
        kind = pending.get("kind")
        if kind in QUICK_DECISIONS:
            return QUICK
        return CONTINUES if kind in ("start", "turn") else TURN

    def redact_outcomes(self, outcomes: list[list[str]]) -> list[list[str]]:
        """Dice are public once rolled; a shuffled deck's order and a stolen card are not."""
        hidden = {"shuffle": "shuffle", "steal": "steal a card"}
        return [[hidden.get(o.split(" ", 1)[0], o) for o in part] for part in outcomes]

    def public_input(self, text: str) -> str:
        """Every Titan Race input is public."""
        return text


RULESETS: dict[str, Ruleset] = {TitanRaceRuleset.name: TitanRaceRuleset()}
DEFAULT_CIRCUITS = list(BUILT_IN)


PASSIVE_INPUTS = ("pass", "lose", "end")
"""Inputs that decline what a decision offers, in the order a timeout prefers them."""


def ruleset(name: str) -> Ruleset:
    """The rules of game ``name``. The Great Race's are registered when first asked for: their
    module builds on this one."""
    if name == "great-race" and name not in RULESETS:
        from .greatrace.ruleset import GreatRaceRuleset

        RULESETS[name] = GreatRaceRuleset()
    try:
        return RULESETS[name]
    except KeyError:
        raise SetupError(f"unknown ruleset '{name}'") from None
