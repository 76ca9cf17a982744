"""The import arrows of app/ and cli/ point one way, and no module grows past 1,000 lines.

Every module is parsed with :mod:`ast` (nothing is imported), and every import is counted
wherever it stands: at the top, inside a function, under ``if TYPE_CHECKING:``. An import names
the module it reads from: ``from a.b import c`` is an arrow to ``a.b.c`` when that is a module,
else to ``a.b`` (a package's ``__init__``). The packages a module sits in are not arrows of their
own (Python runs them first, but they are not what the module asks for).

- No cycle between modules of app/: a cycle means neither module can be read, changed or
  tested without the other.
- A game's engine (``app/games/**/engine/``) is pure: it imports the standard library and
  ``app.games`` only. Nothing in ``app/games/`` imports the layers above it (the service, the
  pages, the API, the mail, the database) nor the web and database libraries.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("app", "cli")
LONGEST = 1000

CYCLES_ALLOWED: frozenset[frozenset[str]] = frozenset()
"""Import cycles tolerated, each the set of its modules: none, and a new one fails the test."""

IMPURE_ENGINE_ALLOWED: frozenset[tuple[str, str]] = frozenset()
"""Imports of an engine from outside the standard library and app.games that are tolerated,
as (importing module, imported module): none."""

PENDING_SPLIT: frozenset[str] = frozenset()
"""Modules (or folders, ending in /) not held to :data:`LONGEST` lines: none."""

ABOVE_THE_GAMES = ("app.service", "app.web", "app.mail", "app.features", "app.listeners",
                   "app.core.models", "app.core.db", "flask", "sqlalchemy", "sqlmodel")
"""What no module of app/games/ may import (each name and every module under it)."""


@dataclass(frozen=True)
class Arrow:
    """``source`` imports ``target`` at line ``line`` of ``path``."""

    source: str
    target: str
    path: str
    line: int

    def __str__(self) -> str:
        return f"{self.path}:{self.line} {self.source} -> {self.target}"


def module_paths() -> dict[str, Path]:
    """Every module of app/ and cli/ by its dotted name."""
    found: dict[str, Path] = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


MODULES = module_paths()


def _is_package(name: str) -> bool:
    return MODULES[name].name == "__init__.py"


def _resolve(source: str, node: ast.ImportFrom) -> str:
    """The absolute name of the module a ``from ... import`` reads from."""
    if node.level == 0:
        return node.module or ""
    base = source.split(".")
    if not _is_package(source):
        base.pop()
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _targets(source: str, node: ast.Import | ast.ImportFrom) -> Iterator[str]:
    if isinstance(node, ast.Import):
        for alias in node.names:
            yield alias.name
        return
    module = _resolve(source, node)
    for alias in node.names:
        submodule = f"{module}.{alias.name}"
        yield submodule if submodule in MODULES else module


@cache
def arrows() -> list[Arrow]:
    """Every import of every module of app/ and cli/, at any depth of its code (read on first
    need, once a process: every xdist worker collects this module, one runs its tests)."""
    found: set[Arrow] = set()
    for source, path in MODULES.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        relative = str(path.relative_to(ROOT))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import | ast.ImportFrom):
                found.update(Arrow(source, target, relative, node.lineno)
                             for target in _targets(source, node))
    return sorted(found, key=str)



def _inside(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


def cycles(edges: dict[str, set[str]]) -> list[set[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[set[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(edges.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.add(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(component)

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 10 * len(MODULES)))
    try:
        for node in sorted(edges):
            if node not in index:
                visit(node)
    finally:
        sys.setrecursionlimit(limit)
    return found


def test_the_scan_sees_imports_at_every_depth() -> None:
    """The scan finds the imports this test knows are there, wherever they stand: one inside a
    function (the fairness check replays a log only when asked), one under ``if
    TYPE_CHECKING:`` (the registry's types) and relative ones at the top of a module (a module
    of a package, and a name of a package's ``__init__``)."""
    pairs = {(a.source, a.target) for a in arrows()}
    assert ("app.features.fairness.records", "app.service.logreplay") in pairs
    assert ("app.games", "app.games.base") in pairs
    assert ("app.service", "app.service.moves") in pairs
    assert ("app.web.api.games", "app.service") in pairs
    assert len(MODULES) > 100


def test_cycles_are_found() -> None:
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": {"e"}}
    assert cycles(edges) == [{"a", "b", "c"}]


def _app_edges() -> dict[str, set[str]]:
    edges: dict[str, set[str]] = {}
    for arrow in arrows():
        inside = _inside(arrow.source, "app") and arrow.target in MODULES
        if inside and arrow.source != arrow.target:
            edges.setdefault(arrow.source, set()).add(arrow.target)
    return edges


def test_no_import_cycle_in_app() -> None:
    found = [frozenset(c) for c in cycles(_app_edges()) if frozenset(c) not in CYCLES_ALLOWED]
    where = [
        ", ".join(sorted(c)) + ":\n    " + "\n    ".join(
            str(a) for a in arrows() if a.source in c and a.target in c)
        for c in found
    ]
    assert not found, "import cycles:\n" + "\n".join(where)


def test_every_allowance_is_still_needed() -> None:
    """An allowance whose cycle or import is gone is removed, so that it cannot come back."""
    found = {frozenset(c) for c in cycles(_app_edges())}
    assert found >= CYCLES_ALLOWED, f"no longer cycles: {set(CYCLES_ALLOWED - found)}"
    pairs = {(a.source, a.target) for a in arrows()}
    assert pairs >= IMPURE_ENGINE_ALLOWED, f"gone: {set(IMPURE_ENGINE_ALLOWED - pairs)}"
    gone = {entry for entry in PENDING_SPLIT if not (ROOT / entry).exists()}
    assert not gone, f"split already (remove from PENDING_SPLIT): {gone}"


def _stdlib(name: str) -> bool:
    return name.split(".")[0] in sys.stdlib_module_names or name == "__future__"


def test_engines_import_only_the_standard_library_and_app_games() -> None:
    wrong = [a for a in arrows()
             if _inside(a.source, "app.games") and "engine" in a.source.split(".")
             and not (_stdlib(a.target) or _inside(a.target, "app.games"))
             and (a.source, a.target) not in IMPURE_ENGINE_ALLOWED]
    assert not wrong, "impure engine imports:\n" + "\n".join(map(str, wrong))


def test_games_import_no_layer_above_them() -> None:
    wrong = [a for a in arrows() if _inside(a.source, "app.games")
             and any(_inside(a.target, above) for above in ABOVE_THE_GAMES)]
    assert not wrong, "app/games/ imports from above:\n" + "\n".join(map(str, wrong))


def _pending(relative: str) -> bool:
    return any(relative == p or (p.endswith("/") and relative.startswith(p))
               for p in PENDING_SPLIT)


def test_no_module_is_longer_than_1000_lines() -> None:
    lengths = {}
    for path in MODULES.values():
        relative = str(path.relative_to(ROOT))
        if not _pending(relative):
            with path.open(encoding="utf-8") as handle:
                lengths[relative] = sum(1 for _ in handle)
    assert len(lengths) > 100
    long = {relative: n for relative, n in lengths.items() if n > LONGEST}
    assert not long, f"split these by what they do (lines): {long}"


LONGEST_OUTSIDE_THE_GAMES = 600
"""A module outside app/games/ says one thing: a newcomer reads it whole."""

PENDING_SPLIT_OUTSIDE_THE_GAMES: frozenset[str] = frozenset()
"""Modules outside app/games/ still over :data:`LONGEST_OUTSIDE_THE_GAMES` lines: none, and a
new one fails the test."""



def test_no_module_outside_the_games_is_longer_than_600_lines() -> None:
    lengths = {}
    for path in MODULES.values():
        relative = str(path.relative_to(ROOT))
        if not relative.startswith("app/games/"):
            with path.open(encoding="utf-8") as handle:
                lengths[relative] = sum(1 for _ in handle)
    long = {relative: n for relative, n in lengths.items()
            if n > LONGEST_OUTSIDE_THE_GAMES and relative not in PENDING_SPLIT_OUTSIDE_THE_GAMES}
    assert not long, f"split these by what they do (lines): {long}"
    done = {relative for relative in PENDING_SPLIT_OUTSIDE_THE_GAMES
            if lengths.get(relative, 0) <= LONGEST_OUTSIDE_THE_GAMES}
    assert not done, f"no longer pending, remove from the list: {done}"


def underscore_imports(source: str) -> list[tuple[int, list[str]]]:
    """The ``from m import _name`` of a module's source: (line, the underscore names)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.module != "__future__":
            names = [a.name for a in node.names
                     if a.name.startswith("_") and not a.name.startswith("__")]
            if names:
                found.append((node.lineno, names))
    return found


def test_the_underscore_scan_finds_them() -> None:
    source = "from __future__ import annotations\nfrom .layout import _attr, text\n"
    assert underscore_imports(source) == [(2, ["_attr"])]


def test_no_module_imports_another_modules_underscore_names() -> None:
    """A module's underscore names are its own: what another module needs is public."""
    wrong = [f"{path.relative_to(ROOT)}:{line} {names}" for path in MODULES.values()
             for line, names in underscore_imports(path.read_text(encoding="utf-8"))]
    assert not wrong, "\n".join(wrong)


ABOVE_THE_CORE = ("app.service", "app.web", "app.mail", "app.features", "app.listeners", "cli")
"""What no module of app/core/ may import: the core is what every part stands on."""


def test_the_core_imports_no_layer_above_it() -> None:
    wrong = [a for a in arrows() if _inside(a.source, "app.core")
             and any(_inside(a.target, above) for above in ABOVE_THE_CORE)]
    assert not wrong, "app/core/ imports from above:\n" + "\n".join(map(str, wrong))
