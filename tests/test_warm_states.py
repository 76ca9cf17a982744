"""The mail sender's batch rebuilds its games' states together
(:meth:`app.service.base.ServiceBase.warm_states`): every state it keeps is the state a game's
own rebuild gives, with the same head hash and decision; games it cannot tell from their
snapshot and later moves alone (a rollback after the snapshot) are left to the game's own
rebuild."""

from __future__ import annotations

from sqlmodel import col, select

from app.core.models import Game
from app.games import ruleset
from app.service import GameService
from tests.apifixtures import bot_game, human_game, make_service

pytest_plugins = ["tests.apifixtures"]


def _games(svc: GameService, uids: list[str]) -> list[Game]:
    with svc.session() as s:
        return list(s.exec(select(Game).where(col(Game.uid).in_(uids))).all())


def _loaded_alone(svc: GameService, uid: str) -> tuple[int, object, str, int]:
    with svc.session() as s:
        loaded = svc.load(s, uid)
        state = None if loaded.state is None else loaded.rules.dump(loaded.state)
        return loaded.seq, state, loaded.head_hash, loaded.decision_seq


def test_warmed_states_are_the_states_each_game_rebuilds(service: GameService) -> None:
    """Finished games of computers, a game in play, one rolled back (left alone), and one
    not started (nothing to warm); a snapshot every 2 moves (the ``service`` fixture)."""
    finished = [bot_game(service), bot_game(service, circuits=["anglieh"]),
                bot_game(service, rules_name="great-race", circuits=["alger"])]
    playing = human_game(service)["game"]
    rolled = human_game(service)["game"]
    for uid in (playing, rolled):
        for _ in range(5):
            with service.session() as s:
                loaded = service.load(s, uid)
                seat = loaded.to_act()[0]
                option = loaded.rules.bot_move(loaded.state, seat)
            service.submit(uid, seat, loaded.seq, option)
    service.rollback(rolled, 2)
    not_started = service.create_game(seats=[{"email": "x@example.com"}] * 3)["game"]
    uids = [*finished, playing, rolled, not_started]
    expected = {uid: _loaded_alone(service, uid) for uid in uids}

    warm = make_service(service.settings.database_url)  # nothing in its memory
    games = _games(warm, uids)
    with warm.session() as s:
        warm.warm_states(s, games)
    by_id = {g.id: g.uid for g in games}
    kept = {by_id[game_id]: state for game_id, state in warm._states.items()}
    # (the rolled-back game is kept when a snapshot follows its rollback, else left alone)
    assert {*finished, playing} <= set(kept) <= {*finished, playing, rolled}, sorted(kept)
    rules = {g.uid: g.ruleset for g in games}
    for uid, cached in kept.items():  # (a cached state is the engine's object: its dump)
        state = ruleset(rules[uid]).dump(cached.state)
        assert (cached.seq, state, cached.head_hash, cached.decision_seq) == expected[uid], uid
    for uid in uids:  # and what the next read gives is still each game's own state
        assert _loaded_alone(warm, uid) == expected[uid], uid
    warm.engine.dispose()
