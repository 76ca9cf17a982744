"""The fastest API writes this stack can serve: a calibration app for ``bench/api.py``.

``POST /write`` inserts one row and commits, through the project's own database layer
(``app.core.db.make_engine``: the same pool, pragmas and ``BEGIN IMMEDIATE`` on SQLite), served by
the same gunicorn as the real app. No game, no token, no view: what any write through this
stack costs at the least. ``bench/api.py`` compares the real moves/s with it (the ceiling).

``POST /floor/<game>`` is a move's floor: the five statements a move sends (its game row and
its seat by the token's hash, the game's seats, the log entry, three deadline rows, an outbox
row) on tables of the same shape, run on the driver's cursor as ``app/core/statements.py`` runs
them, and an answer of a move's size (about 1.9 KB of JSON, built from the rows read), in one
transaction. No rules, no checks, no hooks, no clock: what a move cannot cost less than in this
stack, however lean its code. ``bench/api.py --floor-seconds`` measures it beside the ceiling.
"""

from __future__ import annotations

import json
import os
import re
from datetime import UTC, datetime
from typing import Any

from flask import Flask
from sqlalchemy import text

from app.core.db import WRITE, make_engine
from bench.floor_tables import floor_token_hash

engine = make_engine(os.environ["TITANPOST_DATABASE_URL"])
writer = engine.execution_options(**{WRITE: True})
"""Transactions as the app's writers begin them (on SQLite ``BEGIN IMMEDIATE``, after this
process's earlier writers: ``app/core/db.py``)."""
app = Flask(__name__)
PAYLOAD = "x" * 64


def _driver_sql(sql: str) -> str:
    """``:name`` parameters in the driver's own style (psycopg's ``%(name)s``)."""
    if engine.dialect.name == "postgresql":
        return re.sub(r":(\w+)", r"%(\1)s", sql)
    return sql


_GAME = _driver_sql(
    "SELECT g.id, g.uid, g.name, g.status, g.settings, g.setup, g.created_at, s.position "
    "FROM bench_floor_games g JOIN bench_floor_seats s ON s.game_id = g.id "
    "AND s.token_hash = :digest WHERE g.id = :game")
_SEATS = _driver_sql("SELECT position, player_name, pieces, missed FROM bench_floor_seats "
                     "WHERE game_id = :game ORDER BY position")
_LOG = _driver_sql(
    "INSERT INTO bench_floor_log (game_id, seq, seat, kind, actor, input, outcomes, created_at, "
    "prev_hash, hash) VALUES (:game_id, :seq, :seat, 'move', 'player', :input, :outcomes, "
    ":created_at, :prev_hash, :hash)")
_DEADLINE = _driver_sql(
    "INSERT INTO bench_floor_deadlines (game_id, seat, kind, due_at, decision_seq) "
    "VALUES (:game_id, :seat, :kind, :due_at, :decision_seq)")
_OUTBOX = _driver_sql("INSERT INTO bench_floor_outbox (game_id, to_addr, kind, payload) "
                      "VALUES (:game_id, :to_addr, 'your-turn', :payload)")
_VIEW = {"dice": ["green", "purple"], "deck": 9, "round": 5, "cycle_rows": 12,
         "circuits": ["dead-mans-lagoon"], "first_round": False, "winner": None,
         "order": ["ragnarok", "grinder", "slaugg"], "paused": False, "sealed": [],
         "fairness": {"commitment": "a" * 64, "published": False, "scheme": "hmac-sha256"},
         "discard": ["fireball", "quake", "borrowed-power", "speed-potion"],
         "pending": {"kind": "turn", "die": "purple", "options": ["end", "move 2", "card"]},
         "titans": {name: {"lap": 2, "life": 1, "hand": 2, "ko": False, "row": 7, "lane": 2,
                           "ability_used": True, "cards": ["quake", "fireball"],
                           "ko_passed": False, "finished": False, "place": None, "moved": 3}
                    for name in ("ragnarok", "grinder", "slaugg")}}
"""A view of a move answer's size (its JSON is encoded anew for every answer)."""


@app.post("/write")
def write() -> dict[str, bool]:
    with writer.begin() as conn:
        conn.execute(text("INSERT INTO bench_ceiling (payload) VALUES (:payload)"),
                     {"payload": PAYLOAD})
    return {"written": True}


@app.post("/floor/<int:game>")
def floor(game: int) -> dict[str, Any]:
    digest = floor_token_hash(game, 0)
    now = datetime.now(UTC).isoformat()
    with writer.begin() as conn:
        cursor = conn.connection.cursor()
        try:
            cursor.execute(_GAME, {"digest": digest, "game": game})
            found = cursor.fetchone()
            cursor.execute(_SEATS, {"game": game})
            seats = [{"position": row[0], "name": row[1], "pieces": json.loads(row[2]),
                      "missed_deadlines": row[3], "accepted": True, "bank_seconds": None,
                      "bot": False, "level": None, "resigned": False, "team": None}
                     for row in cursor.fetchall()]
            settings = json.loads(found[4])
            cursor.execute(_LOG, {"game_id": game, "seq": 1, "seat": found[7], "input": "move 2",
                                  "outcomes": json.dumps([["2"]]), "created_at": now,
                                  "prev_hash": digest, "hash": digest})
            cursor.executemany(_DEADLINE, [
                {"game_id": game, "seat": 1, "kind": kind, "due_at": now, "decision_seq": 1}
                for kind in ("deadline", "reminder", "nudge")])
            cursor.execute(_OUTBOX, {"game_id": game, "to_addr": "player1@example.org",
                                     "payload": json.dumps({"seq": 1, "seat": 1})})
        finally:
            cursor.close()
    return {"applied": True, "seq": 1, "you": found[7],
            "game": {"game": found[1], "name": found[2], "status": found[3],
                     "setup": json.loads(found[5]), "settings": settings, "seats": seats,
                     "to_act": [1], "created_at": found[6]},
            "view": _VIEW}
