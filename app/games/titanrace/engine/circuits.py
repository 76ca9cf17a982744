"""Circuits: the feature layout of one board, loaded from TOML files and validated.

A game names its boards by built-in name or gives them inline (a mapping shaped as a circuit
file's content): :func:`resolve_circuit` takes only those, never a path, so that nothing sent
to the server makes it read a file of its own. Only the command line, on the admin's own
machine, reads a circuit file it is given (:func:`local_circuit`)."""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, Final

from app.games.errors import CircuitError

from .geometry import ALL_SPACES, DIRECTIONS, FORWARD, ROWS, parse_space, space_name

BONUS: Final = "bonus"
LAVA: Final = "lava"
PIRATES: Final = "pirates"
ICE: Final = "ice"
FIRE_STATUE: Final = "fire_statue"
PENTACLE: Final = "pentacle"
MULTI_RAMP: Final = "multi_ramp"
SUPER_RAMP: Final = "super_ramp"

LIST_KEYS: Final = {
    "bonus": BONUS,
    "lava": LAVA,
    "pirates": PIRATES,
    "ice": ICE,
    "fire_statues": FIRE_STATUE,
    "pentacle": PENTACLE,
    "multi_ramps": MULTI_RAMP,
}
ALLOWED_KEYS: Final = {"name", "super_ramps", *LIST_KEYS}

BUILT_IN: Final = (
    "kaldheira",
    "dead-mans-lagoon",
    "moltenchest",
    "ban-kog",
    "anglieh",
    "estenggaard",
)
TITLES: Final = {
    "kaldheira": "Kaldheira",
    "dead-mans-lagoon": "Dead Man's Lagoon",
    "moltenchest": "Moltenchest",
    "ban-kog": "Ban-Kog",
    "anglieh": "Ang'lieh",
    "estenggaard": "Estenggaard",
}


MAX_NAME: Final = 60
"""The longest circuit name (it heads pages and mails)."""
_SHOWN_NAME = re.compile(r"[A-Za-z0-9' _-]{1,40}")
"""What an unknown circuit name may look like to be quoted back in the refusal (a typo of a
built-in name; never a path)."""


def _index(col: int, row: int) -> int:
    return (row - 1) * 6 + col


@dataclass(frozen=True)
class Circuit:
    """One board's features. ``features`` maps a space name to its feature kind."""

    name: str
    features: dict[str, str]
    super_ramps: dict[str, str] = field(default_factory=dict)
    by_index: tuple[str | None, ...] = field(init=False, repr=False, compare=False)
    ramp_dir: tuple[str | None, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        by_index: list[str | None] = [None] * (ROWS * 6)
        ramp_dir: list[str | None] = [None] * (ROWS * 6)
        for name, kind in self.features.items():
            col, row = parse_space(name)
            by_index[_index(col, row)] = kind
        for name, direction in self.super_ramps.items():
            col, row = parse_space(name)
            ramp_dir[_index(col, row)] = direction
        object.__setattr__(self, "by_index", tuple(by_index))
        object.__setattr__(self, "ramp_dir", tuple(ramp_dir))

    @property
    def title(self) -> str:
        return TITLES.get(self.name, self.name)

    def feature_at(self, col: int, row: int) -> str | None:
        return self.by_index[_index(col, row)]

    def spaces_with(self, kind: str) -> list[str]:
        return [name for name in ALL_SPACES if self.features.get(name) == kind]

    def to_data(self) -> dict[str, Any]:
        """The circuit in file shape (the inverse of :func:`circuit_from_data`)."""
        data: dict[str, Any] = {"name": self.name}
        for key, kind in LIST_KEYS.items():
            spaces = self.spaces_with(kind)
            if spaces:
                data[key] = spaces
        if self.super_ramps:
            data["super_ramps"] = dict(self.super_ramps)
        return data


def circuit_from_data(data: Any, source: str = "circuit") -> Circuit:
    """Validate a circuit given as a mapping (parsed TOML or inline JSON)."""
    if not isinstance(data, dict):
        raise CircuitError(f"{source}: a circuit must be a table/object, not {type(data).__name__}")
    unknown = sorted(set(data) - ALLOWED_KEYS)
    if unknown:
        raise CircuitError(
            f"{source}: unknown key {', '.join(repr(k) for k in unknown)}; "
            f"allowed keys are {', '.join(sorted(ALLOWED_KEYS))}"
        )
    name = data.get("name")
    if not isinstance(name, str) or not name.strip():
        raise CircuitError(f"{source}: 'name' must be a non-empty string")
    if len(name.strip()) > MAX_NAME or not name.strip().isprintable():
        raise CircuitError(f"{source}: 'name' must be at most {MAX_NAME} printable characters "
                           "on one line")
    features: dict[str, str] = {}
    super_ramps: dict[str, str] = {}

    def claim(raw: Any, kind: str, key: str) -> str:
        if not isinstance(raw, str):
            raise CircuitError(f"{source}: '{key}' must list space names, found {raw!r}")
        try:
            col, row = parse_space(raw)
        except ValueError as exc:
            raise CircuitError(f"{source}: '{key}': {exc}") from None
        space = space_name(col, row)
        if space in features:
            raise CircuitError(
                f"{source}: space {space} has two features ({features[space]} and {kind})"
            )
        features[space] = kind
        return space

    for key, kind in LIST_KEYS.items():
        spaces = data.get(key, [])
        if not isinstance(spaces, list):
            raise CircuitError(f"{source}: '{key}' must be a list of spaces")
        for raw in spaces:
            claim(raw, kind, key)
    ramps = data.get("super_ramps", {})
    if not isinstance(ramps, dict):
        raise CircuitError(f"{source}: 'super_ramps' must map spaces to L or R")
    for raw, direction in ramps.items():
        space = claim(raw, SUPER_RAMP, "super_ramps")
        if not isinstance(direction, str) or direction.upper() not in ("L", "R"):
            raise CircuitError(f"{source}: super-ramp {space} must point L or R, not {direction!r}")
        super_ramps[space] = direction.upper()
    circuit = Circuit(name=name.strip(), features=features, super_ramps=super_ramps)
    _check_ice_ends(circuit, source)
    return circuit


def _check_ice_ends(circuit: Circuit, source: str) -> None:
    """Refuse a layout where a slide on ice could never stop (a whole line of ice)."""
    for space in circuit.spaces_with(ICE):
        for direction in FORWARD:
            dc, dy = DIRECTIONS[direction]
            col, row = parse_space(space)
            y = row - 1
            for _ in range(ROWS * 6):
                col, y = (col + dc) % 6, y + dy
                if circuit.feature_at(col, y % ROWS + 1) != ICE:
                    break
            else:
                raise CircuitError(
                    f"{source}: the ice through {space} fills a whole line ({direction}), "
                    "so a slide along it would never stop"
                )


def load_circuit_file(path: str | Path) -> Circuit:
    """Load and validate a user circuit file (TOML)."""
    file = Path(path)
    if file.exists() and not file.is_file():  # (a FIFO or a device would never end)
        raise CircuitError(f"{file}: not a regular file")
    try:
        data = tomllib.loads(file.read_text(encoding="utf-8"))
    except OSError as exc:
        raise CircuitError(f"{file}: cannot read: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise CircuitError(f"{file}: not UTF-8 text") from None
    except tomllib.TOMLDecodeError as exc:
        raise CircuitError(f"{file}: not valid TOML: {exc}") from None
    return circuit_from_data(data, str(file.name))


_BUILT_IN_CACHE: dict[str, Circuit] = {}


def built_in_circuit(name: str) -> Circuit:
    """One of the six circuits shipped with the game, by its slug."""
    slug = name.strip().lower()
    if slug not in BUILT_IN:
        raise CircuitError(unknown_circuit(name))
    if slug not in _BUILT_IN_CACHE:
        text = resources.files(__package__).joinpath(f"circuits/{slug}.toml").read_text("utf-8")
        _BUILT_IN_CACHE[slug] = circuit_from_data(tomllib.loads(text), f"{slug}.toml")
    return _BUILT_IN_CACHE[slug]


def unknown_circuit(name: str) -> str:
    """The refusal of circuit ``name``, which is no built-in one: the name is quoted back only
    when it looks like one (never a path, whatever the file it would name)."""
    shown = f" '{name.strip()}'" if _SHOWN_NAME.fullmatch(name.strip()) else ""
    return (f"unknown circuit{shown}; the built-in circuits are {', '.join(BUILT_IN)} (or give "
            "a circuit object: file paths are not accepted)")


def resolve_circuit(spec: Any) -> Circuit:
    """A circuit from a built-in name or an inline mapping (a circuit file's content), never a
    path: the server reads no file a request names."""
    if isinstance(spec, Circuit):
        return spec
    if isinstance(spec, dict):
        return circuit_from_data(spec, "inline circuit")
    if isinstance(spec, str):
        return built_in_circuit(spec)
    raise CircuitError(f"a circuit is a built-in name or a circuit object, not "
                       f"{type(spec).__name__}")


def local_circuit(given: str) -> Circuit:
    """A circuit named on the admin's own machine (the command line, a scenario file): a
    built-in name, else a TOML file, read here (a game made of it stores it inline)."""
    if given.strip().lower() in BUILT_IN:
        return built_in_circuit(given)
    if not given.endswith(".toml") and not Path(given).is_file():
        raise CircuitError(f"unknown circuit '{given}'; the built-in circuits are "
                           f"{', '.join(BUILT_IN)}, or give a circuit file (FILE.toml)")
    return load_circuit_file(given)
