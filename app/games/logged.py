"""What both games' engines share and that knows nothing of either game's rules: a game kept as
its initial state plus a log of inputs (applied atomically, copied, serialised, replayed and
verified), and an input suspended at a decision: its record, and running it again with one
more answer.

A game plugs in with three class-level functions: how one input steps a state, how a state is
read back from its JSON, and how an input is written in the log. A game whose inputs stop at
decisions inside them states only its rules (:class:`InputRules`: what an input does to the
state they own, raising :class:`Suspend` at a decision not taken yet): :func:`run_input` runs an
input from a state and keeps it suspended there, :func:`resume` goes on with one more answer.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, Protocol, Self, TypeVar

from .errors import EngineError, InputError


class GameState(Protocol):
    """A game's complete state: copied without sharing, and written to JSON without loss."""

    def copy(self) -> Self: ...

    def to_json(self) -> dict[str, Any]: ...


State = TypeVar("State", bound=GameState)
Game = TypeVar("Game")
Check = Callable[[Game, int, str, list[list[str]]], None]
"""Asked before each input of a submission whether it may be applied (see
:meth:`LoggedGame.apply_each`): the game as the input finds it, the input's index and text,
the outcomes of the inputs before it. Raises :class:`InputError` to refuse it."""


class StopBefore(Exception):
    """Raised by a :data:`Check` to end a submission before its input ``index``: the inputs
    before it are applied, the rest is left unplayed (see :meth:`LoggedGame.apply_each`)."""

    def __init__(self, index: int, reason: str) -> None:
        super().__init__(reason)
        self.index = index
        self.reason = reason


@dataclass(slots=True)
class Suspended(Generic[State]):
    """An input whose resolution waits on a decision inside it.

    The engine resumes by running ``input`` again from ``base`` with ``answers`` supplying the
    decisions already taken: resolution is deterministic, so the re-run reaches the same point.
    """

    base: State
    input: str
    answers: list[str]
    reported: int
    """How many random outcomes of this input were already reported (each is reported once)."""

    def to_json(self) -> dict[str, Any]:
        return {
            "base": self.base.to_json(),
            "input": self.input,
            "answers": list(self.answers),
            "reported": self.reported,
        }

    @staticmethod
    def from_json(
        data: dict[str, Any], load: Callable[[dict[str, Any]], State]
    ) -> Suspended[State]:
        """Read a suspended input back, its base state with ``load``."""
        return Suspended(load(data["base"]), data["input"], list(data["answers"]),
                         data["reported"])


class Suspend(Exception):
    """Raised by a game's rules where an input needs a decision not taken yet: ``decision``
    (its kind, who decides, its ``options``...) is what the state then waits on."""

    def __init__(self, decision: dict[str, Any]) -> None:
        super().__init__(decision["kind"])
        self.decision = decision


class Resumable(GameState, Protocol):
    """A state that can wait inside an input: the decision waited on (``window``) and the
    input suspended at it."""

    window: dict[str, Any] | None
    suspended: Suspended[Self] | None


Resumed = TypeVar("Resumed", bound=Resumable)
Rules = TypeVar("Rules", bound="InputRules[Any]")
Owned = TypeVar("Owned", covariant=True)


class InputRules(Protocol[Owned]):
    """A game's rules applying one input to the state they own (:func:`run_input` makes them
    with the state and the answers of the decisions the input has met so far)."""

    @property
    def st(self) -> Owned: ...

    @property
    def outcomes(self) -> list[str]:
        """The random outcomes produced so far, in order."""

    def run(self, text: str) -> None:
        """Apply ``text`` (legal, normalised); :class:`Suspend` at a decision not answered."""


def run_input(
    base: Resumed, text: str, answers: list[str], rules: Callable[[Resumed, list[str]], Rules]
) -> Rules:
    """Run input ``text`` on a copy of ``base`` with ``answers`` to the decisions it meets, by
    the ``rules`` made for that copy; they are returned, their state moved past the input or
    left waiting at the next decision inside it (``window``), the input kept ``suspended``."""
    st = base.copy()
    st.window = None
    st.suspended = None
    run = rules(st, answers)
    try:
        run.run(text)
    except Suspend as pause:
        st.window = pause.decision
        st.suspended = Suspended(base, text, answers, len(run.outcomes))
    return run


def resume(
    st: Resumed, answer: str, rules: Callable[[Resumed, list[str]], Rules]
) -> tuple[Rules, int]:
    """``answer`` given in ``st``: one more answer to the input suspended there, run again from
    its base (resolution is deterministic: it reaches the same decision), else a new input run
    from ``st``. The rules as they ran, and how many of their outcomes were already reported."""
    sus = st.suspended
    if sus is None:
        return run_input(st, answer, [], rules), 0
    return run_input(sus.base, sus.input, [*sus.answers, answer], rules), sus.reported


def answer_input(
    st: Resumed, answer: str, rules: Callable[[Resumed, list[str]], InputRules[Resumed]]
) -> tuple[Resumed, list[str]]:
    """:func:`resume`: the state ``answer`` reaches from ``st``, and the outcomes it produced."""
    run, reported = resume(st, answer, rules)
    return run.st, run.outcomes[reported:]


def run_again(
    sus: Suspended[Resumed], rules: Callable[[Resumed, list[str]], InputRules[Resumed]],
    base: Resumed | None = None,
) -> tuple[Resumed, list[str]]:
    """The suspended input ``sus`` run again with its answers so far, from its base or from
    ``base`` (another deal of it): the state it reaches, and the outcomes it produced that
    ``sus`` had not reported."""
    run = run_input(sus.base if base is None else base, sus.input, list(sus.answers), rules)
    return run.st, run.outcomes[sus.reported:]


class LoggedGame(ABC, Generic[State]):
    """A game: its state, the inputs applied so far with their random outcomes, and the state it
    began from (``initial``), so :meth:`replay` can rebuild the present from the inputs alone."""

    RULESET: ClassVar[str]
    """The ruleset name written in :meth:`to_json`."""
    ENGINE_VERSION: ClassVar[int]
    """Bumped whenever a rule change could make an old log replay differently."""

    def __init__(self, state: State, initial: dict[str, Any] | None = None) -> None:
        self.state = state
        self.initial = initial if initial is not None else state.to_json()
        self.inputs: list[str] = []
        self.outcomes: list[list[str]] = []
        """The random outcomes each input produced."""

    # -------------------------------------------------------------- what a game plugs in

    @staticmethod
    @abstractmethod
    def step(state: State, text: str, /) -> tuple[State, list[str]]:
        """Apply one input to ``state`` (left unchanged); the new state and the outcomes."""

    @staticmethod
    @abstractmethod
    def load_state(data: dict[str, Any], /) -> State:
        """A state from its ``to_json()``."""

    @staticmethod
    @abstractmethod
    def log_form(text: str, /) -> str:
        """How an accepted input is written in the log."""

    def _changed(self) -> None:
        """Called after inputs were applied: a game drops what it cached of the old state."""

    # -------------------------------------------------------------- inputs

    def apply_each(self, text: str, check: Check[Self] | None = None) -> list[list[str]]:
        """Apply one input or several joined with ``;``, atomically; the outcomes of each.

        On a refused input nothing changes and the :class:`InputError` raised names the input's
        index (besides the legal options). ``check``, when given, is asked before each input
        whether it may be applied: it gets the game as that input finds it (the inputs before
        it applied, on a copy: this game is left as it was until every input is in), the
        input's index and text, and the outcomes of the inputs before it; it refuses by raising
        :class:`InputError`, or ends the submission there by raising :class:`StopBefore` (the
        inputs before are applied; the caller sees fewer outcomes than inputs).
        """
        state = self.state
        applied: list[str] = []
        produced: list[list[str]] = []
        for index, part in enumerate(text.split(";")):
            if check is not None:
                try:
                    check(self if index == 0 else self._at(state), index, part, produced)
                except StopBefore:
                    break
            try:
                state, outcomes = self.step(state, part)
            except InputError as exc:
                exc.index = index
                raise
            applied.append(self.log_form(part))
            produced.append(outcomes)
        self.state = state
        self.inputs += applied
        self.outcomes += produced
        self._changed()
        return produced

    def _at(self, state: State) -> Self:
        """This game as it would be in ``state`` (a later state of it), for the queries of a
        :data:`Check`; its log of inputs is not carried over."""
        return type(self)(state, self.initial)

    # -------------------------------------------------------------- persistence

    def copy(self) -> Self:
        """(The outcomes of each input are shared: a list once appended is never changed.)"""
        game = type(self)(self.state.copy(), self.initial)
        game.inputs = list(self.inputs)
        game.outcomes = list(self.outcomes)
        return game

    def to_json(self) -> dict[str, Any]:
        return {
            "ruleset": self.RULESET,
            "engine_version": self.ENGINE_VERSION,
            "initial": self.initial,
            "inputs": list(self.inputs),
            "outcomes": [list(o) for o in self.outcomes],
            "state": self.state.to_json(),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Self:
        game = cls(cls.load_state(data["state"]), data["initial"])
        game.inputs = list(data["inputs"])
        game.outcomes = [list(o) for o in data["outcomes"]]
        return game

    @classmethod
    def from_initial(cls, initial: dict[str, Any]) -> Self:
        """A new game from a state snapshot (``state.to_json()``), which becomes its start."""
        return cls(cls.load_state(initial), initial)

    def replay(self, upto: int | None = None) -> Self:
        """Rebuild the game from its initial state and its first ``upto`` inputs (default all)."""
        game = self.from_initial(self.initial)
        state = game.state
        inputs = self.inputs if upto is None else self.inputs[:upto]
        for text in inputs:
            state, outcomes = self.step(state, text)
            game.outcomes.append(outcomes)
        game.state = state
        game.inputs = list(inputs)
        return game

    def verify(self) -> list[str]:
        """Replay the log; return the disagreements (empty when the replay matches exactly)."""
        try:
            again = self.replay()
        except EngineError as exc:
            return [f"the log does not replay: {exc}"]
        problems = [
            f"input {index} ('{self.inputs[index]}'): recorded random outcomes {mine} but the "
            f"replay produced {theirs}"
            for index, (mine, theirs) in enumerate(zip(self.outcomes, again.outcomes, strict=True))
            if mine != theirs
        ]
        if again.state.to_json() != self.state.to_json():
            problems.append("the replayed state differs from the stored state")
        return problems
