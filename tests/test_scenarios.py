"""Scenario oracle: every file in tests/scenarios/ is run like `titanpost engine run FILE`.

Each scenario file is in the ENGINE-INTERFACE scenario format plus two keys the engine ignores:
`description` (the rule checked) and `expect`, which this module checks:

    "expect": {
        "exit": 0,                      # or 2 for an illegal input (default 0)
        "state": {...},                 # recursive subset of the printed state view
        "error": {"input": N, "legal_includes": [...], "legal_excludes": [...]},
        "options_include": [...], "options_exclude": [...],
        "options_include_prefix": [...], "options_exclude_prefix": [...]
    }

In `state`, dicts are matched as subsets, lists and scalars must be equal. A key `X_set` or
`X_sorted` compares the list `X` ignoring order (e.g. `traps_set`, `dice_sorted`, `winners_set`,
`hand_set`). The option checks look at `state.pending.options` (none when nothing is pending).
A prefix check passes when some option starts with the prefix (include) or none does (exclude);
it is used where the interface leaves open whether an option lists its arguments.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from app.games.titanrace.engine.scenario import run_scenario_file

SCENARIO_DIR = Path(__file__).parent / "scenarios"
SCENARIOS = sorted(SCENARIO_DIR.glob("*.json"))
UNORDERED_SUFFIXES = ("_set", "_sorted")


def subset_mismatches(expected: dict[str, Any], actual: Any, where: str) -> list[str]:
    """List every way `actual` fails to contain the partial view `expected`."""
    if not isinstance(actual, dict):
        return [f"{where}: expected an object, got {actual!r}"]
    problems: list[str] = []
    for key, want in expected.items():
        suffix = next((s for s in UNORDERED_SUFFIXES if key.endswith(s)), None)
        name = key[: -len(suffix)] if suffix else key
        path = f"{where}.{name}"
        if name not in actual:
            problems.append(f"{path}: missing")
            continue
        got = actual[name]
        if suffix:
            if not isinstance(got, list) or sorted(got) != sorted(want):
                problems.append(f"{path}: expected {sorted(want)!r} in any order, got {got!r}")
        elif isinstance(want, dict):
            problems.extend(subset_mismatches(want, got, path))
        elif got != want:
            problems.append(f"{path}: expected {want!r}, got {got!r}")
    return problems


def option_mismatches(expect: dict[str, Any], options: list[str]) -> list[str]:
    include, exclude = expect.get("options_include", []), expect.get("options_exclude", [])
    problems = [f"option {o!r} missing" for o in include if o not in options]
    problems += [f"option {o!r} present" for o in exclude if o in options]
    for prefix in expect.get("options_include_prefix", []):
        if not any(o.startswith(prefix) for o in options):
            problems.append(f"no option starts with {prefix!r}")
    for prefix in expect.get("options_exclude_prefix", []):
        hits = [o for o in options if o.startswith(prefix)]
        if hits:
            problems.append(f"options starting with {prefix!r} present: {hits}")
    return problems


def error_mismatches(want: dict[str, Any], got: dict[str, Any]) -> list[str]:
    problems = []
    if "input" in want and got.get("input") != want["input"]:
        problems.append(f"error.input: expected {want['input']}, got {got.get('input')!r}")
    legal = got.get("legal")
    if not isinstance(legal, list):
        return [*problems, f"error.legal: expected a list, got {legal!r}"]
    problems += [f"legal {o!r} missing" for o in want.get("legal_includes", []) if o not in legal]
    problems += [f"legal {o!r} present" for o in want.get("legal_excludes", []) if o in legal]
    return problems


@pytest.mark.parametrize("path", SCENARIOS, ids=[p.name for p in SCENARIOS])
def test_scenario(path: Path) -> None:
    expect = json.loads(path.read_text(encoding="utf-8"))["expect"]
    code, printed = run_scenario_file(str(path))
    shown = json.dumps(printed, indent=1, sort_keys=True)
    want_exit = expect.get("exit", 0)
    assert code == want_exit, f"exit {code}, expected {want_exit}; printed:\n{shown}"

    problems: list[str] = []
    if want_exit == 2:
        problems += error_mismatches(expect.get("error", {}), printed)
    else:
        problems += subset_mismatches(expect.get("state", {}), printed, "state")
        pending = printed.get("pending") or {}
        problems += option_mismatches(expect, list(pending.get("options") or []))
    assert not problems, "\n".join(problems) + f"\nprinted:\n{shown}"


def test_scenario_files_are_well_formed() -> None:
    """Every scenario carries a description and an expectation the matcher understands."""
    known = {
        "exit",
        "state",
        "error",
        "options_include",
        "options_exclude",
        "options_include_prefix",
        "options_exclude_prefix",
    }
    assert SCENARIOS, "no scenario files found"
    for path in SCENARIOS:
        data = json.loads(path.read_text(encoding="utf-8"))
        assert data.get("description"), f"{path.name}: no description"
        assert set(data["expect"]) <= known, f"{path.name}: unknown expect keys"
        assert {"circuit", "titans", "inputs"} <= set(data), f"{path.name}: incomplete scenario"
