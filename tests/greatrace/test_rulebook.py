"""Rulebook oracle for The Great Race: its scenario files (tests/greatrace/scenarios/) are run
and checked by the shared oracle of every game (tests/test_scenarios.py), which finds them
through the game's test fixture (tests/greatrace/fixture.py). Each file is in the scenario format
of docs/great-race-engine.md (``"game": "great-race"``) plus ``description``, naming the rule
and the section of docs/great-race-rules.md it checks, and ``expect``.

The file names say where each rule comes from: ``example-*`` the rulebook's worked examples,
``faq-*`` its FAQ answers, ``turn-*`` whole game turns, ``setup-*`` the set-up, ``card-*`` single
resource cards, ``leader-*`` the Leader module, ``illegal-*`` refused inputs. What is checked here
is this game's own: how many of each kind there are.
"""

from __future__ import annotations

from tests.greatrace.fixture import FIXTURE


def test_rulebook_coverage() -> None:
    """The brief's floor: the rulebook's examples, its FAQ, whole turns and ten refusals."""
    names = [path.name for path in sorted(FIXTURE.scenarios.glob("*.json"))]
    counts = {kind: sum(name.startswith(kind) for name in names)
              for kind in FIXTURE.scenario_kinds}
    assert counts["example-"] >= 15, counts
    assert counts["faq-"] >= 20, counts
    assert counts["turn-"] >= 2, counts
    assert counts["illegal-"] >= 10, counts
