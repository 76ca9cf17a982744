"""Clients that only POST moves: the move path alone, for ``bench/api.py``.

A real client reads the state and the options between moves, so ``bench/api.py``'s games
measure a mix of reads and writes. Here every game's moves are worked out beforehand: the games
are set up through the API, the admin export gives each game's initial state (with its random
source), and the game is played to its end locally with the same engine, a random legal input
at each decision. The timed part then sends nothing but ``POST /api/games/<id>/moves``, each
with the ``expected_seq`` the previous POST answered, so the figure is what the server's move
path costs next to ``bench/ceiling_app.py``'s one INSERT + COMMIT per request.

Prints nothing itself: :func:`run` returns the figures ``bench/api.py`` prints.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import requests

from app.games import ruleset

NewGame = Callable[[requests.Session, str, random.Random, int], tuple[str, list[str]]]
"""``bench/api.py``'s game set-up: (uid, seat tokens) of a started three-seat game."""


@dataclass
class Script:
    """One game's moves, in order: (seat, input)."""

    uid: str
    tokens: list[str]
    start_seq: int
    moves: list[tuple[int, str]]


@dataclass
class Figures:
    """What the timed part did."""

    moves: int = 0
    wall: float = 0.0
    refused: int = 0
    latencies_ms: list[float] = field(default_factory=list)
    samples: list[str] = field(default_factory=list)
    server_cpu: float = 0.0
    """CPU seconds the server used over the timed part (set by bench/api.py)."""


def script_game(http: requests.Session, base: str, admin_token: str, uid: str,
                tokens: list[str], rnd: random.Random) -> Script:
    """Play game ``uid`` to its end locally, from the initial state the admin export gives."""
    exported = http.get(f"{base}/api/admin/games/{uid}/export",
                        headers={"Authorization": f"Bearer {admin_token}"}, timeout=30)
    exported.raise_for_status()
    return script_export(exported.json(), uid, tokens, rnd)


def script_export(data: dict[str, Any], uid: str, tokens: list[str],
                  rnd: random.Random) -> Script:
    """Game ``uid``'s moves to its end, chosen at random from the options of each decision,
    played locally from the initial state of its admin export ``data``."""
    rules = ruleset(str(data["game"]["ruleset"]))
    game = rules.load(data["game"]["initial_state"])
    moves: list[tuple[int, str]] = []
    while rules.to_act(game):
        seat = rules.to_act(game)[0]
        text = rnd.choice(rules.options(game, seat))
        rules.apply(game, text, seat)
        moves.append((seat, text))
    return Script(uid, tokens, len(data["moves"]), moves)


def prepare(base: str, admin_token: str, games: int, seed: int,
            new_game: NewGame) -> list[Script]:
    """Set up ``games`` games through the API and work out every move of each."""
    rnd = random.Random(seed)
    scripts = []
    with requests.Session() as http:
        for number in range(games):
            uid, tokens = new_game(http, base, rnd, 10_000 + number)
            scripts.append(script_game(http, base, admin_token, uid, tokens, rnd))
    return scripts


def run(base: str, scripts: list[Script], clients: int, seconds: float) -> Figures:
    """``clients`` threads take the scripted games one by one and POST their moves, for at most
    ``seconds``."""
    lock = threading.Lock()
    queue = list(reversed(scripts))
    per_client = [Figures() for _ in range(clients)]
    deadline = time.monotonic() + seconds

    def take() -> Script | None:
        with lock:
            return queue.pop() if queue else None

    def client(figures: Figures) -> None:
        with requests.Session() as http:
            while time.monotonic() < deadline and (script := take()) is not None:
                _post_moves(http, base, script, figures, deadline)

    started = time.perf_counter()
    threads = [threading.Thread(target=client, args=(f,), daemon=True) for f in per_client]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    total = Figures(wall=time.perf_counter() - started)
    for figures in per_client:
        total.moves += figures.moves
        total.refused += figures.refused
        total.latencies_ms += figures.latencies_ms
        total.samples += figures.samples[: 3 - len(total.samples)]
    return total


def _post_moves(http: requests.Session, base: str, script: Script, figures: Figures,
                deadline: float) -> None:
    seq = script.start_seq
    path = f"{base}/api/games/{script.uid}/moves"
    for seat, text in script.moves:
        if time.monotonic() >= deadline:
            return
        t0 = time.perf_counter()
        answer = http.post(path, json={"expected_seq": seq, "input": text},
                           headers={"Authorization": f"Bearer {script.tokens[seat]}"},
                           timeout=60)
        figures.latencies_ms.append((time.perf_counter() - t0) * 1000)
        if answer.status_code != 200:
            figures.refused += 1
            figures.samples.append(f"{answer.status_code} {answer.text[:200]}")
            return  # the script no longer matches the game: leave it
        body: dict[str, Any] = answer.json()
        seq = int(body["seq"])
        figures.moves += 1
