"""The fairness record's tamper matrix (issue 36): every field of a finished game's record, and
every field of an admin export the record is made from, changed as a dishonest operator would,
fails ``check_record`` (the check ``titanpost verify-fair`` runs) with a reason that names what
is wrong; the fields the matrices cover are exactly the record's and the export's, so that a
field added later cannot be forgotten.

The records are of finished games on SQLite and PostgreSQL: a Titan Race and a Great Race dealt
from a fresh secret, and a Titan Race dealt from the admin's chosen seed. Some forgeries are
tried twice: as written, and with the log's hash chain recomputed after the change (anyone can
hash), which the check must still see through from the deal, the outcomes or the ending.
"""

from __future__ import annotations

import copy
import re
import uuid
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

import pytest

from app.core.logchain import move_hash, timestamp
from app.features.fairness.records import (
    ENTRY_FIELDS,
    PUBLISHED_FIELDS,
    SUMMARY_FIELDS,
    check_record,
    record_of_export,
)
from app.games.greatrace.ruleset import PURPLE
from app.service import GameService

pytest_plugins = ["tests.apifixtures"]

Record = dict[str, Any]
Change = Callable[[Record], None]

OTHER_START = {"titan-race": ["ban-kog"], "great-race": [PURPLE[1]]}
"""Another valid set-up of each game (the record's ``circuits``)."""

COMMITMENT = "commitment shown at the start is not"
DEAL = "deal at the start is not"


def _other_id() -> str:
    return uuid.uuid4().hex


def _rechain(record: Record) -> None:
    """Recompute the log's hash chain, its length and head after a change, as a forger who
    knows that anyone can hash would."""
    previous = record["genesis_hash"]
    for move in record["moves"]:
        move["prev_hash"] = previous
        move["hash"] = previous = move_hash(
            previous, move["seq"], move["seat"], move["input"], move["outcomes"],
            datetime.fromisoformat(move["created_at"]), move["kind"], move["actor"])
    record["length"] = len(record["moves"])
    record["head"] = {"seq": len(record["moves"]), "hash": previous}


def _random_entry(record: Record) -> int:
    """The index of the first log entry with a random outcome."""
    return next(i for i, m in enumerate(record["moves"]) if any(m["outcomes"]))


def _other_version(record: Record) -> None:
    version = int(record["engine_version"])
    record["engine_version"] = version - 1 if version > 1 else version + 1


def _cut(entries: int) -> Change:
    def change(record: Record) -> None:
        record["moves"] = record["moves"][:-entries] if entries else []
        _rechain(record)
    return change


def _shift_seqs(record: Record) -> None:
    for move in record["moves"]:
        move["seq"] += 1
    _rechain(record)


def _seed_tamper(record: Record) -> None:
    record["seed"] = 7 if record["seed"] is None else record["seed"] + 1


def _set(name: str, value: Any) -> Change:
    def change(record: Record) -> None:
        record[name] = value
    return change


def _entry(name: str, change: Callable[[dict[str, Any]], Any], *,
           rechained: bool = False) -> Change:
    """Change field ``name`` of the first entry with a random outcome."""
    def apply(record: Record) -> None:
        move = record["moves"][_random_entry(record)]
        move[name] = change(move)
        if rechained:
            _rechain(record)
    return apply


def _later(move: dict[str, Any]) -> str:
    return timestamp(datetime.fromisoformat(move["created_at"]) + timedelta(seconds=1))


TAMPERS: dict[str, list[tuple[str, Change, str]]] = {
    "format": [("another format", _set("format", "titanpost-game"), "not a titanpost-fairness")],
    "record_version": [("an older version", _set("record_version", 1), "record of version 1")],
    "game": [("another game's id", lambda r: r.update(game=_other_id()), COMMITMENT)],
    "ruleset": [("the other game", lambda r: r.update(
        ruleset="great-race" if r["ruleset"] == "titan-race" else "titan-race"), COMMITMENT)],
    "engine_version": [("another rules version", _other_version,
                        f"{DEAL}|cannot be dealt again")],
    "variant": [("another variant", _set("variant", "relay"), COMMITMENT)],
    "status": [("abandoned, not finished", _set("status", "abandoned"), "ends in a win"),
               ("still running", _set("status", "active"), "not over")],
    "published": [("not published", _set("published", False), "not over")],
    "scheme": [("the older generator with a seed", lambda r: r.update(
        scheme="splitmix64", seed=5), "showed a commitment, but the record deals it from a seed")],
    "commitment_version": [("version 1", _set("commitment_version", 1), COMMITMENT),
                           ("none", _set("commitment_version", None), COMMITMENT)],
    "commitment": [("another commitment", _set("commitment", "11" * 32), COMMITMENT)],
    "seed_chosen": [("flipped", lambda r: r.update(seed_chosen=not r["seed_chosen"]),
                     COMMITMENT)],
    "winner": [("another winner", _set("winner", "nobody"), "as the winner, but the log"),
               ("no winner", _set("winner", None), "as the winner, but the log")],
    "seed": [("another seed", _seed_tamper, "names a seed, but|seed gives")],
    "secret": [("another secret", _set("secret", "00" * 32), COMMITMENT)],
    "contributions": [("a seat's changed", lambda r: r["contributions"].__setitem__(
        1, "22" * 32), "seat 2's contribution is said to be the server's"),
                      ("one missing", lambda r: r["contributions"].pop(), "contributions for")],
    "server_contributions": [("one unmarked", lambda r: r["server_contributions"].pop(0),
                              "seat 1's contribution is the one the server derives"),
                             ("malformed", _set("server_contributions", ["x"]), "malformed")],
    "circuits": [("another set-up", lambda r: r.update(circuits=OTHER_START[r["ruleset"]]),
                  DEAL)],
    "seats": [("a seat missing", lambda r: r["seats"].pop(), "contributions for"),
              ("a seat asking for a piece there is not", lambda r: r["seats"][0].update(
                  titans=["nobody"]), "cannot be dealt again")],
    "genesis_hash": [("another genesis", _set("genesis_hash", "33" * 32), DEAL)],
    "length": [("one more", lambda r: r.update(length=r["length"] + 1), "says its log has")],
    "head": [("another head", lambda r: r.update(head={"seq": 1, "hash": "44" * 32}),
              "head")],
    "moves": [("the last 10 entries cut (rechained)", _cut(10), "ends before anyone has won"),
              ("the last 10 entries cut", lambda r: r.update(moves=r["moves"][:-10]),
               "says its log has"),
              ("emptied (rechained)", _cut(0), "ends before anyone has won"),
              ("numbered from 2 (rechained)", _shift_seqs, "numbered 2")],
}
"""Each field of a published record: how it is changed, and the reason the check must give
(a regular expression). A record with a chosen seed (whose ``seed`` is published) and one
without are both tried."""

ENTRY_TAMPERS: dict[str, list[tuple[str, Change, str]]] = {
    "seq": [("renumbered", _entry("seq", lambda m: m["seq"] + 1), "numbered")],
    "seat": [("another seat", _entry("seat", lambda m: (m["seat"] or 0) + 1), "does not hash"),
             ("another seat (rechained)", _entry(
                 "seat", lambda m: 5 if m["seat"] is not None else 0, rechained=True),
              "not that seat's|given to no seat|decision was")],
    "kind": [("a note", _entry("kind", lambda m: "pause"), "does not hash")],
    "actor": [("an admin", _entry("actor", lambda m: "admin"), "does not hash")],
    "input": [("another input", _entry("input", lambda m: m["input"] + " x"), "does not hash"),
              ("another input (rechained)", _entry("input", lambda m: m["input"] + " x",
                                                   rechained=True),
               "does not replay|the log shows")],
    "outcomes": [("forged", _entry("outcomes", lambda m: [["forged"]]), "does not hash"),
                 ("forged (rechained)", _entry("outcomes", lambda m: [["forged"]],
                                               rechained=True), "the log shows")],
    "created_at": [("a second later", _entry("created_at", _later), "does not hash")],
    "prev_hash": [("another link", _entry("prev_hash", lambda m: "55" * 32), "does not link")],
    "hash": [("another hash", _entry("hash", lambda m: "66" * 32), "does not hash")],
}
"""Each field of a log entry in the record, changed in the first entry with a random outcome.
Who made an entry and when are covered by the hash chain alone: a forger who rechains them
is caught by the newest head the player's client kept (cli/fair.py), not by the record."""


def test_the_matrices_cover_every_field_of_the_record() -> None:
    assert set(TAMPERS) == {*SUMMARY_FIELDS, *PUBLISHED_FIELDS}
    assert set(ENTRY_TAMPERS) == set(ENTRY_FIELDS)


@pytest.fixture
def records(service: GameService) -> dict[str, Record]:
    """Finished games' records, by what they are: each checks out untouched, and is the
    record of its admin export."""
    made: dict[str, Record] = {}
    for label, game, seed in (("titan-race", "titan-race", None),
                              ("great-race", "great-race", None),
                              ("titan-race, chosen seed", "titan-race", 11)):
        created = service.create_game(seats=[{"bot": True}] * 3, rules_name=game, seed=seed)
        service.start(created["game"], created["creator_token"])
        record = service.fairness(created["game"], None)
        assert record == record_of_export(service.export(created["game"]))
        assert len(record["moves"]) > 10 and record["status"] == "finished"
        report = check_record(record)
        assert report.fair, (label, report.problems)
        made[label] = record
    return made


def _failures(record: Record, tampers: dict[str, list[tuple[str, Change, str]]],
              prefix: str = "") -> list[str]:
    """The tampers the check does not catch with the reason expected."""
    missed = []
    for name, ways in tampers.items():
        for what, change, reason in ways:
            altered = copy.deepcopy(record)
            change(altered)
            assert altered != record, f"{prefix}{name} ({what}) changed nothing"
            problems = check_record(altered).problems
            if not problems or not any(re.search(reason, p) for p in problems):
                missed.append(f"{prefix}{name} ({what}): {problems}")
    return missed


def test_every_field_of_a_record_changed_fails_the_check_with_its_reason(
        records: dict[str, Record]) -> None:
    missed = []
    for label, record in records.items():
        missed += _failures(record, TAMPERS, f"{label}: ")
        missed += _failures(record, ENTRY_TAMPERS, f"{label}: moves[].")
    assert not missed, "\n".join(missed)


def test_an_abandoned_games_record_cut_short_fails(service: GameService) -> None:
    """A started game abandoned ends its log with the abandonment: a record cut short, or
    turned into a finished game's, fails."""
    created = service.create_game(seats=[{"email": "a@example.com"}, {"bot": True},
                                         {"bot": True}])
    service.accept(created["invitations"][0]["invite_token"])
    service.start(created["game"], created["creator_token"])
    service.abandon(created["game"], created["creator_token"])
    record = service.fairness(created["game"], None)
    assert record["moves"][-1]["kind"] == "abandon" and check_record(record).fair
    cut = copy.deepcopy(record)
    _cut(1)(cut)
    assert any("does not end with its abandonment" in p for p in check_record(cut).problems)
    finished = copy.deepcopy(record) | {"status": "finished"}
    problems = check_record(finished).problems
    assert any("ends before anyone has won" in p for p in problems), problems
    assert any("abandonment entry where it cannot" in p for p in problems), problems


# ---------------------------------------------------------------------- an export

EXPORT_TAMPERS: dict[str, tuple[Callable[[dict[str, Any]], None], str]] = {
    "game.uid": (lambda e: e["game"].update(uid=_other_id(), committed_uid=None), COMMITMENT),
    "game.committed_uid": (lambda e: e["game"].update(committed_uid=_other_id()), COMMITMENT),
    "game.ruleset": (lambda e: e["game"].update(ruleset="great-race"), COMMITMENT),
    "game.engine_version": (lambda e: e["game"].update(
        engine_version=e["game"]["engine_version"] + 1), "cannot be dealt again|" + DEAL),
    "game.variant": (lambda e: e["game"].update(variant="relay"), COMMITMENT),
    "game.setup": (lambda e: e["game"].update(setup={"circuits": ["ban-kog"]}), DEAL),
    "game.status": (lambda e: e["game"].update(status="abandoned"), "ends in a win"),
    "game.winner": (lambda e: e["game"].update(winner="nobody"), "as the winner"),
    "game.seed": (lambda e: e["game"].update(seed=e["game"]["seed"] + 1), "seed gives"),
    "game.rng_scheme": (lambda e: e["game"].update(rng_scheme="splitmix64"),
                        "showed a commitment"),
    "game.dealing_secret": (lambda e: e["game"].update(dealing_secret="00" * 32), COMMITMENT),
    "game.dealing_commitment": (lambda e: e["game"].update(dealing_commitment="11" * 32),
                                COMMITMENT),
    "game.commitment_version": (lambda e: e["game"].update(commitment_version=1), COMMITMENT),
    "game.seed_chosen": (lambda e: e["game"].update(seed_chosen=not e["game"]["seed_chosen"]),
                         COMMITMENT),
    "game.seat_setups": (lambda e: e["game"]["seat_setups"][0].update(anytime_windows=True),
                         DEAL),
    "game.initial_state": (lambda e: e["game"]["initial_state"]["deck"].reverse(), DEAL),
    "seats[].position": (lambda e: [e["seats"][0].update(position=1),
                                    e["seats"][1].update(position=0)], DEAL),
    "seats[].contribution": (lambda e: e["seats"][2].update(contribution="ab" * 32), DEAL),
    "moves": (lambda e: e.update(moves=e["moves"][:-10]), "ends before anyone has won"),
    "moves[].seq": (lambda e: e["moves"][3].update(seq=9), "numbered 9"),
    "moves[].seat": (lambda e: e["moves"][3].update(seat=(e["moves"][3]["seat"] or 0) + 1),
                     "does not hash"),
    "moves[].kind": (lambda e: e["moves"][3].update(kind="resume"), "does not hash"),
    "moves[].actor": (lambda e: e["moves"][3].update(actor="clock"), "does not hash"),
    "moves[].input": (lambda e: e["moves"][3].update(input=e["moves"][3]["input"] + " x"),
                      "does not hash"),
    "moves[].outcomes": (lambda e: e["moves"][_random_entry(e)].update(outcomes=[["x"]]),
                         "does not hash"),
    "moves[].created_at": (lambda e: e["moves"][3].update(created_at=_later(e["moves"][3])),
                           "does not hash"),
    "moves[].prev_hash": (lambda e: e["moves"][3].update(prev_hash="77" * 32), "does not link"),
    "moves[].hash": (lambda e: e["moves"][3].update(hash="88" * 32), "does not hash"),
}
"""Each field of an admin export that its fairness record is made from, changed in the export
of a finished Titan Race, and the reason the check of ``record_of_export`` must give. Those of
:data:`SEEDED` are tried on a game dealt from the admin's chosen seed (its seed counts only
there), the others on a game dealt from a fresh secret (whose contributions count)."""

SEEDED = {"game.seed"}

NOT_IN_THE_RECORD = {
    "format", "version", "owner_email", "chat", "notes", "game.name", "game.settings",
    "game.created_at", "game.started_at", "game.finished_at", "seats[].name", "seats[].email",
    "seats[].language", "seats[].notify", "seats[].bot", "seats[].level", "seats[].accepted",
    "seats[].resigned", "seats[].pieces"}
"""The fields of an export that are none of the record's business: changing one leaves the
record as it was (a seat's pieces and notification choices count only through the game's
``seat_setups``, what the seats asked for at the start)."""


def _export_fields(export: dict[str, Any]) -> set[str]:
    fields = {name for name in export if name not in ("game", "seats", "moves")} | {"moves"}
    fields |= {f"game.{name}" for name in export["game"]}
    fields |= {f"seats[].{name}" for seat in export["seats"] for name in seat}
    fields |= {f"moves[].{name}" for move in export["moves"] for name in move}
    return fields


def _changed(export: dict[str, Any], field: str) -> dict[str, Any]:
    """``export`` with ``field`` given another value of its kind."""
    altered = copy.deepcopy(export)
    where, _, name = field.rpartition(".")
    rows = {"": [altered], "game": [altered["game"]], "seats[]": altered["seats"],
            "moves[]": altered["moves"]}[where]
    for row in rows:
        value = row[name]
        row[name] = (not value if isinstance(value, bool) else value + "x"
                     if isinstance(value, str) else [] if isinstance(value, list)
                     else {"other": 1} if isinstance(value, dict) else 1)
    return altered


def _finished_export(service: GameService, seed: int | None) -> dict[str, Any]:
    created = service.create_game(seats=[{"bot": True}] * 3, seed=seed)
    service.start(created["game"], created["creator_token"])
    export = service.export(created["game"])
    assert check_record(record_of_export(export)).fair
    return export


def test_every_field_of_an_export_is_checked_or_none_of_the_records(
        service: GameService) -> None:
    exports = {False: _finished_export(service, None), True: _finished_export(service, 13)}
    for export in exports.values():
        assert set(EXPORT_TAMPERS) | NOT_IN_THE_RECORD == _export_fields(export)
        record = record_of_export(export)
        for field in sorted(NOT_IN_THE_RECORD):
            assert record_of_export(_changed(export, field)) == record, field
    assert not set(EXPORT_TAMPERS) & NOT_IN_THE_RECORD
    missed = []
    for field, (change, reason) in EXPORT_TAMPERS.items():
        export = exports[field in SEEDED]
        altered = copy.deepcopy(export)
        change(altered)
        assert altered != export, field
        try:
            problems = check_record(record_of_export(altered)).problems
        except (KeyError, TypeError, ValueError) as exc:  # (the CLI says what is missing)
            problems = [f"unreadable: {exc}"]
        if not any(re.search(reason, p) for p in problems):
            missed.append(f"{field}: {problems}")
    assert not missed, "\n".join(missed)
