"""The owner's and the admin's commands on a whole game: pause, resume and abandon, a rollback,
export and import, and verifying that a game's log replays."""

from __future__ import annotations

import secrets
import uuid
from datetime import datetime
from typing import Any

from sqlmodel import Session, col, select

from app.core.logchain import genesis_hash, move_hash, timestamp
from app.core.models import (
    ABANDON,
    ABANDONED,
    ACTIVE,
    ACTORS,
    ADMIN,
    ENTRY_KINDS,
    FINISHED,
    OWNER,
    ROLLBACK,
    ChatMessage,
    Game,
    GameNote,
    Move,
    Seat,
    Snapshot,
    utcnow,
)
from app.features.notes.records import exported_notes
from app.games.base import MoveRejected
from app.service.logreplay import LogReplay

from .errors import PAUSE_REASON, BadRequest, NotPlaying, checked_line
from .exports import (
    EXPORT_FORMAT,
    game_export,
    read_chat_export,
    read_export,
    read_notes_export,
)
from .records import (
    AnswerRecorder,
    GameEvent,
    LogRow,
    new_token,
    record_answer,
    token_hash,
)
from .writing import LogWriting


class AdminCommands(LogWriting):
    """Pausing, resuming, abandoning, rolling back, exporting, importing and verifying."""

    def pause(self, uid: str, creator_token: str | None, *, reason: str = "",
              actor: str = OWNER, at: datetime | None = None) -> dict[str, Any]:
        """Stop the game's clock (and its moves) until :meth:`resume`; the owner's pause needs
        the creator token (None: an admin's)."""
        at = at or utcnow()
        reason = checked_line(reason, PAUSE_REASON)
        with self.session(write=True) as s:
            loaded = self._owned_active(s, uid, creator_token)
            if loaded.game.paused_at is not None:
                raise BadRequest(f"game {uid} is already paused ({loaded.game.pause_reason})")
            with self._race_lost(s, uid, None):
                self._pause_in(s, loaded, reason or "by its owner", actor=actor, at=at)
                s.commit()
            return self._summary(loaded)

    def resume(self, uid: str, creator_token: str | None, *, actor: str = OWNER,
               at: datetime | None = None) -> dict[str, Any]:
        """Restart a paused game's clock; its open deadlines move on by the pause's length."""
        at = at or utcnow()
        with self.session(write=True) as s:
            loaded = self._owned_active(s, uid, creator_token)
            if loaded.game.paused_at is None:
                raise BadRequest(f"game {uid} is not paused")
            with self._race_lost(s, uid, None):
                self._resume_in(s, loaded, actor=actor, position=None, at=at)
                s.commit()
            return self._summary(loaded)

    def abandon(self, uid: str, creator_token: str | None) -> dict[str, Any]:
        """The game ends where it stands (``creator_token`` None: its players cancelling a
        rematch that has not started, app/features/rematch/rematches.py, or an admin)."""
        with self.session(write=True) as s:
            game = (self._game(s, uid) if creator_token is None
                    else self._creator_game(s, uid, creator_token))
            if game.status in (FINISHED, ABANDONED):
                raise NotPlaying(f"game {uid} has already {game.status}")
            if game.initial_state is not None:  # the log tells where the game stopped
                loaded = self._load(s, uid)
                with self._race_lost(s, uid, None):
                    self._append(s, loaded, None, ABANDON, [], kind=ABANDON, actor=OWNER)
            game.status = ABANDONED
            game.finished_at = utcnow()
            s.add(game)
            self._emit(s, GameEvent("abandoned", game, self._seats(s, game)))
            s.commit()
            return {"game": uid, "status": ABANDONED}

    def rollback(self, uid: str, to: int, *, actor: str = ADMIN) -> dict[str, Any]:
        """Take the game back to the state after log entry ``to``: a ``rollback`` entry is
        appended (the log stays append-only and the entries rolled back stay in it), a
        finished game runs again, and the decision pending then is asked anew. The dice are
        the seeded ones: the same inputs roll the same again."""
        with self.session(write=True) as s:
            loaded = self._load(s, uid, fresh_seats=True)
            game = loaded.game
            if game.status not in (ACTIVE, FINISHED) or loaded.state is None:
                raise NotPlaying(f"game {uid} is {game.status}: there is nothing to roll back")
            if not 0 <= to < loaded.seq:
                raise BadRequest(f"roll back to an entry from 0 to {loaded.seq - 1} "
                                 f"(the game has {loaded.seq})")
            before = loaded.seq
            with self._race_lost(s, uid, None):
                loaded.state, _ = self._rebuild(s, game, loaded.rules, to)
                self._append(s, loaded, None, f"{ROLLBACK} {to}", [], kind=ROLLBACK,
                             actor=actor)
                if game.status == FINISHED:
                    game.status, game.winner, game.finished_at = ACTIVE, None, None
                    s.add(game)
                if game.paused_at is None:
                    self._play_bots(s, loaded)
                self._settle(s, loaded)
                self._emit(s, GameEvent("rolled_back", game, loaded.seats, before, loaded.seq,
                                        loaded, actor=actor, detail={"to": to}))
                s.commit()
            self._remember(loaded)
            return self._summary(loaded)

    def export(self, uid: str, *, notes: bool = True) -> dict[str, Any]:
        """The admin's export of game ``uid``: its rows, its owner and chat and, unless
        ``notes`` is False, the seats' private notes (each marked ``private``: a player's words
        to themselves, app/features/notes/), which the fairness record never holds."""
        with self.session() as s:
            game = self._game(s, uid)
            seats = self._seats(s, game)
            moves = s.exec(
                select(Move).where(Move.game_id == game.id).order_by(col(Move.seq))
            ).all()
            assert game.id is not None
            return game_export(game, seats, list(moves)) | {
                "owner_email": game.owner_email,
                "chat": [
                    {"seat": m.seat, "created_at": timestamp(m.created_at), "text": m.text}
                    for m in s.exec(select(ChatMessage).where(ChatMessage.game_id == game.id)
                                    .order_by(col(ChatMessage.id))).all()
                ],
            } | ({"notes": exported_notes(s, game.id, seats)} if notes else {})

    def import_game(self, data: dict[str, Any], *,
                    idempotency: AnswerRecorder | None = None) -> dict[str, Any]:
        """Recreate an exported game (a new id and new tokens); it must replay identically.

        Every field is checked (type, size, known values) before anything is stored, so a
        damaged or hand-made export is refused with what is wrong, never half-stored."""
        if not isinstance(data, dict) or data.get("format") != EXPORT_FORMAT:
            raise BadRequest(f"not a {EXPORT_FORMAT} export")
        try:
            meta, seat_rows, log = read_export(data)
            chat = read_chat_export(data, {row["position"] for row in seat_rows})
            notes = read_notes_export(data, {row["position"] for row in seat_rows},
                                      len(log))
            if meta["initial_state"] is None and log:
                raise ValueError("a game that never started has no moves")
            problems = [] if meta["initial_state"] is None else self._verify_rows(
                meta["ruleset"], meta["initial_state"], log
            )
        except (KeyError, TypeError, ValueError, IndexError, AttributeError) as exc:
            raise BadRequest(f"the export is incomplete or malformed: {exc}") from None
        if problems:
            raise BadRequest("the export does not replay: " + "; ".join(problems[:5]))
        creator_token = new_token()
        with self.session(write=True) as s:
            game = Game(uid=uuid.uuid4().hex, creator_token_hash=token_hash(creator_token),
                        **meta)
            s.add(game)
            s.flush()
            assert game.id is not None
            for row in seat_rows:
                s.add(Seat(game_id=game.id, secret=secrets.token_hex(32), **row))
            for entry in log:
                s.add(Move(game_id=game.id, **entry._asdict()))
            for message in chat:  # (in the export's order: their ids keep it)
                s.add(ChatMessage(game_id=game.id, **message))
                s.flush()
            self._import_notes(s, game.id, notes)
            imported = {"game": game.uid, "creator_token": creator_token}
            record_answer(s, idempotency, imported)
            s.commit()
            return imported

    @staticmethod
    def _import_notes(s: Session, game_id: int, notes: list[dict[str, Any]]) -> None:
        """The private notes of an imported game, each on its seat's new row (in the
        export's order)."""
        seat_ids = {seat.position: seat.id for seat in s.exec(
            select(Seat).where(Seat.game_id == game_id)).all()}
        for note in notes:
            seat_id = seat_ids[note.pop("seat")]
            assert seat_id is not None
            s.add(GameNote(game_id=game_id, seat_id=seat_id, **note))
            s.flush()

    def verify_all(self) -> dict[str, list[str]]:
        """Replay every started game; map each game that disagrees to what is wrong."""
        report: dict[str, list[str]] = {}
        for uid in self.started_games():
            problems = self.verify(uid)
            if problems:
                report[uid] = problems
        return report

    def started_games(self) -> list[str]:
        """The ids of every game that has started (so has a log to verify), oldest first."""
        with self.session() as s:
            return list(s.exec(
                select(Game.uid).where(col(Game.started_at).is_not(None)).order_by(col(Game.id))
            ).all())

    def verify(self, uid: str) -> list[str]:
        """Replay game ``uid`` from its log: the sequence, the hash chain, the recorded dice
        and the cached snapshots. What is wrong, or nothing (also for a game not started)."""
        with self.session() as s:
            game = self._game(s, uid)
            if game.initial_state is None:  # never started: nothing to replay
                return []
            moves = s.exec(
                select(Move).where(Move.game_id == game.id).order_by(col(Move.seq))
            ).all()
            problems = self._verify_rows(
                game.ruleset,
                game.initial_state,
                [
                    LogRow(m.seq, m.seat, m.input, m.outcomes, m.created_at, m.prev_hash,
                           m.hash, m.kind, m.actor)
                    for m in moves
                ],
            )
            return problems + self._verify_snapshots(s, game)

    def _verify_rows(
        self,
        rules_name: str,
        initial: dict[str, Any],
        rows: list[LogRow],
    ) -> list[str]:
        rules = self._rules(rules_name)
        problems: list[str] = []
        replay = LogReplay(rules, initial, [(row.kind, row.input) for row in rows])
        prev = genesis_hash(initial)
        for index, row in enumerate(rows):
            seq, seat, text, outcomes, created_at, prev_hash, digest, kind, actor = row
            if seq != index + 1:
                problems.append(f"move {seq}: expected sequence number {index + 1}")
                break
            if prev_hash != prev:
                problems.append(f"move {seq}: its previous hash does not match move {seq - 1}")
            if move_hash(prev_hash, seq, seat, text, outcomes, created_at, kind,
                         actor) != digest:
                problems.append(f"move {seq}: its hash does not match its content")
            prev = digest
            if kind not in ENTRY_KINDS or actor not in ACTORS:
                problems.append(f"move {seq}: unknown kind '{kind}' or actor '{actor}'")
                continue
            try:
                produced = replay.step(seq, kind, text)
            except MoveRejected as exc:
                problems.append(f"move {seq} ('{text}') no longer applies: {exc.message}")
                break
            except ValueError as exc:
                problems.append(f"move {seq}: {exc}")
                break
            if produced is not None and produced != outcomes:
                problems.append(
                    f"move {seq}: recorded random outcomes {outcomes} "
                    f"but the replay produced {produced}"
                )
        return problems

    def _verify_snapshots(self, s: Session, game: Game) -> list[str]:
        problems: list[str] = []
        assert game.id is not None and game.initial_state is not None
        rules = self._rules(game.ruleset)
        snaps = {snap.seq: snap.state for snap in
                 s.exec(select(Snapshot).where(Snapshot.game_id == game.id)).all()}
        if not snaps:
            return problems
        moves = s.exec(select(Move).where(Move.game_id == game.id).order_by(col(Move.seq))).all()
        replay = LogReplay(rules, game.initial_state, [(m.kind, m.input) for m in moves])
        for move in moves:
            try:
                replay.step(move.seq, move.kind, move.input)
            except (MoveRejected, ValueError):
                return problems  # the log check reports it (later snapshots cannot be checked)
            if move.seq in snaps and rules.dump(replay.state) != snaps.pop(move.seq):
                problems.append(f"the snapshot at move {move.seq} differs from the replay")
        problems += [f"the snapshot at move {seq} has no log entry" for seq in sorted(snaps)]
        return problems

