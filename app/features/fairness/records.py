"""A game's fairness record, and its check: anyone can recompute a finished game's deal, every
random outcome of its log and the log's hash chain from its published secret, and see that
they are what the game showed (``docs/fairness.md`` explains it to players; the secret, the
commitment and the keys are :mod:`app.features.fairness.dealing`'s).

The record (``GET /api/games/<id>/fairness``, or :func:`record_of_export` of an admin export:
the two are the same for the same game) holds, while the game runs, only what every seat is
shown: the commitment and the facts it covers. Once the game is over it adds the secret (and a
chosen seed), every seat's contribution (those the server derived marked as such), the set-up,
the genesis hash, the log's length, its head and every entry with its place in the hash chain,
the status and the winner. :func:`check_record` takes nothing in it on trust but the log's
inputs: the commitment must be the one the secret and the facts give, a contribution the
record calls the server's must be the one the secret gives, the deal must hash to the genesis,
the chain must link entry 1 to n without a gap, every random outcome must be what the key
draws, and the log must end as the status says. What a record cannot tell by itself (that it
is the record of the game *you* played) the player's own client compares: ``titanpost
verify-fair`` with what the CLI kept (cli/fair.py), the game page with what the browser kept.

This module does no I/O: it reads and checks plain JSON records.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Final

from app.core.logchain import genesis_hash, move_hash
from app.features.fairness import dealing as dealt
from app.features.fairness.dealing import COMMITMENT_VERSION, FIRST_COMMITMENT
from app.games.errors import N_
from app.games.rng import KEYED_SCHEME, SPLITMIX_SCHEME, Dealing

RECORD_FORMAT: Final = "titanpost-fairness"
RECORD_VERSION: Final = 2
"""Version 2 carries the hash chain, the status and the ending, and the commitment's version."""
FIRST_VERSION: Final = 1
"""The rules version of a record that names none (records were made without it while every game
played by its ruleset's first rules)."""
OVER: Final = ("finished", "abandoned")
ABANDON_KIND: Final = "abandon"
"""The log entry a started game's abandonment ends its log with (``app.core.models.ABANDON``)."""
SUMMARY_FIELDS: Final = ("format", "record_version", "game", "ruleset", "engine_version",
                         "variant", "status", "published", "scheme", "commitment_version",
                         "commitment", "seed_chosen")
"""What a record says while the game runs (and always)."""
PUBLISHED_FIELDS: Final = ("winner", "seed", "secret", "contributions", "server_contributions",
                           "circuits", "seats", "genesis_hash", "length", "head", "moves")
"""What a record adds once the game is over."""
ENTRY_FIELDS: Final = ("seq", "seat", "kind", "actor", "input", "outcomes", "created_at",
                       "prev_hash", "hash")
"""A log entry's fields in a record: all that its hash covers, and its place in the chain."""


@dataclass
class Report:
    """What :func:`check_record` found: ``problems`` empty means the deal checks out."""

    scheme: str
    moves: int = 0
    outcomes: int = 0
    chosen_seed: bool = False
    committed: bool = False
    commitment_version: int | None = None
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
        from app.core.i18n import translate

        text, values = self.words
        return translate(lang, text, **{key: value.say(lang) if hasattr(value, "say") else value
                                        for key, value in values.items()})


# ---------------------------------------------------------------------- checking a record


def check_record(record: dict[str, Any]) -> Report:
    """Check a finished game's record (see the module's docstring): the commitment, the
    contributions, the deal, the hash chain, every random outcome and the ending."""
    from app.games import ruleset
    from app.games.apiwords import OLDER_SETUP
    from app.games.base import (  # (the rules: only when checking)
        SeatSetup,
        SetupError,
        pieces_of_older,
    )

    scheme = str(record.get("scheme", ""))
    report = Report(scheme=scheme, chosen_seed=bool(record.get("seed_chosen")))
    if not _checkable(record, report):
        return report
    try:
        deal = _dealing_of(record, report)
        rules = ruleset(str(record["ruleset"]))
        seats = [SeatSetup(int(s["position"]),
                           pieces_of_older(rules, s),
                           {"anytime_windows": bool(s.get("anytime_windows", False))})
                 for s in record["seats"]]
        initial, _ = rules.start(variant=str(record["variant"]),
                                 setup=rules.setup_from_circuits(list(record[OLDER_SETUP])),
                                 seats=seats, dealing=deal,
                                 version=int(record.get("engine_version", FIRST_VERSION)))
    except (KeyError, TypeError, ValueError, AttributeError, SetupError) as exc:
        report.add(N_("the record cannot be dealt again: {problem}"), problem=str(exc))
        return report
    if genesis_hash(initial) != record.get("genesis_hash"):
        report.add(N_("the deal at the start is not the one the secret gives (the genesis hash "
                      "differs): the record's rules version, set-up or contributions are not "
                      "those the game was dealt with"))
    moves = _check_chain(record, report)
    if moves is None:
        return report
    final = _check_log(rules, initial, moves, report)
    if final is not None:
        _check_ending(record, rules, final, moves, report)
    return report


def _checkable(record: dict[str, Any], report: Report) -> bool:
    """Whether ``record`` is a record of a game that is over, in a version this code reads."""
    if record.get("format") != RECORD_FORMAT:
        report.add(N_("not a {format} record"), format=RECORD_FORMAT)
        return False
    if record.get("record_version") != RECORD_VERSION:
        report.add(N_("a record of version {version}: this check reads version {known}, which "
                      "holds the log's hash chain (fetch the record again, or update "
                      "titanpost)"), version=str(record.get("record_version")),
                   known=RECORD_VERSION)
        return False
    status = record.get("status")
    if not record.get("published") or status not in OVER:
        report.add(N_("the game is not over (it is {status}): its secret is published when it "
                      "ends"), status=str(status))
        return False
    missing = [name for name in PUBLISHED_FIELDS if name not in record]
    if missing:
        report.add(N_("the record lacks {fields}"), fields=", ".join(missing))
        return False
    return True


def _dealing_of(record: dict[str, Any], report: Report) -> Dealing:
    """The game's dealing from the record, its commitment and contributions checked."""
    scheme = report.scheme
    version = record.get("commitment_version")
    shown = record.get("commitment")
    if scheme == SPLITMIX_SCHEME:
        if version is not None or shown is not None or record.get("secret") is not None:
            report.add(N_("the game showed a commitment, but the record deals it from a seed as "
                          "a game created before fair dealing"))
        if record.get("seed") is None:
            report.add(N_("a game dealt from a seed names its seed"))
        return dealt.dealing(scheme, version=None, seed=int(record.get("seed") or 0))
    if scheme != KEYED_SCHEME:
        raise ValueError(f"unknown dealing scheme '{scheme}'")
    if version is None and shown is not None:
        version = FIRST_COMMITMENT  # (a record made before commitments had versions)
    if version not in (FIRST_COMMITMENT, COMMITMENT_VERSION):
        raise ValueError(f"unknown commitment version {version!r}")
    report.commitment_version = int(version)
    secret = bytes.fromhex(str(record["secret"]))
    _check_seed(record, secret, int(version), report)
    if _commitment_of(record, secret, int(version)) != shown:
        report.add(N_("the commitment shown at the start is not the one the published secret "
                      "and the game's facts give (its id, ruleset, variant, dealing scheme, "
                      "chosen seed and the secret itself are covered)"))
    else:
        report.committed = True
    contributions = [dealt.check_contribution(str(c)) for c in record["contributions"]]
    if len(contributions) != len(record["seats"]):
        report.add(N_("the record has {contributions} contributions for {seats} seats"),
                   contributions=len(contributions), seats=len(record["seats"]))
    _check_server_contributions(record, secret, contributions, report)
    return dealt.dealing(scheme, version=int(version), secret=secret.hex(),
                         contributions=contributions, seed_chosen=bool(record["seed_chosen"]),
                         engine_version=int(record.get("engine_version", FIRST_VERSION)))


def _commitment_of(record: dict[str, Any], secret: bytes, version: int) -> str:
    if version == FIRST_COMMITMENT:
        return dealt.commitment_v1(secret)
    return dealt.commitment(game=str(record["game"]), ruleset=str(record["ruleset"]),
                            variant=str(record["variant"]),
                            seed_chosen=record["seed_chosen"] is True, secret=secret)


def _check_seed(record: dict[str, Any], secret: bytes, version: int, report: Report) -> None:
    """A chosen seed (commitment version 2) is published, and the secret is derived from it;
    a game whose seed was not chosen names none."""
    seed = record.get("seed")
    if version != COMMITMENT_VERSION:
        return
    if not record.get("seed_chosen"):
        if seed is not None:
            report.add(N_("the record names a seed, but the game's seed was not chosen"))
        return
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        report.add(N_("the admin chose this game's seed, but the record does not publish it"))
    elif dealt.seed_secret(seed) != secret:
        report.add(N_("the published secret is not the one the published seed gives"))


def _check_server_contributions(record: dict[str, Any], secret: bytes,
                                contributions: list[str], report: Report) -> None:
    """The seats the record says the server gave a contribution to are exactly those whose
    contribution is the one the secret derives for them (fixed by the commitment)."""
    marked = record["server_contributions"]
    derived = [position for position, contribution in enumerate(contributions)
               if contribution == dealt.server_contribution(secret, position)]
    if not isinstance(marked, list) or sorted(marked) != marked or any(
            not isinstance(p, int) or isinstance(p, bool) for p in marked):
        report.add(N_("the record's list of the server's contributions is malformed"))
        return
    for position in sorted(set(marked) - set(derived)):
        report.add(N_("seat {number}'s contribution is said to be the server's, but it is not "
                      "the one the secret derives for it"), number=position + 1)
    for position in sorted(set(derived) - set(marked)):
        report.add(N_("seat {number}'s contribution is the one the server derives from the "
                      "secret, but the record does not say so"), number=position + 1)


# ---------------------------------------------------------------------- the log


def _check_chain(record: dict[str, Any], report: Report) -> list[dict[str, Any]] | None:
    """The log's hash chain: entries numbered 1 to n, each linked to the one before (the
    first to the genesis hash) and hashing to its own hash; the length and head as said.
    The entries, or None when they cannot be read."""
    moves = record["moves"]
    if not isinstance(moves, list) or not all(isinstance(m, dict) for m in moves):
        report.add(N_("the record's log is not a list of entries"))
        return None
    found: set[str] = set()
    previous = str(record["genesis_hash"])
    for index, move in enumerate(moves, start=1):
        try:
            _check_entry(move, index, previous, found, report)
        except (KeyError, TypeError, ValueError) as exc:
            report.add(N_("entry {number} of the log is malformed: {problem}"), number=index,
                       problem=str(exc))
            return None
        previous = str(move["hash"])
    length = record["length"]
    if length != len(moves):
        report.add(N_("the record says its log has {length} entries, but it holds {count}"),
                   length=str(length), count=len(moves))
    head = record["head"]
    if head != {"seq": len(moves), "hash": previous}:
        report.add(N_("the record's head ({head}) is not its log's last entry"), head=str(head))
    return moves


def _check_entry(move: dict[str, Any], index: int, previous: str, found: set[str],
                 report: Report) -> None:
    """One entry's number, link and hash (each kind of break reported once)."""
    seq = move["seq"]
    if seq != index and "seq" not in found:
        found.add("seq")
        report.add(N_("entry {number} of the log is numbered {seq}: a log is numbered 1, 2, "
                      "3... without a gap"), number=index, seq=str(seq))
    if move["prev_hash"] != previous and "link" not in found:
        found.add("link")
        report.add(N_("entry {number} of the log does not link to the entry before it: the "
                      "hash chain is broken"), number=index)
    created_at = datetime.fromisoformat(str(move["created_at"]))
    recomputed = move_hash(str(move["prev_hash"]), int(seq), move["seat"], str(move["input"]),
                           move["outcomes"], created_at, str(move["kind"]), str(move["actor"]))
    if recomputed != move["hash"] and "hash" not in found:
        found.add("hash")
        report.add(N_("entry {number} of the log does not hash to the hash it carries: it was "
                      "changed after it was written"), number=index)


def _check_log(rules: Any, initial: dict[str, Any], moves: list[dict[str, Any]],
               report: Report) -> Any:
    """Replay the log and compare every random outcome; the final state (None: a move does
    not replay)."""
    from app.games.base import MoveRejected
    from app.service.logreplay import LogReplay

    entries = [(str(m["kind"]), str(m["input"])) for m in moves]
    replay = LogReplay(rules, initial, entries)
    for index, move in enumerate(moves, start=1):
        if move["kind"] == "move":
            _check_whose(rules, replay.state, index, move["seat"], report)
        try:
            produced = replay.step(index, str(move["kind"]), str(move["input"]))
        except (MoveRejected, ValueError) as exc:
            problem: Any = str(exc)
            if isinstance(exc, MoveRejected) and exc.words is not None:
                problem = Refusal(exc.message, exc.words)
            report.add(N_("entry {seq} ('{input}') does not replay: {problem}"), seq=index,
                       input=str(move["input"]), problem=problem)
            return None
        report.moves += 1
        if produced is None:
            continue
        report.outcomes += sum(len(part) for part in produced)
        if produced != move.get("outcomes"):
            report.add(N_("entry {seq}: the log shows {logged} but the secret gives {dealt}"),
                       seq=index, logged=str(move.get("outcomes")), dealt=str(produced))
    return replay.state


def _check_whose(rules: Any, state: Any, seq: int, seat: Any, report: Report) -> None:
    """A move is the answer of a seat the decision was waiting for (the reveal of answers
    sealed together is no single seat's)."""
    if seat is None:
        if not rules.simultaneous(state):
            report.add(N_("entry {seq} is given to no seat, but its decision was a single "
                          "seat's"), seq=seq)
    elif seat not in rules.to_act(state):
        report.add(N_("entry {seq} is given as seat {number}'s answer, but the decision was "
                      "not that seat's"), seq=seq, number=int(seat) + 1)


def _check_ending(record: dict[str, Any], rules: Any, final: Any,
                  moves: list[dict[str, Any]], report: Report) -> None:
    """The log ends as the status says: a finished game's in the win of the winner it names;
    an abandoned game's (one committed to with version 2) with its abandonment entry, and
    nothing after it."""
    winners = rules.winners(final)
    won = ",".join(winners) if winners is not None else None
    status = record["status"]
    kinds = [str(m["kind"]) for m in moves]
    if ABANDON_KIND in kinds[:-1] or (kinds[-1:] == [ABANDON_KIND] and status != "abandoned"):
        report.add(N_("the log has an abandonment entry where it cannot have one (before its "
                      "end, or in a game that was not abandoned)"))
    if status == "finished":
        if won is None:
            report.add(N_("the record says the game is finished, but its log ends before "
                          "anyone has won (it may have been cut short)"))
        elif won != record["winner"]:
            report.add(N_("the record names {named} as the winner, but the log's end gives "
                          "{won}"), named=str(record["winner"]), won=won)
        return
    if won is not None:
        report.add(N_("the record says the game was abandoned, but its log ends in a win "
                      "({won})"), won=won)
    if record["winner"] is not None:
        report.add(N_("the record says the game was abandoned, but it names a winner"))
    if report.commitment_version == COMMITMENT_VERSION and kinds[-1:] != [ABANDON_KIND]:
        report.add(N_("the record says the game was abandoned, but its log does not end with "
                      "its abandonment (it may have been cut short)"))


# ---------------------------------------------------------------------- making a record


def record_of_export(export: dict[str, Any]) -> dict[str, Any]:
    """The fairness record of an admin export (``titanpost admin export``), the same as the
    server's ``/api/games/<id>/fairness`` for the same game (the server makes it this way).

    An export made before version 2 of the format holds the older fields of the setup and the
    seats' pieces itself (:data:`app.games.apiwords.OLDER_SETUP`), a newer one the game's ``setup``
    and the seats' ``pieces``, which its ruleset maps. A game imported from an export keeps
    the id its commitment names (``game``) and says its own as ``imported_as``."""
    game = export["game"]
    seats = sorted(export["seats"], key=lambda seat: int(seat["position"]))
    uid = str(game.get("uid"))
    named = game.get("committed_uid") or uid
    record: dict[str, Any] = {
        "format": RECORD_FORMAT,
        "record_version": RECORD_VERSION,
        "game": named,
        "ruleset": game["ruleset"],
        "engine_version": game.get("engine_version", FIRST_VERSION),
        "variant": game["variant"],
        "status": game["status"],
        "published": game["status"] in OVER and game.get("initial_state") is not None,
        "scheme": game.get("rng_scheme", SPLITMIX_SCHEME),
        "commitment_version": game.get("commitment_version", (
            None if game.get("dealing_commitment") is None else FIRST_COMMITMENT)),
        "commitment": game.get("dealing_commitment"),
        "seed_chosen": bool(game.get("seed_chosen", False)),
    }
    if named != uid:
        record["imported_as"] = uid
    if record["published"]:
        record |= _published(game, seats, list(export["moves"]))
    return record


def _published(game: dict[str, Any], seats: list[dict[str, Any]],
               moves: list[dict[str, Any]]) -> dict[str, Any]:
    """What a record adds once the game is over."""
    keyed = game.get("rng_scheme", SPLITMIX_SCHEME) == KEYED_SCHEME
    secret = game.get("dealing_secret") if keyed else None
    contributions = [seat.get("contribution") for seat in seats]
    entries = [_entry(move) for move in moves]
    genesis = genesis_hash(dict(game["initial_state"]))
    return {
        "winner": game.get("winner"),
        "seed": game.get("seed", 0) if game.get("seed_chosen") or not keyed else None,
        "secret": secret,
        "contributions": contributions,
        "server_contributions": _server_given(secret, contributions),
        "circuits": _circuits(game),
        "seats": game.get("seat_setups") or [  # (a game started before fair dealing)
            {"position": seat["position"], **_piece_fields(game, seat),
             "anytime_windows": bool(seat.get("notify", {}).get("anytime_windows", False))}
            for seat in seats],
        "genesis_hash": genesis,
        "length": len(entries),
        "head": {"seq": len(entries), "hash": entries[-1]["hash"] if entries else genesis},
        "moves": entries,
    }


def _entry(move: dict[str, Any]) -> dict[str, Any]:
    """A log entry as a record holds it (an export's, which may be of a format made before
    entries had kinds and actors)."""
    return {"seq": move["seq"], "seat": move.get("seat"), "kind": move.get("kind", "move"),
            "actor": move.get("actor", "player"), "input": move["input"],
            "outcomes": move["outcomes"], "created_at": move.get("created_at"),
            "prev_hash": move.get("prev_hash"), "hash": move.get("hash")}


def _server_given(secret: str | None, contributions: list[Any]) -> list[int]:
    """The seats whose contribution the server derived from the secret (it gave them one)."""
    if secret is None:
        return []
    key = bytes.fromhex(secret)
    return [position for position, contribution in enumerate(contributions)
            if contribution == dealt.server_contribution(key, position)]


def _circuits(game: dict[str, Any]) -> list[Any]:
    """An exported game's setup in the record's older field
    (:data:`~app.games.apiwords.OLDER_SETUP`: an export made before version 2 has it as it
    is)."""
    from app.games import ruleset
    from app.games.apiwords import OLDER_SETUP

    if OLDER_SETUP in game:
        return list(game[OLDER_SETUP])

    return ruleset(str(game["ruleset"])).circuits_of(dict(game["setup"]))


def _piece_fields(game: dict[str, Any], seat: dict[str, Any]) -> dict[str, Any]:
    """An exported seat's pieces in the record's older fields (an export made before version 2
    has them as they are)."""
    from app.games import ruleset
    from app.games.apiwords import OLDER_PIECES, OLDER_TEAM

    if OLDER_PIECES in seat:
        return {OLDER_PIECES: seat[OLDER_PIECES], OLDER_TEAM: seat[OLDER_TEAM]}

    fields: dict[str, Any] = ruleset(str(game["ruleset"])).fields_of(dict(seat["pieces"]))
    return fields
