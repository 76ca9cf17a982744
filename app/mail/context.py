"""What a mail's templates are told about its game: the parts of a mail's context.

:class:`MailContext` is the part of :class:`app.mail.render.MailRenderer` that puts them
together: the game and its players in words, the seat's links (the game page, each option's
one-click link), the pending decision and the options the mail offers (with the computer's
suggestion and each certain option's outcome), the situation, the moves since the recipient's
last one, the winners, the chat since the seat's last mail, and what the clock's notices show
beyond their payload. What a batch of mails about one game shares is read once per session
(:func:`session_memo`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import partial
from typing import Any, Final, NamedTuple, TypeVar

from sqlalchemy import bindparam, func
from sqlmodel import Session, col, select

from app.core.config import Settings
from app.core.i18n import translate
from app.core.models import Game, Move, OutboxMail, Seat
from app.features.chat.messages import has_messages as chat_has_messages
from app.features.chat.messages import since as chat_since
from app.features.clock.arithmetic import ClockError, ClockSettings
from app.games import piece_names
from app.games.base import EASY
from app.games.placings import result_rows, your_place
from app.games.ui import GameUI, game_ui
from app.mail.addresses import reply_address
from app.mail.notify import DIGEST, PAUSED, mail_mode
from app.mail.templating import Loose
from app.mail.wording import parse_time
from app.service import FORMER_PLAYER, GameService, Loaded, pause_reason_timeout
from app.web.linktokens import OptionLink, make_game_token, make_option_token

T = TypeVar("T")

RECENT_MOVES: Final = 15
CHAT_IN_MAIL: Final = 20
"""The newest chat messages a mail shows of those since the recipient's last mail."""
DIGESTS_LOOKED_BACK: Final = 31
"""The recent digests of an address searched for the last that listed a game (its chat part
shows what was said since)."""


class LoggedMove(NamedTuple):
    """What a mail's recent moves show of a log entry (its columns read without the rest of
    the row: no time to parse, no row object to build)."""

    seq: int
    seat: int | None
    input: str
    outcomes: list[Any]


_LATEST_MOVES: Final = (
    select(Move.seq, Move.seat, Move.input, Move.outcomes)
    .where(Move.game_id == bindparam("game_id"), Move.seq <= bindparam("seq"))
    .order_by(col(Move.seq).desc()).limit(RECENT_MOVES + 40))
"""The latest log entries up to ``seq`` that a mail's recent moves are picked from (the
statement built once)."""


class MailContext:
    """The parts of a mail's template context (a part of :class:`MailRenderer
    <app.mail.render.MailRenderer>`, which sets the server's service and settings)."""

    service: GameService
    settings: Settings

    def _base(self, game: Game, seat: Seat, lang: str, row: OutboxMail) -> dict[str, Any]:
        payload = Loose(row.payload or {})
        return {
            "lang": lang,
            "kind": row.kind,
            "seq": row.seq,
            "payload": payload,
            "started": bool(payload.get("started")),
            "game": self._game_words(game, lang),
            "you": self._player(seat, lang, game_ui(game.ruleset)),
            "game_url": self._game_url(game, seat),
            "reply_to": reply_address(self.settings.secret_key, self.settings.mail_domain,
                                      game.uid, seat.position),
            "base_url": self.settings.base_url,
            "timezone": (seat.notify or {}).get("timezone"),
            "is_owner": bool(seat.email) and seat.email == game.owner_email,
            "chat": [],
            "chat_heading": "",
        }

    @staticmethod
    def _chat(s: Session, game: Game, seat: Seat, row: OutboxMail) -> list[dict[str, Any]]:
        """The others' chat messages since the seat's last mail was sent (all of them before
        its first): the mail's "chat since your last mail" part, instead of a mail per
        message. A daily digest that listed the game counts as a mail of the seat."""
        if not session_memo(s, ("has chat", game.id), partial(chat_has_messages, s, game)):
            # (most games: one indexed lookup a batch, no more)
            return []
        last_sent = s.exec(
            select(func.max(OutboxMail.sent_at))
            .where(OutboxMail.game_id == game.id,  # (indexed; seat_id is not)
                   OutboxMail.seat_id == seat.id, OutboxMail.id != row.id)
        ).one()
        if seat.email:
            digests = s.exec(
                select(OutboxMail.sent_at, OutboxMail.payload)
                .where(OutboxMail.kind == DIGEST, OutboxMail.recipient == seat.email,
                       OutboxMail.id != row.id, col(OutboxMail.sent_at).is_not(None))
                .order_by(col(OutboxMail.sent_at).desc()).limit(DIGESTS_LOOKED_BACK)
            ).all()
            listed = next((sent for sent, payload in digests
                           if any(item.get("game_id") == game.id
                                  and item.get("position") == seat.position
                                  for item in (payload or {}).get("games", []))), None)
            if listed is not None and (last_sent is None or listed > last_sent):
                last_sent = listed
        return chat_since(s, game, last_sent, reader=seat.position, limit=CHAT_IN_MAIL)

    @staticmethod
    def _person(seat: Seat) -> str:
        """The person's name of a seat, also once the computer took it over."""
        return seat.player_name or (seat.email.split("@")[0] if seat.email else "") or "?"

    def _game_words(self, game: Game, lang: str) -> dict[str, Any]:
        ui = game_ui(game.ruleset)
        return {
            "uid": game.uid,
            "name": game.name,
            "label": game.name or f"#{game.uid[:8]}",
            "title": ui.title,
            "variant": ui.mail_variant(game.variant, lang),
            "boards": ui.setup_titles(dict(game.setup)),
            "reply_example": ui.reply_example,
            "status": game.status,
            "settings": Loose(game.settings or {}),
        }

    def _player(self, seat: Seat, lang: str, ui: GameUI) -> dict[str, Any]:
        name = self._display_name(seat, lang)
        pieces = [ui.piece_name(t, lang) for t in piece_names(ui.name, seat.pieces)]
        return {
            "position": seat.position,
            "name": name,
            "pieces": pieces,
            "named": f"{name} ({', '.join(pieces)})" if pieces else name,
            "bot": seat.is_bot,
            "resigned": seat.resigned_at is not None,
            "accepted": seat.accepted_at is not None,
            "digest": mail_mode(seat) == DIGEST,
        }

    def _game_url(self, game: Game, seat: Seat) -> str:
        token = make_game_token(self.settings.secret_key, seat.secret, game.uid, seat.position)
        return f"{self.settings.base_url}/g/{token}"

    def _option_url(self, game: Game, seat: Seat, seq: int, option: str) -> str:
        link = OptionLink(game.uid, seat.position, seq, option)
        token = make_option_token(self.settings.secret_key, seat.secret, link)
        return f"{self.settings.base_url}/l/{token}"

    def _decision(self, pending: Mapping[str, Any] | None, loaded: Loaded,
                  lang: str) -> dict[str, Any] | None:
        """The pending decision for the templates: its kind, the mail that asks for it, the
        player whose piece decides, and the game's own details (``GameUI.mail_decision``)."""
        if pending is None:
            return None
        ui = game_ui(loaded.game.ruleset)
        piece = ui.decider(pending)
        owner = next((seat for seat in loaded.seats
                      if piece in loaded.rules.piece_names(seat.pieces)), None)
        return {
            "kind": pending.get("kind"),
            "mail_kind": ui.mail_kind(pending),
            "sentence": ui.describe_decision(pending, lang),
            "owner": self._player(owner, lang, ui) if owner is not None else None,
        } | ui.mail_decision(pending, lang)

    def _options(self, loaded: Loaded, seat: Seat, lang: str) -> list[dict[str, Any]]:
        """The options the mail offers the seat, each with its signed link (the game's UI
        may offer a few of very many, ``GameUI.mail_choices``)."""
        rules = loaded.rules
        state = loaded.state
        ui = game_ui(loaded.game.ruleset)
        view = rules.view(state, None, True)
        legal = rules.options(state, seat.position)
        chosen = ui.mail_choices(legal, view, lambda: self._suggestion(loaded, seat))
        world = None if rules.simultaneous(state) else rules.viewer_world(state, seat.position)
        result = []
        for option in chosen:
            words = ui.mail_option(option, view, partial(self._after, loaded, world, seat,
                                                         option), lang)
            result.append(words | {
                "text": option,
                "url": self._option_url(loaded.game, seat, loaded.seq, option),
            })
        return result

    @staticmethod
    def _suggestion(loaded: Loaded, seat: Seat) -> str | None:
        """The computer's answer for ``seat`` (played on a copy of the state), at easy level:
        it is computed while the mail is rendered, inside the move's transaction."""
        rules = loaded.rules
        try:
            return rules.bot_move(rules.load(rules.dump(loaded.state)), seat.position, EASY)
        except Exception:  # a suggestion is a nicety: the mail goes out without it
            return None

    @staticmethod
    def _after(loaded: Loaded, world: Any, seat: Seat, option: str) -> Mapping[str, Any] | None:
        """The spectator view after ``option``, when it is certain, played in the world the
        seat could know (as the game page's preview: :meth:`GameService.previews`)."""
        if world is None:
            return None
        rules = loaded.rules
        try:
            return rules.preview(rules.copy(world), seat.position, option)
        except ValueError:
            return None

    def _situation(self, loaded: Loaded, seat: Seat, lang: str) -> dict[str, Any]:
        view = loaded.view(seat.position)
        owners = {piece: (self._display_name(owner, lang), owner.position == seat.position)
                  for owner in loaded.seats for piece in loaded.rules.piece_names(owner.pieces)}
        return game_ui(loaded.game.ruleset).mail_situation(view, owners, lang)

    def _recent(self, s: Session, loaded: Loaded, seat: Seat, lang: str) -> list[dict[str, Any]]:
        """What the others did since the recipient's previous turn: walking back from ``seq``,
        the recipient's own latest moves are skipped, then the others' moves are collected
        until the recipient's previous move (at most RECENT_MOVES)."""
        moves = session_memo(s, ("latest moves", loaded.game_id, loaded.seq), lambda: [
            LoggedMove(*row) for row in s.exec(
                _LATEST_MOVES, params={"game_id": loaded.game_id, "seq": loaded.seq}).all()])
        picked: list[LoggedMove] = []
        for move in moves:
            if move.seat == seat.position:
                if picked:
                    break
                continue
            picked.append(move)
            if len(picked) >= RECENT_MOVES:
                break
        by_position = {p.position: p for p in loaded.seats}
        return [session_memo(s, ("move in words", loaded.game_id, move.seq, lang),
                              partial(self._move_words, loaded, move, by_position, lang))
                for move in reversed(picked)]

    def _move_words(self, loaded: Loaded, move: LoggedMove, by_position: Mapping[int, Seat],
                    lang: str) -> dict[str, Any]:
        """A move of the log in words for the recent moves' part (the same for every mail of
        the batch in ``lang`` that shows it, whoever receives it)."""
        ui = game_ui(loaded.game.ruleset)
        outcomes = loaded.rules.redact_outcomes(move.outcomes)
        owner = by_position.get(move.seat) if move.seat is not None else None
        shown = loaded.rules.public_input(move.input)
        return {
            "seq": move.seq,
            "player": self._display_name(owner, lang) if owner is not None else "—",
            "pieces": ([ui.piece_name(t, lang) for t in loaded.rules.piece_names(owner.pieces)]
                       if owner else []),
            "input": shown,
            "words": ui.describe_option(shown, None, lang),
            "outcomes": [ui.mail_outcome(o, lang) for part in outcomes for o in part],
        }

    @staticmethod
    def _display_name(seat: Seat, lang: str) -> str:
        computer = translate(lang, "the computer")
        name = seat.player_name or (seat.email.split("@")[0] if seat.email else "")
        if name == FORMER_PLAYER:  # (a player forgotten: app/features/privacy/)
            name = translate(lang, FORMER_PLAYER)
        if seat.is_bot and (seat.resigned_at is None or not name):
            return computer
        if seat.is_bot:
            return f"{name} ({computer})"
        return name or "?"

    def _winners(self, loaded: Loaded, seat: Seat, lang: str) -> dict[str, Any] | None:
        winner = loaded.game.winner
        if not winner:
            return None
        names = [w for w in winner.split(",") if w]
        players = [p for p in loaded.seats
                   if any(t in loaded.rules.piece_names(p.pieces) for t in names)]
        return {
            "pieces": [game_ui(loaded.game.ruleset).piece_name(t, lang) for t in names],
            "players": [self._display_name(p, lang) for p in players],
            "you": any(p.position == seat.position for p in players),
        }

    def _results(self, loaded: Loaded, seat: Seat, lang: str) -> dict[str, Any] | None:
        """A finished game's results (the API's ``result``): every seat's place and score as
        rows, and the reader's own place in a sentence."""
        result = loaded.result(seat.position)
        if result is None:
            return None
        ui = game_ui(loaded.game.ruleset)
        names = {p.position: self._display_name(p, lang) for p in loaded.seats}
        pieces = {p.position: loaded.rules.piece_names(p.pieces) for p in loaded.seats}
        return {"rows": result_rows(result["places"], ui, names, pieces, seat.position, lang),
                "you": your_place(result["places"], seat.position, ui, lang)}

    def _notice(self, loaded: Loaded, seat: Seat, row: OutboxMail, lang: str) -> dict[str, Any]:
        """What the clock's notices show beyond the payload: the timeout action in force, the
        inputs played in words, the player a notice is about, the setup page."""
        payload = row.payload or {}
        game = loaded.game
        try:
            clock: ClockSettings | None = ClockSettings.of(game.settings or {})
        except (ClockError, TypeError, ValueError):
            clock = None
        action = payload.get("action") or (clock.on_timeout if clock else None)
        inputs = payload.get("inputs")
        if not isinstance(inputs, list):
            joined = payload.get("input")
            inputs = [p.strip() for p in str(joined).split(";")] if joined else []
        ui = game_ui(game.ruleset)
        view = (loaded.view(seat.position)
                if loaded.state is not None else None)
        played = [{"text": str(i), "label": ui.describe_option(str(i), view, lang),
                   "passive": str(i).split(" ")[0] in PASSIVE_INPUTS}
                  for i in inputs if str(i).strip()]
        max_missed = clock.max_missed if clock else 0
        missed = _int(payload.get("missed"))
        left = (max_missed - missed if max_missed and missed is not None
                and not payload.get("handover") and max_missed > missed else None)
        other = None
        position = _int(payload.get("position"))
        if position is not None:
            found = next((p for p in loaded.seats if p.position == position), None)
            other = {
                "position": position,
                "name": str(payload.get("player") or (self._person(found) if found else "?")),
                "pieces": ([ui.piece_name(t, lang) for t in piece_names(ui.name, found.pieces)]
                           if found else []),
                "you": position == seat.position,
            }
        late = None
        pause_reason = ""
        if row.kind == PAUSED:
            # the service's reasons are words for the log: a timeout's names the late seat
            reason = str(payload.get("reason") or "").strip()
            late_seat = next((p for p in loaded.seats
                              if reason == pause_reason_timeout(p.position)), None)
            if late_seat is not None:
                late = {"name": self._person(late_seat),
                        "pieces": [ui.piece_name(t, lang)
                                   for t in piece_names(ui.name, late_seat.pieces)],
                        "you": late_seat.position == seat.position}
            elif reason != DEFAULT_PAUSE_REASON:
                pause_reason = reason
        return {
            "action": _normal_action(action),
            "played": played,
            "missed_left": left,
            "other": other,
            "late": late,
            "pause_reason": pause_reason,
            "outage_seconds": _seconds_between(payload.get("from"), payload.get("until")),
            "setup_url": f"{self.settings.base_url}/games/{game.uid}/setup",
        }


MEMO: Final = "titanpost.mail.memo"
"""The key of :func:`session_memo`'s store in a session's ``info``."""


def session_memo(s: Session, key: tuple[Any, ...], read: Callable[[], T]) -> T:
    """What ``read`` reads in session ``s``, read once per session: the same for every mail
    of a batch about the same game (and moment, when ``key`` names it). Kept in the session's
    ``info``, so it ends with the session and nothing is kept from one batch to the next."""
    memo: dict[tuple[Any, ...], Any] = s.info.setdefault(MEMO, {})
    if key not in memo:
        memo[key] = read()
    found: T = memo[key]
    return found


DEFAULT_PAUSE_REASON: Final = "by its owner"
"""The reason :meth:`GameService.pause` records when none is given."""
TIMEOUT_ACTIONS: Final = ("bot", "pass", "pause")
PASSIVE_INPUTS: Final = ("pass", "lose", "end")
"""Inputs that decline what a decision offers (what a ``pass`` timeout prefers)."""


def _normal_action(action: Any) -> str | None:
    """A timeout action as the templates know it ("default" is the older name of "pass")."""
    action = "pass" if action == "default" else action
    return action if action in TIMEOUT_ACTIONS else None


def _int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def _seconds_between(start: Any, end: Any) -> int | None:
    first, last = parse_time(start), parse_time(end)
    if first is None or last is None:
        return None
    return max(0, int((last - first).total_seconds()))
