"""A game as an export holds it (:func:`game_export`: the admin's export, and what the fairness
record is made from), an exported game read back (every field of its game, seats, log, chat and
notes checked before anything is stored), and what a seat asked for at the start."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from app.core.integers import in_column
from app.core.models import GAME_STATUSES, MOVE, PLAYER, Game, Move, Seat, utcnow
from app.core.textrules import unusable_character
from app.features.fairness.dealing import COMMITMENT_VERSION, FIRST_COMMITMENT
from app.features.notes.records import MAX_NOTE_CHARS
from app.games import ruleset
from app.games.apiwords import OLDER_PIECES, OLDER_SETUP, OLDER_TEAM
from app.games.base import BOT_LEVELS, EASY, Ruleset, SeatSetup
from app.games.rng import KEYED_SCHEME, SPLITMIX_SCHEME

from .errors import MAX_INPUT
from .records import LogRow, iso_time, move_json

EXPORT_FORMAT = "titanpost-game"
EXPORT_VERSION = 2
"""Version 2 holds the game's ``setup`` and each seat's ``pieces`` (the game's own JSON);
version 1 held the older fields (:data:`~app.games.apiwords.OLDER_SETUP`), and is still read.
A seat's ``level`` (the computer's: easy, normal, strong) came later within version 2: an
export without it is read as easy."""


MAX_CHAT_STORED = 2000
"""The longest chat text the database holds (``chat_messages.text``): what an import takes."""


def read_export(data: dict[str, Any]) -> tuple[dict[str, Any], list[dict[str, Any]],
                                                list[LogRow]]:
    """The game, seat and log rows of an export, every field checked: ValueError (or
    KeyError for a missing one) names the first that is wrong."""
    meta, seats, moves = data["game"], data["seats"], data["moves"]
    _typed(meta, dict, "game")
    _typed(seats, list, "seats")
    _typed(moves, list, "moves")
    rules = ruleset(_text(meta["ruleset"], "game.ruleset", 40))  # (SetupError: a ValueError)
    status = meta["status"]
    if status not in GAME_STATUSES:
        raise ValueError(f"game.status must be one of {', '.join(GAME_STATUSES)}")
    game = {
        "name": _text(meta.get("name", ""), "game.name", 200),
        "ruleset": _text(meta["ruleset"], "game.ruleset", 40),
        "engine_version": _whole(meta["engine_version"], "game.engine_version"),
        "variant": _text(meta["variant"], "game.variant", 40),
        "setup": _setup_of(rules, meta),
        "settings": _typed(meta.get("settings", {}), dict, "game.settings"),
        "status": status,
        "seed": _whole(meta["seed"], "game.seed", bigint=True),
        **_dealing_of_export(meta),
        "initial_state": _typed(meta["initial_state"], dict, "game.initial_state", True),
        "winner": _text(meta.get("winner"), "game.winner", 40, True),
        "owner_email": _text(data.get("owner_email"), "owner_email", 254, True),
        "started_at": _moment(meta.get("started_at"), "game.started_at"),
        "finished_at": _moment(meta.get("finished_at"), "game.finished_at"),
    }
    seat_rows = [_seat_row_of(rules, _typed(row, dict, "seats[]")) for row in seats]
    positions = [row["position"] for row in seat_rows]
    if len(set(positions)) != len(positions):
        raise ValueError("two seats have the same position")
    return game, seat_rows, [_log_row_of(_typed(row, dict, "moves[]")) for row in moves]


def read_chat_export(data: dict[str, Any], positions: set[int]) -> list[dict[str, Any]]:
    """The chat rows of an export (its optional ``chat`` list, oldest first), every field
    checked: a message's seat must be one of the game's (or null, the system's), its text 1 to
    :data:`MAX_CHAT_STORED` characters, its time given. An export made before exports carried
    the chat has none."""
    messages = _typed(data.get("chat", []), list, "chat")
    rows: list[dict[str, Any]] = []
    for item in messages:
        row = _typed(item, dict, "chat[]")
        for key in ("seat", "text", "created_at"):
            if key not in row:
                raise ValueError(f"chat[].{key} is missing")
        seat = None if row["seat"] is None else _whole(row["seat"], "chat[].seat")
        if seat is not None and seat not in positions:
            raise ValueError(f"chat[].seat {seat} is not a seat of the game")
        text = _text(row["text"], "chat[].text", MAX_CHAT_STORED)
        if not text.strip():
            raise ValueError("chat[].text is empty")
        created_at = _moment(row["created_at"], "chat[].created_at")
        if created_at is None:
            raise ValueError("chat[].created_at is empty")
        rows.append({"seat": seat, "text": text, "created_at": created_at})
    return rows


def read_notes_export(data: dict[str, Any], positions: set[int], entries: int,
                      ) -> list[dict[str, Any]]:
    """The private notes of an export (its optional ``notes`` list, oldest first; an export
    made ``--without-notes``, or before notes, has none), every field checked: a note's seat
    must be one of the game's, its author an address, its log entry one of the log's (or
    null), its text 1 to :data:`~app.features.notes.records.MAX_NOTE_CHARS` characters."""
    rows: list[dict[str, Any]] = []
    for item in _typed(data.get("notes", []), list, "notes"):
        row = _typed(item, dict, "notes[]")
        for key in ("seat", "author", "seq", "text", "created_at"):
            if key not in row:
                raise ValueError(f"notes[].{key} is missing")
        seat = _whole(row["seat"], "notes[].seat")
        if seat not in positions:
            raise ValueError(f"notes[].seat {seat} is not a seat of the game")
        seq = None if row["seq"] is None else _whole(row["seq"], "notes[].seq")
        if seq is not None and not 1 <= seq <= entries:
            raise ValueError(f"notes[].seq {seq} is not an entry of the log")
        text = _text(row["text"], "notes[].text", MAX_NOTE_CHARS)
        author = _text(row["author"], "notes[].author", 254)
        if not text.strip() or not author.strip():
            raise ValueError("notes[].text and notes[].author may not be empty")
        created_at = _moment(row["created_at"], "notes[].created_at")
        if created_at is None:
            raise ValueError("notes[].created_at is empty")
        updated_at = _moment(row.get("updated_at"), "notes[].updated_at") or created_at
        rows.append({"seat": seat, "author": author, "seq": seq, "text": text,
                     "created_at": created_at, "updated_at": updated_at})
    return rows


def _setup_of(rules: Ruleset, meta: dict[str, Any]) -> dict[str, Any]:
    """An exported game's setup (an export before version 2: its older field)."""
    if "setup" in meta:
        setup: dict[str, Any] = _typed(meta["setup"], dict, "game.setup")
        return setup
    return rules.setup_from_circuits(_typed(meta[OLDER_SETUP], list, f"game.{OLDER_SETUP}"))


def _pieces_of(rules: Ruleset, row: dict[str, Any]) -> dict[str, Any]:
    """An exported seat's pieces (an export before version 2: its older fields)."""
    if "pieces" in row:
        pieces: dict[str, Any] = _typed(row["pieces"], dict, "seats[].pieces")
        return pieces
    names = _typed(row[OLDER_PIECES], list, f"seats[].{OLDER_PIECES}")
    for name in names:
        _text(name, f"seats[].{OLDER_PIECES}[]", 40)
    team = (None if row[OLDER_TEAM] is None
            else _whole(row[OLDER_TEAM], f"seats[].{OLDER_TEAM}"))
    return rules.pieces_from_fields(names, team)


def _seat_row_of(rules: Ruleset, row: dict[str, Any]) -> dict[str, Any]:
    position = _whole(row["position"], "seats[].position")
    if not 0 <= position < 6:
        raise ValueError("seats[].position must be 0 to 5")
    return {
        "position": position,
        "player_name": _text(row["name"], "seats[].name", 100),
        "email": _text(row["email"], "seats[].email", 254),
        "pieces": _pieces_of(rules, row),
        "language": _text(row.get("language", "en"), "seats[].language", 5),
        "notify": _typed(row.get("notify", {}), dict, "seats[].notify"),
        "is_bot": _typed(row["bot"], bool, "seats[].bot"),
        "bot_level": _level_of(row),
        "accepted_at": utcnow() if _typed(row["accepted"], bool, "seats[].accepted") else None,
        "resigned_at": utcnow() if _typed(row["resigned"], bool, "seats[].resigned") else None,
        "contribution": _text(row.get("contribution"), "seats[].contribution", 128, True),
    }


def _level_of(row: dict[str, Any]) -> str:
    """An exported seat's computer level (an export made before levels: easy)."""
    level = _text(row.get("level") or EASY, "seats[].level", 10)
    if level not in BOT_LEVELS:
        raise ValueError(f"seats[].level must be one of {', '.join(BOT_LEVELS)}")
    return str(level)


def _log_row_of(row: dict[str, Any]) -> LogRow:
    created_at = _moment(row["created_at"], "moves[].created_at")
    if created_at is None:
        raise ValueError("moves[].created_at is missing")
    return LogRow(
        seq=_whole(row["seq"], "moves[].seq"),
        seat=None if row["seat"] is None else _whole(row["seat"], "moves[].seat"),
        input=_text(row["input"], "moves[].input", MAX_INPUT),
        outcomes=_typed(row["outcomes"], list, "moves[].outcomes"),
        created_at=created_at,
        prev_hash=_text(row["prev_hash"], "moves[].prev_hash", 64),
        hash=_text(row["hash"], "moves[].hash", 64),
        kind=_text(row.get("kind", MOVE), "moves[].kind", 20),
        actor=_text(row.get("actor", PLAYER), "moves[].actor", 20),
    )


def _typed(value: Any, kind: type, what: str, optional: bool = False) -> Any:
    if (value is None and optional) or (isinstance(value, kind) and
                                         (kind is bool or not isinstance(value, bool))):
        return value
    raise ValueError(f"{what} must be {'a' if kind is not int else 'a whole'} {kind.__name__}")


def _whole(value: Any, what: str, *, bigint: bool = False) -> int:
    """A whole number of the export, as its column holds it (an INTEGER's range, a BIGINT's
    with ``bigint``: app/core/integers.py)."""
    number: int = _typed(value, int, what)
    held = -(2**63) <= number < 2**63 if bigint else in_column(number)
    if not held:
        raise ValueError(f"{what} is out of range")
    return number


def _text(value: Any, what: str, longest: int, optional: bool = False) -> Any:
    text = _typed(value, str, what, optional)
    if text is not None and len(text) > longest:
        raise ValueError(f"{what} is longer than {longest} characters")
    character = None if text is None else unusable_character(text)
    if character is not None:
        raise ValueError(f"{what} holds {character}, which no text may hold")
    return text


def _moment(value: Any, what: str) -> datetime | None:
    text = _typed(value, str, what, True)
    if not text:
        return None
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise ValueError(f"{what} is not an ISO 8601 time: {text[:40]!r}") from None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def seat_setup(seat: Seat) -> SeatSetup:
    """What seat ``seat`` asks for at the start: its pieces, and its reaction windows (a
    notification preference the rules read)."""
    return SeatSetup(seat.position, dict(seat.pieces),
                     {"anytime_windows": bool(seat.notify.get("anytime_windows", False))})


def setup_json(rules: Ruleset, setup: SeatSetup) -> dict[str, Any]:
    """A seat's setup as ``Game.seat_setups`` and the fairness record keep it: in the fields
    it always had (the older fields of its pieces, and ``anytime_windows``), so that records
    downloaded before setups were the game's own JSON still verify (the fairness check reads
    them back with :func:`app.games.base.pieces_of_older`)."""
    return {"position": setup.position, **rules.fields_of(setup.pieces),
            "anytime_windows": bool(setup.options.get("anytime_windows", False))}


def _dealing_of_export(meta: dict[str, Any]) -> dict[str, Any]:
    """The dealing columns of an exported game (an export made before fair dealing: the
    older generator from its seed; one made before commitment version 2: version 1 if it has
    a commitment). An imported game keeps the id its commitment names: the exported game's."""
    scheme = meta.get("rng_scheme", SPLITMIX_SCHEME)
    if scheme not in (SPLITMIX_SCHEME, KEYED_SCHEME):
        raise ValueError(f"game.rng_scheme must be {SPLITMIX_SCHEME} or {KEYED_SCHEME}")
    commitment = _text(meta.get("dealing_commitment"), "game.dealing_commitment", 64, True)
    version = meta.get("commitment_version", None if commitment is None else FIRST_COMMITMENT)
    if version is not None and _whole(version, "game.commitment_version") not in (
            FIRST_COMMITMENT, COMMITMENT_VERSION):
        raise ValueError(f"game.commitment_version must be {FIRST_COMMITMENT} or "
                         f"{COMMITMENT_VERSION}")
    if (version is None) != (commitment is None):
        raise ValueError("game.commitment_version and game.dealing_commitment go together")
    committed = meta.get("committed_uid", meta.get("uid") if version == COMMITMENT_VERSION
                         else None)
    return {
        "rng_scheme": scheme,
        "dealing_secret": _text(meta.get("dealing_secret"), "game.dealing_secret", 64, True),
        "dealing_commitment": commitment,
        "commitment_version": version,
        "committed_uid": _text(committed, "game.committed_uid", 32, True),
        "seed_chosen": _typed(meta.get("seed_chosen", False), bool, "game.seed_chosen"),
        "seat_setups": _typed(meta.get("seat_setups"), list, "game.seat_setups", True),
    }



def game_export(game: Game, seats: list[Seat], moves: list[Move]) -> dict[str, Any]:
    """A game's rows as an export holds them (without its chat and owner): what ``titanpost
    admin export`` writes, and what the fairness record is made from
    (:func:`app.features.fairness.records.record_of_export`), so that the two always agree."""
    return {
        "format": EXPORT_FORMAT,
        "version": EXPORT_VERSION,
        "game": {
            "uid": game.uid,
            "name": game.name,
            "ruleset": game.ruleset,
            "engine_version": game.engine_version,
            "variant": game.variant,
            "setup": game.setup,
            "settings": game.settings,
            "status": game.status,
            "seed": game.seed,
            "rng_scheme": game.rng_scheme,
            "dealing_secret": game.dealing_secret,
            "dealing_commitment": game.dealing_commitment,
            "commitment_version": game.commitment_version,
            "committed_uid": game.committed_uid,
            "seed_chosen": game.seed_chosen,
            "seat_setups": game.seat_setups,
            "initial_state": game.initial_state,
            "winner": game.winner,
            "created_at": iso_time(game.created_at),
            "started_at": iso_time(game.started_at),
            "finished_at": iso_time(game.finished_at),
        },
        "seats": [
            {
                "position": seat.position,
                "name": seat.player_name,
                "email": seat.email,
                "pieces": seat.pieces,
                "language": seat.language,
                "notify": seat.notify,
                "bot": seat.is_bot,
                "level": seat.bot_level,
                "accepted": seat.accepted_at is not None,
                "resigned": seat.resigned_at is not None,
                "contribution": seat.contribution,
            }
            for seat in seats
        ],
        "moves": [move_json(m) | {"prev_hash": m.prev_hash, "hash": m.hash} for m in moves],
    }
