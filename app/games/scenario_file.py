"""Scenario files of every game, apart from what a scenario sets up: reading the file, its
inputs, applying them, and the two answers ``titanpost engine run`` / ``engine options`` print.

Each game's scenario module builds its position (``load_scenario``) and gets its four scenario
functions here (:class:`ScenarioCommands`: ``app/games/titanrace/engine/scenario.py``,
``app/games/greatrace/engine/scenario.py``).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, Protocol, TypeVar

from .errors import InputError, ScenarioError

Outcome = tuple[int, dict[str, Any]]
"""An exit code and what is printed: 0 and the state view, 2 and an illegal input's error (with
the state view the game was left in), 1 and a malformed scenario's error."""


class ScenarioGame(Protocol):
    def apply(self, text: str) -> list[str]: ...

    def view(self, seat: int | None = None) -> dict[str, Any]: ...


class UnknownSeat(ValueError):
    """The seat whose view is asked for (``engine run --view SEAT``) is not in the game."""

    def __init__(self, seat: int, seats: list[int]) -> None:
        listed = ", ".join(map(str, seats))
        super().__init__(f"seat {seat} is not in this game (its seats: {listed})")
        self.seat = seat
        self.seats = seats


def check_seat(seat: int | None, seats: list[int]) -> None:
    """Refuse (:class:`UnknownSeat`) a viewing ``seat`` that is not one of ``seats``."""
    if seat is not None and seat not in seats:
        raise UnknownSeat(seat, sorted(seats))


def fail(message: str) -> ScenarioError:
    return ScenarioError(f"scenario: {message}")


def read_scenario(path: str) -> Any:
    """The JSON of scenario file ``path`` (``-``: standard input)."""
    try:
        text = sys.stdin.read() if path == "-" else Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise fail(f"cannot read {path}: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise fail(f"{path} is not UTF-8 text") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise fail(f"{path} is not valid JSON: {exc}") from None


def scenario_inputs(data: dict[str, Any]) -> list[str]:
    """The scenario's ``inputs``: one string or a list of them."""
    inputs = data.get("inputs", [])
    if isinstance(inputs, str):
        inputs = [inputs]
    if not isinstance(inputs, list) or any(not isinstance(i, str) for i in inputs):
        raise fail("inputs must be a list of strings")
    return inputs


def play_inputs(game: ScenarioGame, inputs: list[str], seat: int | None = None) -> Outcome:
    """Apply the inputs in turn: ``(0, state view)``, or ``(2, error)`` at the first refused,
    the error carrying the state view the game was left in (a refused input changes nothing).

    The view is the full one, or what ``seat`` sees when it is given (other hands as counts,
    sealed plans hidden...)."""
    for index, text in enumerate(inputs):
        try:
            game.apply(text)
        except InputError as exc:
            return 2, {"error": exc.message, "input": index, "legal": exc.legal,
                       "state": game.view(seat)}
    return 0, game.view(seat)


def pending_only(outcome: Outcome) -> Outcome:
    """What ``engine options`` prints: the view's pending decision with its options."""
    code, result = outcome
    if code != 0:
        return code, result
    pending = result["pending"]
    return 0, pending if pending is not None else {"kind": None, "options": []}


def run_file(path: str, run: Callable[[Any], Outcome]) -> Outcome:
    """Read scenario file ``path`` and ``run`` it; a malformed scenario exits 1 with its error."""
    try:
        return run(read_scenario(path))
    except ScenarioError as exc:
        return 1, {"error": str(exc)}


Loaded = TypeVar("Loaded", bound=ScenarioGame)


@dataclass(frozen=True)
class ScenarioCommands(Generic[Loaded]):
    """A game's scenario functions (its engine's ``run_scenario``, ``scenario_options``,
    ``run_scenario_file`` and ``scenario_options_file``), from what the game states: how it
    sets a scenario up (``load``: the game and the scenario's inputs; :class:`ScenarioError`
    for a malformed scenario) and which seats a game of it has (``seats``)."""

    load: Callable[[Any], tuple[Loaded, list[str]]]
    seats: Callable[[Loaded], list[int]]

    def run_scenario(self, data: Any, seat: int | None = None) -> Outcome:
        """Load a scenario and apply its inputs: ``(0, state view)`` or ``(2, error)``; the
        view is what ``seat`` sees when given (:class:`UnknownSeat` for a seat not in the
        game). A malformed scenario raises :class:`ScenarioError`."""
        game, inputs = self.load(data)
        check_seat(seat, self.seats(game))
        return play_inputs(game, inputs, seat)

    def scenario_options(self, data: Any) -> Outcome:
        """The pending decision with its options after the scenario's inputs."""
        return pending_only(self.run_scenario(data))

    def run_scenario_file(self, path: str, seat: int | None = None) -> Outcome:
        """What ``titanpost engine run FILE [--view SEAT]`` prints, with its exit code."""
        return run_file(path, lambda data: self.run_scenario(data, seat))

    def scenario_options_file(self, path: str) -> Outcome:
        """What ``titanpost engine options FILE`` prints: the pending decision with its
        options."""
        return run_file(path, self.scenario_options)
