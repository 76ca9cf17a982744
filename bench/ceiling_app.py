"""The fastest API write this stack can serve: a calibration app for ``bench/api.py``.

One Flask route, ``POST /write``, inserts one row and commits, through the project's own
database layer (``app.db.make_engine``: the same pool, pragmas and ``BEGIN IMMEDIATE`` on
SQLite), served by the same gunicorn as the real app. No game, no token, no view: what any
move through this stack costs at the least. ``bench/api.py`` compares the real moves/s with it.
"""

from __future__ import annotations

import os

from flask import Flask
from sqlalchemy import text

from app.db import make_engine

engine = make_engine(os.environ["TITANPOST_DATABASE_URL"])
app = Flask(__name__)
PAYLOAD = "x" * 64


@app.post("/write")
def write() -> dict[str, bool]:
    with engine.begin() as conn:
        conn.execute(text("INSERT INTO bench_ceiling (payload) VALUES (:payload)"),
                     {"payload": PAYLOAD})
    return {"written": True}
