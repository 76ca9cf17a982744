"""Where a game's chance comes from: its secret, the commitment every seat is shown, the seats'
contributions and the key every random outcome is drawn from (``docs/fairness.md`` explains it
to players; :mod:`app.features.fairness.records` checks a finished game's record against it).

Commitment version 2 (every game created since it came in):

- At creation the server draws a 256-bit *secret* (or, for an admin's chosen seed, derives it
  from the seed with scrypt, :func:`seed_secret`) and shows every seat the *commitment*:
  SHA-256 of a canonical message holding the secret, the game's id, its ruleset and variant,
  the dealing scheme and whether the seed was chosen (:func:`commitment`). Changing any of
  them afterwards breaks the commitment.
- A contribution the server gives a seat (a computer seat, a browser without JavaScript, an
  invitation not accepted before the start) is not drawn when needed but derived from the
  secret and the seat (:func:`server_contribution`): it is fixed by the commitment before any
  player gives theirs, so the server cannot try values until the deal suits it.
- At the start the key is HMAC-SHA256 of the secret over the rules version the game is dealt
  under and every seat's contribution in seat order (:func:`game_key`); a chosen seed's key
  leaves the contributions and the rules version out, so that the seed deals the same in
  every game (:func:`seeded_key`).

Version 1 (games created before): the commitment is SHA-256 of the secret alone, and the key
mixes the contributions only (:func:`game_key_v1`). Games created before fair dealing have no
commitment and deal with SplitMix64 from a seed (:data:`SPLITMIX_SCHEME`).

This module does no I/O.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from functools import lru_cache
from typing import Any, Final

from app.core.logchain import canonical
from app.games.rng import KEYED_SCHEME, SPLITMIX_SCHEME, Dealing

COMMITMENT_VERSION: Final = 2
"""The commitment new games are given (see the module's docstring)."""
FIRST_COMMITMENT: Final = 1
"""SHA-256 of the secret alone: the games created before version 2 (and records of them that
name no version)."""
KEY_LABEL_V1: Final = b"titanpost deal v1"
COMMITMENT_LABEL: Final = "titanpost commitment v2"
KEY_LABEL: Final = "titanpost deal v2"
SEEDED_KEY_LABEL: Final = "titanpost seeded deal v2"
CONTRIBUTION_LABEL: Final = "titanpost contribution v2"
SEED_SALT: Final = b"titanpost chosen seed v2"
"""scrypt's salt for a chosen seed: fixed (and published here), so that the same seed gives the
same key, thus the same deal, in every game."""
SEED_COST: Final = {"n": 2**17, "r": 8, "p": 1}
"""scrypt's work for a chosen seed: 128 MiB and about a third of a second of one CPU per seed
tried, so that trying every seed below 2^31 takes some 20 CPU-years."""
SEED_MEMORY: Final = 2**28
CONTRIBUTION: Final = re.compile(r"[0-9a-f]{32,128}")
"""A seat's contribution: 16 to 64 random bytes, in lowercase hex."""


def new_secret() -> bytes:
    """A game's secret: 256 bits from the operating system."""
    return secrets.token_bytes(32)


@lru_cache(maxsize=64)
def seed_secret(seed: int) -> bytes:
    """The secret of a game dealt from the admin's chosen ``seed``: scrypt of its decimal
    text, slow on purpose (:data:`SEED_COST`), so that a spectator cannot find a small seed by
    trying them against the commitment or the outcomes seen. (Kept for the process: the same
    seed is the same secret.)"""
    return hashlib.scrypt(str(seed).encode(), salt=SEED_SALT, dklen=32, maxmem=SEED_MEMORY,
                          **SEED_COST)


def commitment_message(*, game: str, ruleset: str, variant: str, seed_chosen: bool,
                       secret: bytes, scheme: str = KEYED_SCHEME) -> bytes:
    """What a version 2 commitment is the SHA-256 of (canonical JSON, keys sorted)."""
    return f"{COMMITMENT_LABEL}\n".encode() + canonical({
        "game": game, "ruleset": ruleset, "variant": variant, "scheme": scheme,
        "seed_chosen": seed_chosen, "secret": secret.hex()}).encode()


def commitment(*, game: str, ruleset: str, variant: str, seed_chosen: bool,
               secret: bytes, scheme: str = KEYED_SCHEME) -> str:
    """What every seat sees from the start (version 2), in hex."""
    return hashlib.sha256(commitment_message(
        game=game, ruleset=ruleset, variant=variant, seed_chosen=seed_chosen, secret=secret,
        scheme=scheme)).hexdigest()


def commitment_v1(secret: bytes) -> str:
    """A version 1 commitment: SHA-256 of the secret alone."""
    return hashlib.sha256(secret).hexdigest()


def server_contribution(secret: bytes, position: int) -> str:
    """The contribution the server gives seat ``position`` (0-based) when the seat gives none:
    derived from the secret, so fixed by the commitment before any player contributes."""
    message = f"{CONTRIBUTION_LABEL}\n{position}".encode()
    return hmac.new(secret, message, hashlib.sha256).hexdigest()


def check_contribution(text: str) -> str:
    """A seat's contribution as given (case aside); ValueError unless it is 32 to 128 hex
    digits."""
    value = text.strip().lower()
    if not CONTRIBUTION.fullmatch(value):
        raise ValueError("a contribution is 32 to 128 hexadecimal digits (16 to 64 random bytes)")
    return value


def game_key(secret: bytes, contributions: list[str], engine_version: int) -> bytes:
    """A version 2 game's key: the secret over the rules version it is dealt under and every
    seat's contribution, in seat order (a record naming another version deals another game)."""
    message = canonical({"label": KEY_LABEL, "engine_version": engine_version,
                         "contributions": contributions})
    return hmac.new(secret, message.encode(), hashlib.sha256).digest()


def seeded_key(secret: bytes) -> bytes:
    """A chosen seed's key: its secret under a label of its own, without the contributions
    nor the rules version, so that the same seed deals the same in every game, before and
    after a rules version that changes no deal (the version a game was dealt under is in its
    dealt state, which the record's genesis hash covers)."""
    message = canonical({"label": SEEDED_KEY_LABEL})
    return hmac.new(secret, message.encode(), hashlib.sha256).digest()


def game_key_v1(secret: bytes, contributions: list[str]) -> bytes:
    """A version 1 game's key: the secret mixed with every contribution, in seat order."""
    message = KEY_LABEL_V1 + b"\n" + "\n".join(contributions).encode()
    return hmac.new(secret, message, hashlib.sha256).digest()


def dealing(scheme: str, *, version: int | None, seed: int = 0, secret: str | None = None,
            contributions: list[str] | None = None, seed_chosen: bool = False,
            engine_version: int = 1) -> Dealing:
    """The dealing of a game as its row (or its record) says: ``version`` is its commitment's
    (None: a game without one)."""
    if scheme == SPLITMIX_SCHEME:
        if version is not None:
            raise ValueError("a game that showed a commitment is dealt from its secret")
        return Dealing(seed=seed)
    if scheme != KEYED_SCHEME:
        raise ValueError(f"unknown dealing scheme '{scheme}'")
    if secret is None or contributions is None:
        raise ValueError("a keyed deal needs the secret and every seat's contribution")
    key = bytes.fromhex(secret)
    if version == COMMITMENT_VERSION:
        return Dealing(key=seeded_key(key) if seed_chosen
                       else game_key(key, contributions, engine_version))
    return Dealing(key=game_key_v1(key, contributions))


def new_dealing(game: str, ruleset: str, variant: str, seed: int | None) -> dict[str, Any]:
    """A new game's dealing columns: its secret (drawn, or derived from the admin's chosen
    ``seed``) and the version 2 commitment to it and to the game's facts."""
    secret = new_secret() if seed is None else seed_secret(seed)
    chosen = seed is not None
    return {"seed": seed or 0, "rng_scheme": KEYED_SCHEME, "seed_chosen": chosen,
            "dealing_secret": secret.hex(), "commitment_version": COMMITMENT_VERSION,
            "committed_uid": game,
            "dealing_commitment": commitment(game=game, ruleset=ruleset, variant=variant,
                                             seed_chosen=chosen, secret=secret)}
