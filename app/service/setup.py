"""Setting a game up: creating it, inviting its players, their accepting, the start (the deal), and
giving a running game's seat to someone new or to the computer."""

from __future__ import annotations

import secrets
import uuid
from typing import Any, Final

from sqlalchemy import update
from sqlmodel import Session, col, select

from app.core import integers
from app.core.i18n import LANGUAGES, N_
from app.core.logchain import genesis_hash
from app.core.models import (
    ACTIVE,
    ADMIN,
    HANDOVER,
    OPEN,
    OWNER,
    PLAYER,
    ApiToken,
    Game,
    Seat,
    table_of,
    utcnow,
)
from app.features.clock.arithmetic import ClockSettings
from app.features.fairness import dealing
from app.games.base import BOT_LEVELS, EASY, Ruleset, SeatSetup, SetupError

from .errors import (
    GAME_NAME,
    PLAYER_NAME,
    BadRequest,
    Forbidden,
    NotFound,
    NotPlaying,
    checked_line,
    is_address,
    refuse_unseen_in_address,
)
from .exports import seat_setup, setup_json
from .gamesettings import check_game_settings, check_quiet
from .records import (
    AnswerRecorder,
    GameEvent,
    Loaded,
    new_token,
    record_answer,
    token_hash,
)
from .writing import LogWriting

COMPUTER_NAME: Final = N_("Computer")
NOT_OWNER_ADDRESS: Final = N_("the owner's address '{email}' is not an e-mail address")
NOT_SEAT_ADDRESS: Final = N_("seat {number}: '{email}' is not an e-mail address")
NOT_ADDRESS: Final = N_("'{email}' is not an e-mail address")
SEAT_PROBLEM: Final = N_("seat {number}: {problem}")
BAD_LEVEL: Final = N_("seat {number}: the computer's level is easy, normal or strong, not "
                      "'{level}'")
LEVEL_NOT_BOT: Final = N_("seat {number}: only a computer seat has a level (give bot: true)")
"""Refusals of a new game a player meets on the new-game page (catalogue messages; a seat is
numbered from 1 there)."""
"""The name of a computer seat given none (stored in English, shown in the reader's language)."""
RESERVED_ADDRESS: Final = N_("seat {number} of a rematch is its own player's: it is invited "
                             "again only to {email}, by mail")
RESERVED_COMPUTER: Final = N_("seat {number} of a rematch is the computer's, as it was in the "
                              "game before")
SHARE_GIVEN: Final = N_("seat {number} has given its share of the deal already")
DEAL_MADE: Final = N_("the game has started: its deal is made")
SEAT_TAKEN: Final = N_("seat {number} is taken already")
NOT_RESERVED: Final = N_("seat {number} of this game is not kept for {email}")
"""Refusals of a rematch's seats and of a seat's share of the deal
(app/features/rematch/rematches.py)."""


class SetupCommands(LogWriting):
    """Creating, inviting, accepting, starting, and replacing a seat."""

    def create_game(
        self,
        *,
        seats: list[dict[str, Any]],
        variant: str = "standard",
        circuits: list[Any] | None = None,
        setup: dict[str, Any] | None = None,
        name: str = "",
        settings: dict[str, Any] | None = None,
        seed: int | None = None,
        rules_name: str = "titan-race",
        owner_email: str | None = None,
        idempotency: AnswerRecorder | None = None,
        rematch_of: int | None = None,
        seated: int | None = None,
    ) -> dict[str, Any]:
        """Create a game waiting for its players; return the creator token and invitations.

        ``owner_email`` is told about the game's clock (a pause, a seat to hand over); by default
        the first seat's player is the owner. Without a ``seed`` the game draws a secret and is
        dealt fairly (see app/features/fairness/dealing.py); with a ``seed`` (the admin's only) the
        secret is derived from it, so that it deals the same in every game, and every seat is told
        so.

        ``setup`` is the game's setup in its own terms (see :meth:`Ruleset.check_setup`);
        ``circuits`` the older form of it, still taken. Neither: the game's default. ``rematch_of``:
        the id of the finished game this one is the rematch of (unique: a second rematch of a game
        is refused with IntegrityError, see app/features/rematch/rematches.py). ``seated``: the
        position of a person's seat taken at once by whoever creates the game (a rematch's maker: no
        invitation; the answer gives its ``api_token``). Its share of the deal is left for its
        client to give once it has the commitment (:meth:`contribute`)."""
        rules = self._rules(rules_name)
        name = checked_line(name, GAME_NAME)
        setup = self._setup(rules, variant, setup, circuits)
        settings = check_game_settings(settings or {})
        rows = [self._seat_row(rules, i, spec) for i, spec in enumerate(seats)]
        if seated is not None:
            if not 0 <= seated < len(rows):
                raise BadRequest(f"there is no seat {seated + 1} to take")
            rows = [(seat, invite) if seat.position != seated else (self._taken(seat), None)
                    for seat, invite in rows]
        if owner_email is not None and owner_email.strip():
            owner_email = owner_email.strip().lower()
            refuse_unseen_in_address(owner_email)
            if not is_address(owner_email):
                raise BadRequest(f"the owner's address '{owner_email}' is not an e-mail address",
                                 words=(NOT_OWNER_ADDRESS, {"email": owner_email}))
        else:
            owner_email = next((seat.email for seat, _ in rows if seat.email), None)
        try:
            rules.check_seats(variant, [SeatSetup(seat.position, seat.pieces)
                                        for seat, _ in rows])
        except SetupError as exc:
            raise BadRequest(str(exc), words=exc.words) from None
        creator_token = new_token()
        uid = uuid.uuid4().hex
        game = Game(
            uid=uid,
            name=name,
            ruleset=rules.name,
            engine_version=rules.version,
            variant=variant,
            setup=setup,
            settings=settings,
            status=OPEN,
            creator_token_hash=token_hash(creator_token),
            owner_email=owner_email,
            rematch_of=rematch_of,
            **dealing.new_dealing(uid, rules.name, variant, seed),
        )
        invitations = []
        with self.session(write=True) as s:
            s.add(game)
            s.flush()
            for seat, invite in rows:
                assert game.id is not None
                seat.game_id = game.id
                if seat.is_bot:
                    seat.contribution = _server_contribution(game, seat.position)
                s.add(seat)
                if invite is not None:
                    invitations.append(
                        {"position": seat.position, "email": seat.email, "invite_token": invite}
                    )
            s.flush()
            self._emit(s, GameEvent("created", game, [seat for seat, _ in rows],
                                    invitations=invitations))
            created: dict[str, Any] = {"game": game.uid, "creator_token": creator_token,
                                       "invitations": invitations}
            if seated is not None:
                created |= {"position": seated, "commitment": game.dealing_commitment,
                            "api_token": self._new_api_token(s, rows[seated][0], "rematch")}
            record_answer(s, idempotency, created)
            s.commit()
        return created

    @staticmethod
    def _taken(seat: Seat) -> Seat:
        """``seat`` taken by its player at once (no invitation): a person's seat only."""
        if seat.is_bot:
            raise BadRequest(f"seat {seat.position + 1} is the computer's: its creator cannot "
                             "take it")
        seat.accepted_at = utcnow()
        seat.invite_token_hash = None
        return seat

    @staticmethod
    def _new_api_token(s: Session, seat: Seat, label: str) -> str:
        """A new API token of ``seat`` (stored as its hash; the token is shown once)."""
        token = new_token()
        assert seat.id is not None
        s.add(ApiToken(token_hash=token_hash(token), seat_id=seat.id, label=label))
        return token

    @staticmethod
    def _setup(rules: Ruleset, variant: str, setup: dict[str, Any] | None,
               circuits: list[Any] | None) -> dict[str, Any]:
        """A new game's setup, checked: ``setup`` as given, else what ``circuits`` (the
        older field) stands for, else the game's default."""
        if setup is not None and not isinstance(setup, dict):
            raise BadRequest("setup must be an object")
        if setup is not None and circuits:
            raise BadRequest("give a game's setup or its circuits, not both")
        try:
            if setup is None:
                setup = (rules.setup_from_circuits(list(circuits)) if circuits
                         else rules.default_setup(variant))
            rules.check_setup(variant, setup)
        except SetupError as exc:
            raise BadRequest(str(exc), words=exc.words) from None
        return setup

    @staticmethod
    def _pieces(rules: Ruleset, position: int, spec: dict[str, Any]) -> dict[str, Any]:
        """The pieces a new seat asks for: ``pieces`` (the game's own JSON) as given, else
        what the older ``titans`` and ``team`` fields stand for."""
        if "pieces" in spec and spec["pieces"] is not None:
            if not isinstance(spec["pieces"], dict):
                raise BadRequest(f"seat {position + 1}: pieces must be an object")
            if spec.get("titans") or spec.get("team") is not None:
                raise BadRequest(f"seat {position + 1}: give its pieces or its titans and team, "
                                 "not both")
            return dict(spec["pieces"])
        titans = spec.get("titans", [])
        if isinstance(titans, str):
            titans = [titans]
        if not isinstance(titans, list) or not all(isinstance(t, str) for t in titans):
            raise BadRequest(f"seat {position + 1}: titans must be a list of Titan names")
        team = spec.get("team")
        if team is not None and not integers.in_column(team):
            raise BadRequest(f"seat {position + 1}: team must be a whole number from "
                             f"{integers.COLUMN_MIN} to {integers.COLUMN_MAX}")
        return rules.pieces_from_fields([t.strip().lower() for t in titans], team)

    def _seat_row(self, rules: Ruleset, position: int,
                  spec: dict[str, Any]) -> tuple[Seat, str | None]:
        if not isinstance(spec, dict):
            raise BadRequest(f"seat {position + 1}: give an object with an email (or bot: true)")
        bot = bool(spec.get("bot", False))
        email = str(spec.get("email", "")).strip().lower()
        if not bot:
            try:
                refuse_unseen_in_address(email)
            except BadRequest as exc:
                raise BadRequest(f"seat {position + 1}: {exc.message}", words=(
                    SEAT_PROBLEM, {"number": position + 1, "problem": exc})) from None
        if not bot and not is_address(email):
            raise BadRequest(f"seat {position + 1}: '{email}' is not an e-mail address",
                             words=(NOT_SEAT_ADDRESS, {"number": position + 1, "email": email}))
        language = str(spec.get("language", "en"))
        if language not in LANGUAGES:
            raise BadRequest(f"seat {position + 1}: language must be one of {', '.join(LANGUAGES)}")
        pieces = self._pieces(rules, position, spec)
        notify = spec.get("notify", {})
        if not isinstance(notify, dict):
            raise BadRequest(f"seat {position + 1}: notify must be an object")
        try:
            notify = {k: v for k, v in notify.items() if k not in ("quiet", "timezone")} | (
                check_quiet(spec.get("quiet", notify.get("quiet")),
                            spec.get("timezone", notify.get("timezone"))))
        except BadRequest as exc:
            raise BadRequest(f"seat {position + 1}: {exc.message}",
                             words=(SEAT_PROBLEM, {"number": position + 1, "problem": exc})
                             ) from None
        level = _bot_level(position, spec.get("level"), bot)
        invite = None if bot else new_token()
        seat = Seat(
            game_id=0,
            position=position,
            player_name=self._player_name(position, spec.get("name"),
                                          COMPUTER_NAME if bot else email.split("@")[0]),
            email=email,
            pieces=pieces,
            language=language,
            notify=notify,
            secret=secrets.token_hex(32),
            invite_token_hash=token_hash(invite) if invite else None,
            accepted_at=utcnow() if bot else None,
            is_bot=bot,
            bot_level=level,
            contribution=None,  # (a computer seat's is derived once the secret is drawn)
        )
        return seat, invite

    @staticmethod
    def _player_name(position: int, given: Any, default: str) -> str:
        """Seat ``position``'s name as a new game's request gives it (else ``default``)."""
        if given is None:
            return default
        if not isinstance(given, str):
            raise BadRequest(f"seat {position + 1}: the name must be text")
        return checked_line(given, PLAYER_NAME, where=f"seat {position + 1}: ") or default

    def accept(self, invite_token: str, *, name: str | None = None,
               contribution: str | None = None,
               idempotency: AnswerRecorder | None = None) -> dict[str, Any]:
        """A player takes their seat by the invitation; returns their API token (shown once).

        ``contribution`` is the randomness the player's browser or CLI drew for the deal; when
        none is given the server derives the seat's own from the game's secret, fixed by the
        commitment (see app/features/fairness/dealing.py)."""
        contribution = _contribution(contribution)
        name = checked_line(name, PLAYER_NAME) if name else None
        with self.session(write=True) as s:
            seat = s.exec(
                select(Seat).where(Seat.invite_token_hash == token_hash(invite_token))
            ).first()
            if seat is None:
                raise NotFound("this invitation is unknown or was already used")
            game = s.get(Game, seat.game_id)
            assert game is not None
            if game.status == ACTIVE and seat.is_bot:
                return self._take_over(s, game, seat, name, idempotency)
            if game.status != OPEN:
                raise NotPlaying(f"game {game.uid} has already {game.status}")
            seat.accepted_at = utcnow()
            seat.invite_token_hash = None
            seat.contribution = contribution or _server_contribution(game, seat.position)
            if name:
                seat.player_name = name
            token = self._new_api_token(s, seat, "invitation")
            s.add(seat)
            accepted = {"game": game.uid, "position": seat.position, "api_token": token,
                        "commitment": game.dealing_commitment}
            record_answer(s, idempotency, accepted)
            s.commit()
            return accepted

    def take_reserved_seat(self, uid: str, position: int, email: str, *,
                           contribution: str | None = None,
                           idempotency: AnswerRecorder | None = None) -> dict[str, Any]:
        """The player of ``email`` takes seat ``position`` of open game ``uid``, kept for that
        address, without its invitation (the caller proved who they are:
        app/features/rematch/rematches.py); its mailed invitation is used up. Returns the seat's API
        token (shown once), as :meth:`accept` does; ``contribution`` as there."""
        given = _contribution(contribution)
        with self.session(write=True) as s:
            game = self._game(s, uid)
            seat = self._seat(s, game, position)
            if game.status != OPEN:
                raise NotPlaying(f"game {uid} has already {game.status}",
                                 words=(DEAL_MADE, {}))
            if seat.is_bot or seat.email != email:
                raise Forbidden(f"seat {position + 1} of game {uid} is not kept for {email}",
                                words=(NOT_RESERVED, {"number": position + 1, "email": email}))
            seats = table_of(Seat)
            taken = s.execute(update(seats).where(seats.c.id == seat.id,
                                                  seats.c.accepted_at.is_(None))
                              .values(accepted_at=utcnow(), invite_token_hash=None,
                                      contribution=given or _server_contribution(game,
                                                                                 position)))
            if int(getattr(taken, "rowcount", 0) or 0) != 1:
                s.rollback()
                raise NotPlaying(f"seat {position + 1} of game {uid} is taken already",
                                 words=(SEAT_TAKEN, {"number": position + 1}))
            taker = {"game": uid, "position": position,
                     "api_token": self._new_api_token(s, seat, "rematch"),
                     "commitment": game.dealing_commitment}
            record_answer(s, idempotency, taker)
            s.commit()
            return taker

    def contribute(self, uid: str, position: int, contribution: str, *,
                   idempotency: AnswerRecorder | None = None) -> dict[str, Any]:
        """Seat ``position`` of open game ``uid``, taken without giving its share of the deal
        (a rematch's maker, whose seat was taken before the game's commitment existed), gives
        it now, once: see docs/fairness.md."""
        share = _contribution(contribution)
        if share is None:
            raise BadRequest("give the contribution: 32 to 128 hexadecimal digits your client "
                             "drew")
        with self.session(write=True) as s:
            game = self._game(s, uid)
            seat = self._seat(s, game, position)
            if game.status != OPEN:
                raise NotPlaying(f"game {uid} has already {game.status}: its deal is made",
                                 words=(DEAL_MADE, {}))
            seats = table_of(Seat)
            given = s.execute(update(seats).where(seats.c.id == seat.id,
                                                  seats.c.accepted_at.is_not(None),
                                                  seats.c.is_bot.is_(False),
                                                  seats.c.contribution.is_(None))
                              .values(contribution=share))
            if int(getattr(given, "rowcount", 0) or 0) != 1:
                s.rollback()
                raise NotPlaying(f"seat {position + 1} has given its share of the deal already",
                                 words=(SHARE_GIVEN, {"number": position + 1}))
            answer = {"game": uid, "position": position, "commitment": game.dealing_commitment}
            record_answer(s, idempotency, answer)
            s.commit()
            return answer

    @staticmethod
    def _seat(s: Session, game: Game, position: int) -> Seat:
        seat = s.exec(select(Seat).where(Seat.game_id == game.id,
                                         Seat.position == position)).first()
        if seat is None:
            raise NotFound(f"game {game.uid} has no seat {position + 1}")
        return seat

    def _take_over(self, s: Session, game: Game, seat: Seat, name: str | None,
                   idempotency: AnswerRecorder | None) -> dict[str, Any]:
        """A new player accepts the invitation to a running game's seat (see replace_seat)."""
        loaded = self._load(s, game.uid, fresh_seats=True)
        mine = loaded.seat(seat.position)
        mine.is_bot = False
        mine.invite_token_hash = None
        mine.accepted_at = utcnow()
        mine.resigned_at = None
        mine.missed_deadlines = 0
        if name:
            mine.player_name = name
        s.add(mine)
        before = loaded.seq
        with self._race_lost(s, game.uid, mine.position):
            self._append(s, loaded, mine.position, f"{HANDOVER} player", [], kind=HANDOVER,
                         actor=PLAYER)
            token = new_token()
            assert mine.id is not None
            s.add(ApiToken(token_hash=token_hash(token), seat_id=mine.id, label="invitation"))
            self._emit(s, GameEvent("joined", game, loaded.seats, before, loaded.seq, loaded,
                                    position=mine.position))
            accepted = {"game": game.uid, "position": mine.position, "api_token": token}
            record_answer(s, idempotency, accepted)
            s.commit()
        self._seat_rows.pop(loaded.game_id, None)
        return accepted

    def invite(self, uid: str, creator_token: str, position: int, email: str, *,
               idempotency: AnswerRecorder | None = None) -> dict[str, Any]:
        """(Re)issue the invitation of an open seat, to a new address if given.

        A rematch's seat is kept for its player: it is invited again only to its own address,
        and its invitation goes by mail alone (the creator is never given it: they could take
        the seat with it). A rematch's computer seat stays the computer's."""
        email = email.strip().lower()
        refuse_unseen_in_address(email)
        if not is_address(email):
            raise BadRequest(f"'{email}' is not an e-mail address",
                             words=(NOT_ADDRESS, {"email": email}))
        with self.session(write=True) as s:
            game = self._creator_game(s, uid, creator_token)
            if game.status != OPEN:
                raise NotPlaying(f"game {uid} has already {game.status}: no more invitations")
            seat = s.exec(
                select(Seat).where(Seat.game_id == game.id, Seat.position == position)
            ).first()
            if seat is None:
                raise NotFound(f"game {uid} has no seat {position + 1}")
            if seat.accepted_at is not None and not seat.is_bot:
                raise BadRequest(f"seat {position + 1} is already taken")
            if game.rematch_of is not None:
                _kept_for_its_player(seat, email)
            invite = new_token()
            seat.email = email
            seat.is_bot = False
            seat.accepted_at = None
            seat.invite_token_hash = token_hash(invite)
            s.add(seat)
            self._emit(s, GameEvent("invited", game, [seat], invitations=[
                {"position": position, "email": email, "invite_token": invite}]))
            invited = {"position": position, "email": email}
            if game.rematch_of is None:  # (a rematch's seats are invited by mail alone)
                invited["invite_token"] = invite
            record_answer(s, idempotency, invited)
            s.commit()
            return invited

    def start(
        self, uid: str, creator_token: str | None, *, fill_with_bots: bool = False,
        bot_level: str = EASY, idempotency: AnswerRecorder | None = None,
    ) -> dict[str, Any]:
        """Deal, find the first player and open the first decision (``creator_token`` None:
        an admin starting it); the computer fills the seats not taken at ``bot_level``."""
        bot_level = _bot_level(-1, bot_level, True)
        with self.session(write=True) as s:
            game = (self._game(s, uid) if creator_token is None
                    else self._creator_game(s, uid, creator_token))
            if game.status != OPEN:
                raise NotPlaying(f"game {uid} has already {game.status}")
            seats = self._seats(s, game)
            waiting = [seat.position for seat in seats if seat.accepted_at is None]
            if waiting and not fill_with_bots:
                raise NotPlaying(
                    "not every player has accepted yet (waiting for seat "
                    f"{', '.join(str(p + 1) for p in waiting)}); start with bots filling them, "
                    "or wait"
                )
            for seat in seats:
                if seat.accepted_at is None:
                    seat.is_bot = True
                    seat.bot_level = bot_level
                    seat.accepted_at = utcnow()
                if seat.contribution is None:
                    seat.contribution = _server_contribution(game, seat.position)
            rules = self._rules(game.ruleset)
            game.engine_version = rules.version  # (the rules that deal it, if newer since)
            setups = [seat_setup(seat) for seat in seats]
            game.seat_setups = [setup_json(rules, setup) for setup in setups]
            try:
                initial, given_pieces = rules.start(
                    variant=game.variant, setup=dict(game.setup), seats=setups,
                    dealing=dealing.dealing(
                        game.rng_scheme, version=game.commitment_version, seed=game.seed,
                        secret=game.dealing_secret, seed_chosen=game.seed_chosen,
                        contributions=[str(seat.contribution) for seat in seats],
                        engine_version=rules.version),
                )
            except SetupError as exc:
                raise BadRequest(str(exc)) from None
            bank = ClockSettings.of(game.settings).initial_bank()
            for seat, given in zip(seats, given_pieces, strict=True):
                seat.pieces = given
                seat.bank_seconds = bank
                s.add(seat)
            game.initial_state = initial
            game.status = ACTIVE
            game.started_at = utcnow()
            s.add(game)
            s.flush()
            loaded = Loaded(game, seats, rules, rules.load(initial), 0, genesis_hash(initial))
            self._play_bots(s, loaded)
            self._settle(s, loaded)
            self._emit(s, GameEvent("started", game, seats, 0, loaded.seq, loaded))
            summary = self._summary(loaded)
            record_answer(s, idempotency, summary)
            s.commit()
            return summary

    def replace_seat(self, uid: str, creator_token: str | None, position: int,
                     email: str | None, *, level: str | None = None,
                     idempotency: AnswerRecorder | None = None) -> dict[str, Any]:
        """Give a seat of a running game to someone new (an invitation to ``email``; the
        computer plays the seat until it is accepted) or to the computer (``email`` None), at
        ``level`` (None: the seat's own). ``creator_token`` None is an admin acting. The
        creator of a rematch is not given the invitation: it goes to ``email`` by mail alone
        (see :meth:`invite`)."""
        if level is not None:
            level = _bot_level(position, level, True)
        if email is not None:
            email = email.strip().lower()
            refuse_unseen_in_address(email)
            if not is_address(email):
                raise BadRequest(f"'{email}' is not an e-mail address",
                                 words=(NOT_ADDRESS, {"email": email}))
        actor = ADMIN if creator_token is None else OWNER
        with self.session(write=True) as s:
            loaded = self._owned_active(s, uid, creator_token)
            seat = loaded.seat(position)
            before = loaded.seq
            invite = None
            with self._race_lost(s, uid, position):
                if email is None:
                    if seat.is_bot and seat.invite_token_hash is None:
                        raise BadRequest(f"the computer already plays seat {position + 1}")
                    seat.invite_token_hash = None
                    self._hand_over_in(s, loaded, position, "computer", actor=actor,
                                       level=level)
                else:
                    invite = new_token()
                    seat.email = email
                    seat.invite_token_hash = token_hash(invite)
                    self._hand_over_in(s, loaded, position, "invite", actor=actor,
                                       level=level)
                self._revoke_tokens(s, seat)
                seat.secret = secrets.token_hex(32)  # the old player's links stop working
                seat.missed_deadlines = 0
                if loaded.game.paused_at is None:  # else the computer plays on resume
                    self._play_bots(s, loaded)
                self._settle(s, loaded)
                invitations = [] if invite is None else [
                    {"position": position, "email": email, "invite_token": invite}]
                self._emit(s, GameEvent("replaced", loaded.game, loaded.seats, before,
                                        loaded.seq, loaded, invitations=invitations,
                                        actor=actor, position=position))
                result: dict[str, Any] = {"game": uid, "position": position, "seq": loaded.seq}
                if invite is not None:
                    result["email"] = email
                    if creator_token is None or loaded.game.rematch_of is None:
                        result["invite_token"] = invite
                record_answer(s, idempotency, result)
                s.commit()
            self._seat_rows.pop(loaded.game_id, None)
            return result

    @staticmethod
    def _revoke_tokens(s: Session, seat: Seat) -> None:
        for row in s.exec(select(ApiToken).where(ApiToken.seat_id == seat.id,
                                                 col(ApiToken.revoked_at).is_(None))).all():
            row.revoked_at = utcnow()
            s.add(row)



def _server_contribution(game: Game, position: int) -> str | None:
    """The contribution the server gives seat ``position`` of ``game`` (one that gives none):
    derived from the game's secret, so fixed by the commitment shown before any player gave theirs
    (app/features/fairness/dealing.py). A game dealt by the older generator has no secret and needs
    none."""
    if game.dealing_secret is None:
        return None
    return dealing.server_contribution(bytes.fromhex(game.dealing_secret), position)


def _kept_for_its_player(seat: Seat, email: str) -> None:
    """Refuse to invite anyone but a rematch seat's own player (its computer: nobody)."""
    number = seat.position + 1
    if seat.is_bot:
        raise Forbidden(f"seat {number} of a rematch is the computer's, as it was in the game "
                        "before", words=(RESERVED_COMPUTER, {"number": number}))
    if email != seat.email:
        raise Forbidden(f"seat {number} of a rematch is its own player's: it is invited again "
                        f"only to {seat.email}, by mail",
                        words=(RESERVED_ADDRESS, {"number": number, "email": seat.email}))


def _contribution(given: str | None) -> str | None:
    """A seat's share of the deal as its client gives it, checked (see
    app/features/fairness/dealing.py); None when none is given: the server then gives the seat the
    one it derives from the game's secret (:func:`_server_contribution`)."""
    if given is None or given == "":
        return None
    try:
        return dealing.check_contribution(given)
    except ValueError as exc:
        raise BadRequest(str(exc)) from None


def _bot_level(position: int, given: Any, bot: bool) -> str:
    """The level a new computer seat (``position``; -1: the seats the start fills) asks for:
    easy when none is given."""
    if given is None or given == "":
        return EASY
    number = position + 1 if position >= 0 else "*"
    if not bot:
        raise BadRequest(f"seat {number}: only a computer seat has a level (give bot: true)",
                         words=(LEVEL_NOT_BOT, {"number": number}))
    if given not in BOT_LEVELS:
        raise BadRequest(f"seat {number}: the computer's level is easy, normal or strong, not "
                         f"'{given}'", words=(BAD_LEVEL, {"number": number, "level": given}))
    return str(given)
