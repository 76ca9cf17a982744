"""Seeded Great Race positions for the picture tests and bench/greatrace_picture.py: a simple
forward-driving player, so that a few hundred inputs reach the middle of a race (and a thousand
its end)."""

from __future__ import annotations

import random

from app.games.greatrace.engine import GreatRace
from app.games.greatrace.engine.board import progress

CREWS = ["french", "belgian", "italian", "english"]


def forward_choice(game: GreatRace, rnd: random.Random) -> str:
    """A legal input that tends to move the race on (drive forward, place tiles ahead)."""
    options = game.options()
    kind = (game.pending() or {}).get("kind")
    start = game.state.start
    ahead = {
        "drive": [o for o in options if o.startswith("go ")],
        "place": [o for o in options if o.startswith("place ")],
    }.get(str(kind), [])
    if ahead:
        return max(ahead, key=lambda o: (progress(o.split()[-1].upper(), start), rnd.random()))
    if kind == "turn":
        for wanted in ("drive", "scout", "fund"):
            if wanted in options and rnd.random() < 0.7:
                return wanted
    return rnd.choice(options)


def play(
    seed: int, inputs: int, *, stop_at: str | None = None, after: int = 150, leaders: bool = True
) -> GreatRace:
    """A seeded four-crew race ``inputs`` inputs in, or at the first ``stop_at`` decision once
    past the first ``after`` inputs."""
    game = GreatRace.new(CREWS, seed=seed, leaders=leaders)
    rnd = random.Random(seed)
    for count in range(inputs):
        if game.is_over:
            break
        if stop_at and count > after and (game.pending() or {}).get("kind") == stop_at:
            break
        game.apply(forward_choice(game, rnd))
    return game
