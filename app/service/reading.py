"""What the service answers without changing anything: a seat's or a spectator's view, the
options, the log, a seat's games, the seat of a token or a link, a replay and the fairness
record."""

from __future__ import annotations

from typing import Any

from sqlalchemy import func
from sqlmodel import col, select

from app.core.i18n import N_
from app.core.models import STATE_KINDS, Game, Move, Seat
from app.features.fairness import records as fairness
from app.games.base import MoveRejected
from app.service.logreplay import LogReplay

from .base import TOKEN_SEAT, ServiceBase
from .errors import IllegalMove, NotFound, Unauthorized
from .exports import game_export
from .records import LinkSeat, game_over, move_json, token_hash


class ReadingQueries(ServiceBase):
    """The service's reads."""

    def state(self, uid: str, position: int | None) -> dict[str, Any]:
        """A seat's view of the game (a spectator's when ``position`` is None)."""
        with self.session() as s:
            loaded = self._load(s, uid)
            if position is None:
                self._check_spectators(loaded.game)
            return self._state_body(loaded, position)

    def ensure_exists(self, uid: str) -> None:
        """Raise NotFound unless game ``uid`` exists."""
        with self.session() as s:
            self._game(s, uid)

    def preview(self, uid: str, position: int, option: str) -> dict[str, Any] | None:
        """The spectator view after ``position`` answers with ``option``, when that is known in
        advance: None when the option involves chance (a roll, a shuffle, a stolen card), so
        that no preview reveals a random outcome before the player commits.

        It is played in the world the seat could know (:meth:`Ruleset.viewer_world`: what the
        seat cannot see dealt again from its own view), never in the true state, so that
        whatever it shows (a window opening, where a piece lands, what it loses) is the same
        whichever cards the others hold. Raises IllegalMove when the option is not legal for
        that seat now.
        """
        return self.previews(uid, position, [option])[option]

    def previews(self, uid: str, position: int,
                 options: list[str]) -> dict[str, dict[str, Any] | None]:
        """:meth:`preview` of each of ``options``, from one world (an illegal option raises)."""
        with self.session() as s:
            loaded = self._load(s, uid)
            rules = loaded.rules
            if loaded.state is None or position not in loaded.to_act():
                raise IllegalMove("this decision is not yours", legal=[],
                                  words=(N_("this decision is not yours"), {}))
            world = rules.viewer_world(loaded.state, position)
            if world is None:
                return dict.fromkeys(options)
            seen: dict[str, dict[str, Any] | None] = {}
            for option in options:
                try:
                    seen[option] = rules.preview(rules.copy(world), position, option)
                except MoveRejected as exc:
                    raise IllegalMove(exc.message, words=exc.words, legal=exc.legal,
                                      index=exc.index) from None
            return seen

    def seals_answers(self, uid: str) -> bool:
        """Whether the decision pending in game ``uid`` is answered in secret: each answer
        sealed until every one is in (a Great Race plan), so nothing can be shown of it."""
        with self.session() as s:
            loaded = self._load(s, uid)
            return loaded.state is not None and loaded.rules.simultaneous(loaded.state)

    def link_seat(self, uid: str, position: int) -> LinkSeat:
        """The seat ``position`` of game ``uid`` with its link secret (read fresh, not cached);
        raises NotFound for an unknown game or seat."""
        with self.session() as s:
            game = self._game(s, uid)
            seat = s.exec(
                select(Seat).where(Seat.game_id == game.id, Seat.position == position)
            ).first()
            if seat is None:
                raise NotFound(f"game {uid} has no seat {position + 1}")
            return LinkSeat(
                game=game.uid,
                position=seat.position,
                secret=seat.secret,
                language=seat.language,
                name=seat.player_name,
                pieces=self._rules(game.ruleset).piece_names(seat.pieces),
                status=game.status,
                game_name=game.name,
                setup=dict(game.setup),
                ruleset=game.ruleset,
            )

    def move_after(self, uid: str, seq: int) -> dict[str, Any] | None:
        """The first engine move after log entry ``seq`` (``seq``, ``seat``, ``input``,
        ``created_at``...): the answer to the decision that opened there; None if none yet."""
        with self.session() as s:
            game = self._game(s, uid)
            assert game.id is not None
            move = s.exec(
                select(Move)
                .where(Move.game_id == game.id, Move.seq > seq, col(Move.kind).in_(STATE_KINDS))
                .order_by(col(Move.seq))
                .limit(1)
            ).first()
            if move is None:
                return None
            return {k: v for k, v in move_json(move).items() if k != "outcomes"}

    def options(self, uid: str, position: int) -> dict[str, Any]:
        with self.session() as s:
            loaded = self._load(s, uid)
            pending = loaded.rules.pending(loaded.state) if loaded.state is not None else None
            mine = loaded.state is not None and position in loaded.to_act()
            return {
                "seq": loaded.seq,
                "yours": mine,
                "pending": pending if mine else _without_options(pending),
                "options": loaded.rules.options(loaded.state, position) if mine else [],
            }

    def log(self, uid: str, position: int | None = None) -> dict[str, Any]:
        """The move log as players see it: dice are public once rolled, hidden cards are not."""
        with self.session() as s:
            game = self._game(s, uid)
            if position is None:
                self._check_spectators(game)
            moves = s.exec(
                select(Move).where(Move.game_id == game.id).order_by(col(Move.seq))
            ).all()
            rules = self._rules(game.ruleset)
            return {
                "game": uid,
                "moves": [
                    move_json(m) | {
                        "input": m.input if m.seat == position and position is not None
                        else rules.public_input(m.input),
                        "outcomes": rules.redact_outcomes(m.outcomes),
                    }
                    for m in moves
                ],
            }

    def my_games(self, email: str) -> list[dict[str, Any]]:
        with self.session() as s:
            rows = s.exec(
                select(Game, Seat)
                .join(Seat, col(Seat.game_id) == col(Game.id))
                .where(Seat.email == email.lower())
                .order_by(col(Game.created_at).desc())
            ).all()
            result = []
            for game, seat in rows:
                seq = s.exec(
                    select(func.count()).select_from(Move).where(Move.game_id == game.id)
                ).one()
                result.append(
                    {
                        "game": game.uid,
                        "name": game.name,
                        "status": game.status,
                        "variant": game.variant,
                        "position": seat.position,
                        "seq": seq,
                        "winner": game.winner,
                    }
                )
            return result

    def seat_for_token(self, token: str) -> tuple[str, int, str]:
        """(game uid, seat position, email) of a valid API token.

        Read from the database on every request, never cached: a token revoked by a seat
        replacement in one process must be refused at once by every other process too. It is
        one lookup by the token's unique hash, a few columns and no ORM objects (see
        bench/api.py for what it costs).
        """
        with self.session() as s:
            row = s.exec(TOKEN_SEAT, params={"digest": token_hash(token)}).first()
        if row is None or row[3] is not None:
            raise Unauthorized("the API token is unknown or revoked")
        return row[0], row[1], row[2]

    def state_at(self, uid: str, seq: int) -> dict[str, Any]:
        """The full view after ``seq`` moves, rebuilt from the log."""
        with self.session() as s:
            loaded = self._load(s, uid, upto=seq)
            if seq < 0 or seq > loaded.seq:
                raise NotFound(f"game {uid} has no move {seq} (it has {loaded.seq})")
            return self._state_body(loaded, None) | {
                "view": loaded.rules.view(loaded.state, None, False)
                if loaded.state is not None
                else None
            }

    def replay(self, uid: str) -> dict[str, Any]:
        """Every move with the full view after it, for the admin replay."""
        with self.session() as s:
            game = self._game(s, uid)
            if game.initial_state is None:
                return {"game": uid, "steps": []}
            rules = self._rules(game.ruleset)
            moves = s.exec(
                select(Move).where(Move.game_id == game.id).order_by(col(Move.seq))
            ).all()
            replay = LogReplay(rules, game.initial_state, [(m.kind, m.input) for m in moves])
            steps = [{"seq": 0, "move": None, "view": rules.view(replay.state, None, False)}]
            for move in moves:
                replay.step(move.seq, move.kind, move.input)
                steps.append(
                    {
                        "seq": move.seq,
                        "move": move_json(move),
                        "view": rules.view(replay.state, None, False),
                    }
                )
            return {"game": uid, "steps": steps}

    def fairness(self, uid: str, position: int | None) -> dict[str, Any]:
        """The game's fairness record (app/features/fairness/records.py): the commitment and the
        facts it covers while it runs; once it is over, all that recomputing its deal, its log's
        hash chain and every random outcome needs. A finished game's record is anyone's, spectators
        allowed or not (``titanpost verify-fair`` with no login): it holds the game's play, none of
        its players' names or addresses, nor its chat."""
        with self.session() as s:
            game = self._game(s, uid)
            over = game_over(game)
            if position is None and not over:
                self._check_spectators(game)
            seats = self._seats(s, game)
            moves = s.exec(
                select(Move).where(Move.game_id == game.id).order_by(col(Move.seq))
            ).all() if over else []
            return fairness.record_of_export(game_export(game, seats, list(moves)))


def _without_options(pending: dict[str, Any] | None) -> dict[str, Any] | None:
    if pending is None:
        return None
    return {k: v for k, v in pending.items() if k != "options"}

