"""Fair dealing: how a game's chance is drawn so that nobody can compute it, and how anyone can
check it once the game is over (``docs/fairness.md`` explains it to players).

At creation the server draws a 256-bit secret from the operating system and shows every seat
its SHA-256, the commitment. Each seat, when taken, gives a contribution of its own (its browser
or the CLI draws it; the server draws one for a seat that gives none). At the start the game's
key is HMAC-SHA256(secret, the contributions in seat order), and every random outcome is
HMAC-SHA256 of that key in counter mode, one stream per purpose (:class:`KeyedRng`). When the
game ends the secret is published; :func:`check_record` recomputes the deal and every outcome
of the log from it and checks the secret against the commitment.

This module does no I/O: it reads and checks plain JSON records.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from dataclasses import dataclass, field
from typing import Any

from app.games.errors import N_
from app.games.rng import KEYED_SCHEME, SPLITMIX_SCHEME, Dealing

RECORD_FORMAT = "titanpost-fairness"
KEY_LABEL = b"titanpost deal v1"
FIRST_VERSION = 1
"""The rules version of a record that names none (records were made without it while every game
played by its ruleset's first rules)."""
CONTRIBUTION = re.compile(r"[0-9a-f]{32,128}")
"""A seat's contribution: 16 to 64 random bytes, in lowercase hex."""


def new_secret() -> bytes:
    """A game's secret: 256 bits from the operating system."""
    return secrets.token_bytes(32)


def new_contribution() -> str:
    """A contribution drawn for a seat that gives none (the CLI draws its own the same way)."""
    return secrets.token_hex(32)


def commitment(secret: bytes) -> str:
    """What every seat sees from the start: SHA-256 of the secret, in hex."""
    return hashlib.sha256(secret).hexdigest()


def check_contribution(text: str) -> str:
    """A seat's contribution as given (case aside); ValueError unless it is 32 to 128 hex
    digits."""
    value = text.strip().lower()
    if not CONTRIBUTION.fullmatch(value):
        raise ValueError("a contribution is 32 to 128 hexadecimal digits (16 to 64 random bytes)")
    return value


def game_key(secret: bytes, contributions: list[str]) -> bytes:
    """The key every random outcome of the game is drawn from: the secret mixed with every
    seat's contribution, in seat order."""
    message = KEY_LABEL + b"\n" + "\n".join(contributions).encode()
    return hmac.new(secret, message, hashlib.sha256).digest()


def dealing(scheme: str, *, seed: int = 0, secret: str | None = None,
            contributions: list[str] | None = None) -> Dealing:
    """The dealing of a game as its row records it."""
    if scheme == SPLITMIX_SCHEME:
        return Dealing(seed=seed)
    if scheme != KEYED_SCHEME:
        raise ValueError(f"unknown dealing scheme '{scheme}'")
    if secret is None or contributions is None:
        raise ValueError("a keyed deal needs the secret and every seat's contribution")
    return Dealing(key=game_key(bytes.fromhex(secret), contributions))


@dataclass
class Report:
    """What :func:`check_record` found: ``problems`` empty means the deal checks out."""

    scheme: str
    moves: int = 0
    outcomes: int = 0
    chosen_seed: bool = False
    committed: bool = False
    problems: list[str] = field(default_factory=list)
    """Each problem in English (``verify-fair --json``)."""
    words: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    """Each problem as its catalogue message and fields, to be said in the reader's language."""

    @property
    def fair(self) -> bool:
        return not self.problems

    def add(self, template: str, **fields: Any) -> None:
        """A problem found: ``template`` (a message id marked with ``N_``) and its fields."""
        self.problems.append(template.format(**fields))
        self.words.append((template, fields))


@dataclass(frozen=True)
class Refusal:
    """An engine's refusal in a problem: English as ``str``, said in a language with ``say``."""

    english: str
    words: tuple[str, dict[str, Any]]

    def __str__(self) -> str:
        return self.english

    def say(self, lang: str | None) -> str:
        from app.i18n import translate

        text, values = self.words
        return translate(lang, text, **{key: value.say(lang) if hasattr(value, "say") else value
                                        for key, value in values.items()})


def check_record(record: dict[str, Any]) -> Report:
    """Recompute the deal and every random outcome of a finished game's log from its published
    secret (or seed), and check them, and the secret, against what the game showed.

    ``record`` is what ``GET /api/games/<id>/fairness`` answers once the game is over, or what
    :func:`record_of_export` makes of an admin export."""
    from app.games import ruleset
    from app.games.base import SeatSetup, SetupError  # (the rules: only when checking)

    scheme = str(record.get("scheme", ""))
    report = Report(scheme=scheme, chosen_seed=bool(record.get("seed_chosen")))
    if record.get("format") != RECORD_FORMAT:
        report.add(N_("not a {format} record"), format=RECORD_FORMAT)
        return report
    if not record.get("published"):
        report.add(N_("the game is not over: its secret is published when it ends"))
        return report
    try:
        deal = _dealing_of(record, report)
        rules = ruleset(str(record["ruleset"]))
        seats = [SeatSetup(int(s["position"]),
                           rules.pieces_from_fields(list(s.get("titans", [])), s.get("team")),
                           {"anytime_windows": bool(s.get("anytime_windows", False))})
                 for s in record["seats"]]
        initial, _ = rules.start(variant=str(record["variant"]),
                                 setup=rules.setup_from_circuits(list(record["circuits"])),
                                 seats=seats, dealing=deal,
                                 version=int(record.get("engine_version", FIRST_VERSION)))
    except (KeyError, TypeError, ValueError, SetupError) as exc:
        report.add(N_("the record cannot be dealt again: {problem}"), problem=str(exc))
        return report
    if "initial_state" in record and record["initial_state"] != initial:
        report.add(N_("the deal at the start is not the one the secret gives"))
    _check_log(rules, initial, record.get("moves", []), report)
    return report


def _dealing_of(record: dict[str, Any], report: Report) -> Dealing:
    scheme = report.scheme
    if scheme == SPLITMIX_SCHEME:
        return dealing(scheme, seed=int(record["seed"]))
    secret = str(record["secret"])
    if commitment(bytes.fromhex(secret)) != record.get("commitment"):
        report.add(N_("the published secret does not match the commitment shown at the start"))
    else:
        report.committed = True
    contributions = [check_contribution(str(c)) for c in record["contributions"]]
    return dealing(scheme, secret=secret, contributions=contributions)


def _check_log(rules: Any, initial: dict[str, Any], moves: list[dict[str, Any]],
               report: Report) -> None:
    from app.games.base import MoveRejected

    from .logreplay import LogReplay

    entries = [(str(m["kind"]), str(m["input"])) for m in moves]
    replay = LogReplay(rules, initial, entries)
    for index, move in enumerate(moves, start=1):
        seq = int(move.get("seq", index))
        try:
            produced = replay.step(seq, str(move["kind"]), str(move["input"]))
        except (MoveRejected, ValueError) as exc:
            problem: Any = str(exc)
            if isinstance(exc, MoveRejected) and exc.words is not None:
                problem = Refusal(exc.message, exc.words)
            report.add(N_("entry {seq} ('{input}') does not replay: {problem}"), seq=seq,
                       input=str(move["input"]), problem=problem)
            return
        report.moves += 1
        if produced is None:
            continue
        report.outcomes += sum(len(part) for part in produced)
        if produced != move.get("outcomes"):
            report.add(N_("entry {seq}: the log shows {logged} but the secret gives {dealt}"),
                       seq=seq, logged=str(move.get("outcomes")), dealt=str(produced))


def record_of_export(export: dict[str, Any]) -> dict[str, Any]:
    """The fairness record of an admin export (``titanpost admin export``; one made before
    version 2 of the format holds ``circuits`` and the seats' ``titans`` and ``team`` itself,
    a newer one the game's ``setup`` and the seats' ``pieces``, which its ruleset maps)."""
    game, seats = export["game"], [_seat_fields(export["game"], s) for s in export["seats"]]
    return {
        "format": RECORD_FORMAT,
        "game": game.get("uid"),
        "published": game.get("initial_state") is not None,  # (the admin holds the secret)
        "ruleset": game["ruleset"],
        "engine_version": game.get("engine_version", FIRST_VERSION),
        "variant": game["variant"],
        "circuits": _circuits(game),
        "scheme": game.get("rng_scheme", SPLITMIX_SCHEME),
        "seed": game.get("seed", 0),
        "seed_chosen": bool(game.get("seed_chosen", False)),
        "commitment": game.get("dealing_commitment"),
        "secret": game.get("dealing_secret"),
        "contributions": [seat.get("contribution") for seat in
                          sorted(seats, key=lambda seat: seat["position"])],
        "seats": game.get("seat_setups") or [  # (a game started before fair dealing)
            {"position": seat["position"], "titans": seat["titans"], "team": seat["team"],
             "anytime_windows": bool(seat.get("notify", {}).get("anytime_windows", False))}
            for seat in seats],
        "initial_state": game.get("initial_state"),
        "moves": [{"seq": m["seq"], "kind": m.get("kind", "move"), "input": m["input"],
                   "outcomes": m["outcomes"]} for m in export["moves"]],
    }


def _circuits(game: dict[str, Any]) -> list[Any]:
    """An exported game's setup in the record's older ``circuits`` field."""
    if "circuits" in game:
        return list(game["circuits"])
    from app.games import ruleset

    return ruleset(str(game["ruleset"])).circuits_of(dict(game["setup"]))


def _seat_fields(game: dict[str, Any], seat: dict[str, Any]) -> dict[str, Any]:
    """An exported seat with its pieces in the record's older ``titans`` and ``team``."""
    if "titans" in seat:
        return seat
    from app.games import ruleset

    return seat | ruleset(str(game["ruleset"])).fields_of(dict(seat["pieces"]))
