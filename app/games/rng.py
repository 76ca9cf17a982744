"""The random sources of both games' engines, each a value whose whole state serialises exactly.

- :class:`KeyedRng` deals every game created since fair dealing came in: HMAC-SHA256 of a
  256-bit key in counter mode, one counter per purpose (``deck``, ``dice``, ``bag`` …), so that no
  number of seen outcomes tells the next one, and drawing for one purpose never shifts another.
- :class:`Rng` (SplitMix64 from one integer) deals the games created before, the games an admin
  dealt from a chosen seed, and the engine scenarios: fast and identical on every platform, but
  its seed can be found from a few outcomes, so it is never used for a secret deal.

Both draw uniformly (rejection sampling, no modulo bias in :class:`KeyedRng`) and shuffle with
Fisher-Yates; the engines name the purpose of every draw.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from dataclasses import dataclass
from typing import Any, TypeVar

T = TypeVar("T")
_MASK = (1 << 64) - 1
KEYED_SCHEME = "hmac-sha256"
SPLITMIX_SCHEME = "splitmix64"


class Rng:
    """SplitMix64: the older generator, kept so old logs replay and scenarios stay exact."""

    __slots__ = ("state",)
    scheme = SPLITMIX_SCHEME

    def __init__(self, seed: int = 0) -> None:
        self.state = seed & _MASK

    def next64(self) -> int:
        self.state = (self.state + 0x9E3779B97F4A7C15) & _MASK
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
        return z ^ (z >> 31)

    def below(self, n: int, purpose: str = "") -> int:
        """A uniform integer in ``range(n)`` (n is tiny here, so modulo bias is negligible);
        one stream serves every purpose."""
        return self.next64() % n

    def shuffle(self, items: list[T], purpose: str = "") -> None:
        for i in range(len(items) - 1, 0, -1):
            j = self.below(i + 1)
            items[i], items[j] = items[j], items[i]

    def copy(self) -> Rng:
        return Rng(self.state)

    def to_json(self) -> int:
        return self.state


class KeyedRng:
    """HMAC-SHA256(key, ``purpose:n``) for the n-th block of a purpose's stream.

    The state is the key and how many blocks each purpose has drawn: whoever holds the key can
    recompute every outcome (that is how a finished game is checked), and nobody without it
    can tell an outcome to come from those already seen.
    """

    __slots__ = ("drawn", "key")
    scheme = KEYED_SCHEME

    def __init__(self, key: bytes, drawn: dict[str, int] | None = None) -> None:
        if len(key) < 32:
            raise ValueError("a keyed random source needs a key of at least 256 bits")
        self.key = key
        self.drawn: dict[str, int] = dict(drawn or {})

    def block(self, purpose: str) -> int:
        """The next 64-bit number of ``purpose``'s stream."""
        if not purpose:
            raise ValueError("every draw from a keyed source names its purpose")
        n = self.drawn.get(purpose, 0)
        self.drawn[purpose] = n + 1
        digest = hmac.new(self.key, f"{purpose}:{n}".encode(), hashlib.sha256).digest()
        return int.from_bytes(digest[:8], "big")

    def below(self, n: int, purpose: str = "") -> int:
        """A uniform integer in ``range(n)``: numbers past the last whole multiple of ``n``
        are drawn again, so every value is exactly as likely."""
        if n < 1:
            raise ValueError("nothing to draw from")
        limit = (1 << 64) - (1 << 64) % n
        while True:
            value = self.block(purpose)
            if value < limit:
                return value % n

    def shuffle(self, items: list[T], purpose: str = "") -> None:
        for i in range(len(items) - 1, 0, -1):
            j = self.below(i + 1, purpose)
            items[i], items[j] = items[j], items[i]

    def copy(self) -> KeyedRng:
        return KeyedRng(self.key, self.drawn)

    def to_json(self) -> dict[str, Any]:
        return {"scheme": KEYED_SCHEME, "key": self.key.hex(), "drawn": dict(sorted(
            self.drawn.items()))}


RandomSource = Rng | KeyedRng


def rng_from_json(data: Any) -> RandomSource:
    """A random source read back from a state's JSON (an integer: the older SplitMix64)."""
    if isinstance(data, int) and not isinstance(data, bool):
        return Rng(data)
    if isinstance(data, dict) and data.get("scheme") == KEYED_SCHEME:
        drawn = data.get("drawn", {})
        if not isinstance(drawn, dict) or not all(
                isinstance(k, str) and isinstance(v, int) for k, v in drawn.items()):
            raise ValueError("a keyed random source counts its draws per purpose")
        return KeyedRng(bytes.fromhex(str(data["key"])), drawn)
    raise ValueError("unknown random source in the state")


@dataclass(frozen=True)
class Dealing:
    """Where a new game's chance comes from: a key (fair dealing) or a seed (a chosen seed, a
    scenario, or a game created before keys)."""

    seed: int = 0
    key: bytes | None = None

    def source(self) -> RandomSource:
        """The generator the game's state carries (deck, bag, dice, first player)."""
        return KeyedRng(self.key) if self.key is not None else Rng(self.seed)

    def setup_source(self, legacy_salt: int) -> RandomSource:
        """The generator of the set-up's own choices (random Titans or crews): its own streams
        of the key, or, for a seed, the salted seed the older games used."""
        return KeyedRng(self.key) if self.key is not None else Rng(self.seed ^ legacy_salt)


def view_seed(view: Any) -> int:
    """A 64-bit seed read from a seat's view of a game (JSON data: what the seat may see, and
    nothing else): the computer players draw their sampled worlds from it, so that two games the
    seat cannot tell apart get the same answer, and no draw of theirs depends on a hidden card,
    tile or die."""
    text = json.dumps(view, sort_keys=True, separators=(",", ":"))
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")
