"""Setting a game up: creating it (its seats' rows made from the request, checked) and the start
(the deal). Its seats are filled in between (:mod:`.seats`), which takes from here a new seat's
API token, the computer's level and the share of the deal the server gives a seat."""

from __future__ import annotations

import secrets
import uuid
from typing import Any, Final

from sqlalchemy import update
from sqlmodel import Session

from app.core import integers
from app.core.i18n import LANGUAGES, N_
from app.core.logchain import genesis_hash
from app.core.models import ACTIVE, OPEN, ApiToken, Game, Seat, table_of, utcnow
from app.features.clock.arithmetic import ClockSettings
from app.features.fairness import dealing
from app.games import DEFAULT_GAME
from app.games.apiwords import OLDER_PIECES, OLDER_TEAM
from app.games.base import BOT_LEVELS, EASY, Ruleset, SeatSetup, SetupError

from .errors import (
    GAME_NAME,
    PLAYER_NAME,
    BadRequest,
    NotPlaying,
    checked_line,
    is_address,
    refuse_unseen_in_address,
)
from .exports import seat_setup, setup_json
from .gamesettings import check_game_settings, check_quiet
from .records import AnswerRecorder, GameEvent, Loaded, new_token, record_answer, token_hash
from .writing import LogWriting

COMPUTER_NAME: Final = N_("Computer")
"""The name of a computer seat given none (stored in English, shown in the reader's language)."""
FORMER_PLAYER: Final = N_("a former player")
"""The name of a seat whose player asked to be forgotten (app/features/privacy/): stored in
English, shown in the reader's language."""
NOT_OWNER_ADDRESS: Final = N_("the owner's address '{email}' is not an e-mail address")
NOT_SEAT_ADDRESS: Final = N_("seat {number}: '{email}' is not an e-mail address")
SEAT_PROBLEM: Final = N_("seat {number}: {problem}")
BAD_LEVEL: Final = N_("seat {number}: the computer's level is easy, normal or strong, not "
                      "'{level}'")
LEVEL_NOT_BOT: Final = N_("seat {number}: only a computer seat has a level (give bot: true)")
"""Refusals of a new game a player meets on the new-game page (catalogue messages; a seat is
numbered from 1 there)."""


class SetupCommands(LogWriting):
    """Creating and starting a game."""

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
        rules_name: str = DEFAULT_GAME,
        owner_email: str | None = None,
        idempotency: AnswerRecorder | None = None,
        rematch_of: int | None = None,
        seated: int | None = None,
        kept: bool = False,
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
        client to give once it has the commitment (:meth:`contribute`). ``kept``: every other
        person's seat is kept for its address with no invitation at all (a rematch's: each player
        says yes with :meth:`take_reserved_seat`, or no with :meth:`decline_reserved_seat`)."""
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
        if kept:
            rows = [(self._kept(seat), None) for seat, _ in rows]
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
                    seat.contribution = server_contribution_for(game, seat.position)
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
            if kept:
                created["asked"] = [seat.position for seat, _ in rows
                                    if not seat.is_bot and seat.accepted_at is None]
            if seated is not None:
                created |= {"position": seated, "commitment": game.dealing_commitment,
                            "api_token": new_api_token(s, rows[seated][0],
                                                            "rematch" if rematch_of else "creator")}
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
    def _kept(seat: Seat) -> Seat:
        """``seat`` kept for its address without an invitation (nobody holds a token for it)."""
        seat.invite_token_hash = None
        return seat

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
        what the older fields (:data:`~app.games.apiwords.OLDER_PIECES` and its team) stand for."""
        if "pieces" in spec and spec["pieces"] is not None:
            if not isinstance(spec["pieces"], dict):
                raise BadRequest(f"seat {position + 1}: pieces must be an object")
            if spec.get(OLDER_PIECES) or spec.get(OLDER_TEAM) is not None:
                raise BadRequest(f"seat {position + 1}: give its pieces or its {OLDER_PIECES} "
                                 f"and {OLDER_TEAM}, not both")
            return dict(spec["pieces"])
        names = spec.get(OLDER_PIECES, [])
        if isinstance(names, str):
            names = [names]
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            raise BadRequest(f"seat {position + 1}: {OLDER_PIECES} must be a list of the names "
                             "of its pieces")
        team = spec.get(OLDER_TEAM)
        if team is not None and not integers.in_column(team):
            raise BadRequest(f"seat {position + 1}: {OLDER_TEAM} must be a whole number from "
                             f"{integers.COLUMN_MIN} to {integers.COLUMN_MAX}")
        return rules.pieces_from_fields([n.strip().lower() for n in names], team)

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
        level = checked_bot_level(position, spec.get("level"), bot)
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
            invited_at=utcnow() if invite else None,
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

    def start(
        self, uid: str, creator_token: str | None, *, fill_with_bots: bool = False,
        bot_level: str = EASY, idempotency: AnswerRecorder | None = None,
    ) -> dict[str, Any]:
        """Deal, find the first player and open the first decision (``creator_token`` None:
        an admin starting it); the computer fills the seats not taken at ``bot_level``."""
        bot_level = checked_bot_level(-1, bot_level, True)
        with self.session(write=True) as s:
            game = (self._game(s, uid) if creator_token is None
                    else self._creator_game(s, uid, creator_token))
            if game.status != OPEN or not self._claimed(s, game):
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
                    if seat.declined_at is not None:  # (no longer theirs: the computer's)
                        seat.email = ""
                        seat.player_name = COMPUTER_NAME
                    seat.is_bot = True
                    seat.bot_level = bot_level
                    seat.accepted_at = utcnow()
                if seat.contribution is None:
                    seat.contribution = server_contribution_for(game, seat.position)
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

    @staticmethod
    def _claimed(s: Session, game: Game) -> bool:
        """Whether this transaction is the one that starts the open ``game``: a conditional
        UPDATE, so that of two starts at once (two players' last "yes" to a rematch) one deals
        and the other is told it has started (PostgreSQL: the second waits on the row)."""
        games = table_of(Game)
        claimed = s.execute(update(games).where(games.c.id == game.id, games.c.status == OPEN)
                            .values(status=OPEN))
        return int(getattr(claimed, "rowcount", 0) or 0) == 1

    def start_when_ready(self, uid: str) -> bool:
        """Start a rematch (``games.rematch_of``) once every person's seat of it is taken (each
        player said yes) and nobody said no; whether this call started it. Any other game, or
        one that waits, is left as it is."""
        with self.session() as s:
            game = self._game(s, uid)
            if game.status != OPEN or game.rematch_of is None:
                return False
            seats = self._seats(s, game)
        if any(not seat.is_bot and (seat.accepted_at is None or seat.declined_at is not None)
               for seat in seats):
            return False
        try:
            self.start(uid, None)
        except NotPlaying:  # (another player's yes started it a moment before)
            return False
        return True


def new_api_token(s: Session, seat: Seat, label: str) -> str:
    """A new API token of ``seat`` (stored as its hash; the token is shown once)."""
    token = new_token()
    assert seat.id is not None
    s.add(ApiToken(token_hash=token_hash(token), seat_id=seat.id, label=label))
    return token


def server_contribution_for(game: Game, position: int) -> str | None:
    """The contribution the server gives seat ``position`` of ``game`` (one that gives none):
    derived from the game's secret, so fixed by the commitment shown before any player gave theirs
    (app/features/fairness/dealing.py). A game dealt by the older generator has no secret and needs
    none."""
    if game.dealing_secret is None:
        return None
    return dealing.server_contribution(bytes.fromhex(game.dealing_secret), position)


def checked_bot_level(position: int, given: Any, bot: bool) -> str:
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
