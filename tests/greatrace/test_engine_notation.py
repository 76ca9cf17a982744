"""The Great Race notation: every input has one canonical form, and bad ones say why."""

from __future__ import annotations

import pytest

from app.games.errors import InvalidInputError
from app.games.greatrace.engine.notation import all_plans, normalise

CANONICAL = [
    ("plan french M2 P1 F2", "plan french P1 M2 F2"),
    ("PLAN Belgian f5", "plan belgian F5"),
    ("plan m2 p2 s1", "plan P2 M2 S1"),
    ("plan italian s1 m1 p1 f2 ", "plan italian P1 M1 S1 F2"),
    ("take  Militia", "take militia"),
    ("take", "take"),
    ("discard jerrycan", "discard jerrycan"),
    ("buy 3", "buy 3"),
    ("buy e", "buy E"),
    ("play saboteur English", "play saboteur english"),
    ("play trail-hunter e4 d3", "play trail-hunter D3 E4"),
    ("play trail-hunter e4", "play trail-hunter E4"),
    ("play con-artist K6 a4", None),
    ("play con-artist G3 F2", "play con-artist F2 G3"),
    ("play spare-parts c", "play spare-parts C"),
    ("play toolbox c2 e1", "play toolbox E1 C2"),
    ("play toolbox C3 E0", "play toolbox C3"),
    ("guard", "guard"),
    ("guard e2", "guard E2"),
    ("place P1D1X f4", "place p1d1x F4"),
    ("go e3", "go E3"),
    ("go dakar", "go A4"),
    ("damage c2", "damage C2"),
    ("damage C1 E1", "damage E1 C1"),
    ("keep militia driver", "keep driver militia"),
    ("  pass ", "pass"),
    ("leader", "leader"),
]
REFUSED = [
    ("", "empty"),
    ("fly E2", "not an input"),
    ("plan french P1 M1", "exactly 5"),
    ("plan dutch F5", "not a crew"),
    ("plan french P1 P2 F2", "twice"),
    ("take banana", "not a resource card"),
    ("buy 0", "at least 1"),
    ("buy lots", "not a number"),
    ("play", "Name a card"),
    ("play saboteur", "target"),
    ("play con-artist E2", "2 tile spaces"),
    ("play trail-hunter E2 E2", "two different"),
    ("play toolbox E1 C1", "add up to 3"),
    ("play financial now", "no argument"),
    ("place p9 E2", "not a terrain tile"),
    ("place p1 A1", "not a space"),
    ("go", "one space"),
    ("damage", "where the damage goes"),
    ("damage X2", "E<n> C<n>"),
    ("keep a b c", "keep"),
    ("pass now", "no argument"),
]


@pytest.mark.parametrize(("text", "expected"), CANONICAL)
def test_canonical_forms(text: str, expected: str | None) -> None:
    norm = normalise(text)
    assert norm == (expected if expected is not None else norm)
    assert normalise(norm) == norm


@pytest.mark.parametrize(("text", "reason"), REFUSED)
def test_refused_inputs_say_why(text: str, reason: str) -> None:
    with pytest.raises(InvalidInputError, match=reason):
        normalise(text)


def test_there_are_56_plans_all_canonical() -> None:
    plans = all_plans("english")
    assert len(plans) == len(set(plans)) == 56
    assert all(normalise(plan) == plan for plan in plans)
