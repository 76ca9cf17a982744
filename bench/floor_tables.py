"""The tables of ``bench/ceiling_app.py`` and the rows its floor reads (``bench/api.py``
creates them before it starts the app)."""

from __future__ import annotations

import hashlib
import json
from typing import Any

CEILING_SCHEMA = "CREATE TABLE bench_ceiling (id {serial} PRIMARY KEY, payload TEXT NOT NULL)"

FLOOR_GAMES = 10
"""Games the floor's tables hold (each with three seats)."""

FLOOR_SCHEMA = {
    "games": "CREATE TABLE bench_floor_games (id {serial} PRIMARY KEY, uid TEXT NOT NULL, "
             "name TEXT NOT NULL, status TEXT NOT NULL, settings TEXT NOT NULL, "
             "setup TEXT NOT NULL, created_at TEXT NOT NULL)",
    "seats": "CREATE TABLE bench_floor_seats (game_id BIGINT NOT NULL, position INTEGER NOT NULL, "
             "player_name TEXT NOT NULL, token_hash TEXT NOT NULL, pieces TEXT NOT NULL, "
             "missed INTEGER NOT NULL, PRIMARY KEY (game_id, position))",
    "log": "CREATE TABLE bench_floor_log (id {serial} PRIMARY KEY, game_id BIGINT NOT NULL, "
           "seq INTEGER NOT NULL, seat INTEGER, kind TEXT NOT NULL, actor TEXT NOT NULL, "
           "input TEXT NOT NULL, outcomes TEXT NOT NULL, created_at TEXT NOT NULL, "
           "prev_hash TEXT NOT NULL, hash TEXT NOT NULL)",
    "deadlines": "CREATE TABLE bench_floor_deadlines (id {serial} PRIMARY KEY, "
                 "game_id BIGINT NOT NULL, seat INTEGER NOT NULL, kind TEXT NOT NULL, "
                 "due_at TEXT NOT NULL, decision_seq INTEGER NOT NULL)",
    "outbox": "CREATE TABLE bench_floor_outbox (id {serial} PRIMARY KEY, game_id BIGINT NOT NULL, "
              "to_addr TEXT NOT NULL, kind TEXT NOT NULL, payload TEXT NOT NULL)",
}


def floor_rows(game: int) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The floor's game ``game`` and its three seats, as ``bench/api.py`` inserts them."""
    settings = {"clock": {"move_hours": 24, "reminder_hours": [12, 2], "max_missed": 3},
                "spectators": True, "language": "en", "fair": {"scheme": "hmac-sha256"}}
    row = {"id": game, "uid": f"{game:032x}", "name": f"floor {game}", "status": "active",
           "settings": json.dumps(settings), "setup": json.dumps({"circuits": ["lagoon"]}),
           "created_at": "2026-12-03T00:00:00+00:00"}
    seats = [{"game_id": game, "position": p, "player_name": f"player {p}",
              "token_hash": floor_token_hash(game, p), "missed": 0,
              "pieces": json.dumps({"titans": [("ragnarok", "grinder", "slaugg")[p]]})}
             for p in range(3)]
    return row, seats


def floor_token_hash(game: int, position: int) -> str:
    return hashlib.sha256(f"floor-{game}-{position}".encode()).hexdigest()


