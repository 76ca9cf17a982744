"""Rendering an outbox row into a mail: Jinja2 text + HTML, CSS inlined, the board as a PNG.

Everything a mail shows is recomputed here, at send time, from the game state after the row's
``seq`` moves (the outbox row holds only what cannot be recomputed, such as an invitation link).
A decision mail carries:

- the situation in words (round, dice, each Titan's space, lap, life and cards, the moves since
  the recipient's last move),
- the options, each with a signed one-click link (``/l/<token>``, bound to the seat, the decision
  and the option) and the words to reply with,
- the board, drawn by the game UI's ``board_svg`` (:mod:`app.games.ui`) exactly as on the web
  page and rendered to PNG: by a signed image address the web server answers, or as an inline
  image (``cid:``) related to the HTML part (see :mod:`app.mail.images` for which, and why);
  a picture is drawn once per game state, seat view, language and highlight and reused,
- a signed link to the game page (``/g/<token>``).

The clock's notices (``reminder``, ``deadline``, ``paused``, ``resumed``, ``away``, ``outage``,
``handover``) and the notice of a rollback (``rollback``: the game went back to the state after
move ``to``) are game mails too; only a reminder asks for the decision (with its options and the
board), the others report what happened, with the times in UTC and in the player's time zone
(seat ``notify`` ``timezone``) by the ``when`` filter (:func:`app.mail.wording.format_time`).

Templates live in ``templates/mail/<kind>.txt|.html``, one set for every language: their words
are ``tr()``/``tr_plural()`` messages of the gettext catalogue, in the seat's language (the
mail context's ``lang``); dates, lists and lengths of time come from Babel's locale data with
patterns the catalogue gives (:mod:`app.mail.wording`; the Jinja environment, its filters and
globals are :mod:`app.mail.templating`'s). A game's folder (``templates/mail/<ruleset>/``)
overrides a shared template by name, its sentences in the shared mails being ``_words.txt``.
The ``.txt`` template's ``subject`` block is the Subject.

:meth:`MailRenderer.render` returns a :class:`Rendered` mail (or one with ``skip`` set, when
the mail is no longer worth sending: its decision was answered already, its invitation was
re-issued); :func:`build_message` (:mod:`app.mail.message`, also importable from here) makes the
:class:`email.message.EmailMessage` with every header.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from functools import lru_cache, partial
from pathlib import Path
from typing import Any, Final, NamedTuple, TypeVar

import css_inline
from jinja2 import Environment
from sqlalchemy import bindparam, func
from sqlmodel import Session, col, select

from app.core.config import Settings
from app.core.data import data_folder
from app.core.i18n import LANGUAGES, language, translate
from app.core.models import ACTIVE, Game, Move, OutboxMail, Seat
from app.features.chat.messages import games_with_messages
from app.features.chat.messages import has_messages as chat_has_messages
from app.features.chat.messages import since as chat_since
from app.features.clock.arithmetic import ClockError, ClockSettings
from app.games import piece_names
from app.games.base import EASY
from app.games.ui import DEFAULT_GAME, GameUI, game_ui
from app.mail.addresses import reply_address
from app.mail.images import (
    LINK,
    BoardPicture,
    PictureCache,
    PictureError,
    highlight_of,
    picture_mode,
    picture_url,
)
from app.mail.message import MAIL_POLICY, Rendered, build_message, envelope_sender
from app.mail.notify import (
    DECISION_KINDS,
    DIGEST,
    INVITATION,
    KINDS,
    NOTICE_KINDS,
    PAUSED,
    REMINDER,
    REPLY_KINDS,
    SIGNIN,
    STARTED,
    mail_mode,
    wants_mail,
)
from app.mail.templating import Loose, template_environment, tidy_text
from app.mail.wording import and_list, format_day, format_duration, format_time, parse_time
from app.service import GameService, Loaded, NotFound, pause_reason_timeout
from app.web.linktokens import (
    SIGNIN_LINK_MAX_AGE,
    OptionLink,
    digest_unsubscribe_url,
    make_game_token,
    make_option_token,
    unsubscribe_url,
)

T = TypeVar("T")

BOARD_PNG_WIDTH: Final = 800
"""Pixels of the board picture (shown 600 wide in the mail, so it stays sharp on HiDPI)."""
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


class MailError(RuntimeError):
    """A row that cannot be rendered (its game or seat is gone, an unknown kind)."""


@lru_cache(maxsize=64)
def _png(svg: str, width: int, game_name: str = DEFAULT_GAME) -> bytes:
    return game_ui(game_name).board_png(svg, width)


_BOARDS: dict[Any, Any] = {}


def boards_of(game: Game) -> Any:
    """The game's boards as its UI resolves them (``GameUI.boards``), once per process."""
    key = (game.ruleset, _freeze(dict(game.setup)))
    found = _BOARDS.get(key)
    if found is None:
        if len(_BOARDS) > 64:
            _BOARDS.clear()
        found = _BOARDS[key] = game_ui(game.ruleset).boards(dict(game.setup))
    return found


def _freeze(value: Any) -> Any:
    if isinstance(value, dict):
        return tuple(sorted((k, _freeze(v)) for k, v in value.items()))
    if isinstance(value, list):
        return tuple(_freeze(v) for v in value)
    return value


class MailRenderer:
    """Renders outbox rows of one server (its settings, templates and game service)."""

    def __init__(self, service: GameService, templates: Path | None = None) -> None:
        """``templates``: the mail templates' folder (default: ``templates/mail``)."""
        self.service = service
        self.settings: Settings = service.settings
        self.templates = templates or data_folder("templates") / "mail"
        self.env = self._environment([self.templates])
        self._game_envs: dict[str, Environment] = {}
        self.inliner = css_inline.CSSInliner(
            load_remote_stylesheets=False, keep_at_rules=True
        )
        self.picture_mode = picture_mode(self.settings)
        self.pictures = PictureCache()

    def _environment(self, folders: list[Path]) -> Environment:
        """The templates of ``folders``, looked at again on disk only in development."""
        return template_environment(tuple(folders), reload=self.settings.env == "development")

    def env_for(self, game_name: str | None) -> Environment:
        """The templates of a game's mails: its own folder (``templates/mail/<ruleset>/``)
        before the shared one, so a game overrides a shared template, ``_base`` or ``_parts``
        included, by its file name."""
        if game_name is None:
            return self.env
        env = self._game_envs.get(game_name)
        if env is None:  # (the folder looked for once per game)
            env = self._game_envs[game_name] = self._environment(
                [self.templates / game_name, self.templates]
            ) if (self.templates / game_name).is_dir() else self.env
        return env

    # -------------------------------------------------------------- entry points

    def render(self, row: OutboxMail, *, always: bool = False,
               session: Session | None = None) -> Rendered:
        """The mail of ``row``. When it is no longer worth sending, the result has ``skip``
        set and (unless ``always``, as the dev page asks) nothing else is rendered. A sender
        rendering a batch passes one read ``session`` for all of it (else each mail opens
        its own)."""
        if row.kind not in KINDS:
            raise MailError(f"unknown mail kind '{row.kind}'")
        if session is not None:
            return self._render(session, row, always)
        with self.service.session() as s:
            return self._render(s, row, always)

    def prefetch(self, s: Session, rows: Sequence[OutboxMail]) -> None:
        """Read the games and seats of a batch of rows in two queries into ``s`` (the
        session then has them for :meth:`render`, instead of two queries a mail), which of
        the games have chat (one query instead of one a game), and the games' states that the
        service does not hold (three queries instead of two or three a game)."""
        games = {row.game_id for row in rows if row.game_id is not None}
        seats = {row.seat_id for row in rows if row.seat_id is not None}
        kept: list[Any] = s.info.setdefault("titanpost.mail.prefetched", [])
        if games:  # (kept: the session's identity map holds its rows only weakly)
            read = list(s.exec(select(Game).where(col(Game.id).in_(sorted(games)))).all())
            kept += read
            self.service.warm_states(s, read)
            chatting = games_with_messages(s, games)  # (as _chat asks, for all in one)
            memo: dict[tuple[Any, ...], Any] = s.info.setdefault(MEMO, {})
            for game_id in games:
                memo.setdefault(("has chat", game_id), game_id in chatting)
        if seats:
            kept += s.exec(select(Seat).where(col(Seat.id).in_(sorted(seats)))).all()

    def _render(self, s: Session, row: OutboxMail, always: bool) -> Rendered:
        if row.kind == DIGEST:
            return self._digest(s, row, always)
        if row.kind == SIGNIN:
            return self._signin(row, always)
        if row.kind in REPLY_KINDS:
            return self._reply(s, row)
        game, seat = self._game_and_seat(s, row)
        if row.kind == INVITATION:
            return self._invitation(s, game, seat, row, always)
        return self._game_mail(s, game, seat, row, always)

    @staticmethod
    def _skipped(row: OutboxMail, lang: str, game: Game | None, seat: Seat | None,
                 why: str | None, always: bool) -> Rendered | None:
        """The bare result for a mail not worth rendering, or None to render it."""
        if why is None or always:
            return None
        return Rendered(row.kind, lang, "", "", "", {}, game.uid if game else None,
                        seat.position if seat else None, why)

    # -------------------------------------------------------------- per kind

    def _game_and_seat(self, s: Session, row: OutboxMail) -> tuple[Game, Seat]:
        game = s.get(Game, row.game_id) if row.game_id is not None else None
        seat = s.get(Seat, row.seat_id) if row.seat_id is not None else None
        if game is None or seat is None:
            raise MailError(f"mail {row.id}: its game or seat no longer exists")
        return game, seat

    def _reply(self, s: Session, row: OutboxMail) -> Rendered:
        """An answer to a mailed-in move: its subject and text were written by the inbound
        worker; it threads under the game and keeps the seat's reply address."""
        payload = row.payload or {}
        game = s.get(Game, row.game_id) if row.game_id is not None else None
        seat = s.get(Seat, row.seat_id) if row.seat_id is not None else None
        lang = language(seat.language) if seat is not None else "en"
        text = str(payload.get("text", "")).rstrip() + "\n"
        paragraphs = "".join(
            f"<p>{html.escape(block).replace(chr(10), '<br>')}</p>"
            for block in text.strip().split("\n\n")
        )
        return Rendered(row.kind, lang, str(payload.get("subject", "Titan Post")), text,
                        f"<!doctype html><html><body>{paragraphs}</body></html>", {},
                        game.uid if game is not None else None,
                        seat.position if seat is not None else None)

    def _invitation(self, s: Session, game: Game, seat: Seat, row: OutboxMail,
                    always: bool) -> Rendered:
        lang = language(seat.language)
        payload = row.payload or {}
        skip = None
        if seat.accepted_at is not None and not seat.is_bot:
            skip = "the invitation was accepted before the mail went out"
        elif seat.invite_token_hash is None or (
            payload.get("invite_hash") and seat.invite_token_hash != payload.get("invite_hash")
        ):
            skip = "the invitation was withdrawn or issued again"
        bare = self._skipped(row, lang, game, seat, skip, always)
        if bare is not None:
            return bare
        seats = self.service.seats(s, game)
        context = self._base(game, seat, lang, row) | {
            "link": payload.get("link") or "",
            "players": [self._player(other, lang, game_ui(game.ruleset)) for other in seats],
            "open_seats": sum(1 for other in seats if other.accepted_at is None),
        }
        return self._finish(row.kind, lang, context, {}, game, seat, skip)

    def _game_mail(self, s: Session, game: Game, seat: Seat, row: OutboxMail,
                   always: bool) -> Rendered:
        lang = language(seat.language)
        seq = int(row.seq or 0)
        # A mail is nearly always about the log's head: loaded as such once for the batch's
        # mails of the game (read, never changed, by each), and kept by the service for the
        # next batch's
        at_head = _session_memo(s, ("loaded", game.uid), partial(self.service.load, s, game.uid))
        head = at_head.decision_seq  # the decision pending now opened after this entry
        asks = row.kind in (*DECISION_KINDS, REMINDER)
        skip = None
        if not wants_mail(seat, row.kind):
            skip = f"the player's mail setting is now {mail_mode(seat)}"
            bare = self._skipped(row, lang, game, seat, skip, always)
            if bare is not None:
                return bare
        if asks and (head != seq or game.status != ACTIVE):
            skip = "the decision was answered before the mail went out"
            bare = self._skipped(row, lang, game, seat, skip, always)
            if bare is not None:
                return bare
        loaded = at_head if at_head.seq == seq else self.service.load(s, game.uid, upto=seq)
        context = self._base(game, seat, lang, row)
        images: dict[str, bytes] = {}
        state = loaded.state
        if state is not None:
            rules = loaded.rules
            ui = game_ui(game.ruleset)
            pending = rules.pending(state)
            to_act = loaded.to_act()  # a sealed answer (a plan) is no longer owed
            mine = seat.position in to_act
            if asks and not mine:
                skip = "the decision is not this player's any more"
                bare = self._skipped(row, lang, game, seat, skip, always)
                if bare is not None:
                    return bare
            options = self._options(loaded, seat, lang) if asks and mine else []
            highlight = sorted({o["dest"] for o in options if o["dest"]}
                               | {o["space"] for o in options if o["space"]})
            context |= {
                "decision": self._decision(pending, loaded, lang),
                "options": options,
                "situation": self._situation(loaded, seat, lang),
                "recent": self._recent(s, loaded, seat, lang),
                "to_act": [self._player(loaded.seat(p), lang, ui) for p in to_act],
                "winners": self._winners(loaded, seat, lang),
            }
            if row.kind not in NOTICE_KINDS or row.kind == REMINDER:
                # the clock's other notices report what happened: no board picture
                picture = BoardPicture(game.uid, loaded.seq, seat.position, lang,
                                       highlight_of(highlight))
                if self.picture_mode == LINK and not loaded.sealed:
                    context["board_src"] = picture_url(self.settings, picture)
                else:
                    cid = self._cid(game.uid, seq, seat.position)
                    images[cid] = self._board(loaded, picture)
                    context["board_src"] = f"cid:{cid}"
        else:
            context |= {"decision": None, "options": [], "situation": None, "recent": [],
                        "to_act": [], "winners": None}
            if row.kind in (*DECISION_KINDS, REMINDER, STARTED):
                raise MailError(f"mail {row.id}: game {game.uid} has not started")
        if row.kind in NOTICE_KINDS:
            context |= self._notice(loaded, seat, row, lang)
        context["chat"] = self._chat(s, game, seat, row)
        context["chat_heading"] = translate(lang, "Chat since your last mail")
        context.setdefault("board_src", None)
        return self._finish(row.kind, lang, context, images, game, seat, skip)

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
                "titans": ([ui.piece_name(t, lang) for t in piece_names(ui.name, found.pieces)]
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
                        "titans": [ui.piece_name(t, lang)
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

    def _digest(self, s: Session, row: OutboxMail, always: bool) -> Rendered:
        """The daily digest of an address: each game waiting for it with its decision, its
        options and the chat since the seat's last mail (a game mail or an earlier digest
        that listed the game); its List-Unsubscribe address covers every seat it lists."""
        payload = row.payload or {}
        lang = language(str(payload.get("language", "en")))
        entries = []
        covered: list[tuple[str, int]] = []
        for item in payload.get("games", []):
            game = s.get(Game, item.get("game_id"))
            if game is None:
                continue
            loaded = self.service.load(s, game.uid)
            try:
                seat = loaded.seat(int(item["position"]))
            except (NotFound, KeyError, TypeError, ValueError):  # a seat that is gone
                continue
            covered.append((game.uid, seat.position))
            state = loaded.state
            waiting = (
                state is not None
                and game.status == "active"
                and seat.position in loaded.rules.to_act(state)
            )
            entries.append({
                "game": self._game_words(game, lang),
                "game_url": self._game_url(game, seat),
                "waiting": waiting,
                "decision": self._decision(loaded.rules.pending(state), loaded, lang)
                if waiting and state is not None else None,
                "options": self._options(loaded, seat, lang) if waiting else [],
                "seq": loaded.seq,
                "chat": self._chat(s, game, seat, row),
            })
        context = {
            "lang": lang,
            "kind": DIGEST,
            "date": payload.get("date", ""),
            "games": entries,
            "waiting": sum(1 for e in entries if e["waiting"]),
            "payload": Loose(payload),
            "base_url": self.settings.base_url,
        }
        skip = None if any(e["waiting"] for e in entries) else "no game is waiting any more"
        bare = self._skipped(row, lang, None, None, skip, always)
        if bare is not None:
            return bare
        rendered = self._finish(DIGEST, lang, context, {}, None, None, skip)
        if covered:
            rendered.unsubscribe_url = digest_unsubscribe_url(
                self.settings.base_url, self.settings.secret_key, row.recipient, covered)
        return rendered

    def _signin(self, row: OutboxMail, always: bool) -> Rendered:
        """A sign-in link (app/features/signin/signins.py): no game, no seat; not sent once it has
        expired."""
        payload = row.payload or {}
        lang = language(str(payload.get("language", "en")))
        token = str(payload.get("token", ""))
        created = row.created_at if row.created_at.tzinfo else row.created_at.replace(tzinfo=UTC)
        skip = ("the sign-in link has expired" if (datetime.now(UTC) - created).total_seconds()
                > SIGNIN_LINK_MAX_AGE else None)
        bare = self._skipped(row, lang, None, None, skip, always)
        if bare is not None:
            return bare
        context = {"lang": lang, "kind": SIGNIN, "address": row.recipient, "code": token,
                   "url": f"{self.settings.base_url}/signin/{token}",
                   "minutes": SIGNIN_LINK_MAX_AGE // 60, "base_url": self.settings.base_url}
        return self._finish(SIGNIN, lang, context, {}, None, None, skip)

    # -------------------------------------------------------------- pieces of context

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
        if not _session_memo(s, ("has chat", game.id), partial(chat_has_messages, s, game)):
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
            "circuits": ui.setup_titles(dict(game.setup)),
            "status": game.status,
            "settings": Loose(game.settings or {}),
        }

    def _player(self, seat: Seat, lang: str, ui: GameUI) -> dict[str, Any]:
        name = self._display_name(seat, lang)
        pieces = [ui.piece_name(t, lang) for t in piece_names(ui.name, seat.pieces)]
        return {
            "position": seat.position,
            "name": name,
            "titans": pieces,
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
        piece = pending.get("titan", pending.get("crew"))
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
        moves = _session_memo(s, ("latest moves", loaded.game_id, loaded.seq), lambda: [
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
        return [_session_memo(s, ("move in words", loaded.game_id, move.seq, lang),
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
            "titans": ([ui.piece_name(t, lang) for t in loaded.rules.piece_names(owner.pieces)]
                       if owner else []),
            "input": shown,
            "words": ui.describe_option(shown, None, lang),
            "outcomes": [ui.mail_outcome(o, lang) for part in outcomes for o in part],
        }

    @staticmethod
    def _display_name(seat: Seat, lang: str) -> str:
        computer = translate(lang, "the computer")
        name = seat.player_name or (seat.email.split("@")[0] if seat.email else "")
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
            "titans": [game_ui(loaded.game.ruleset).piece_name(t, lang) for t in names],
            "players": [self._display_name(p, lang) for p in players],
            "you": any(p.position == seat.position for p in players),
        }

    def _board(self, loaded: Loaded, picture: BoardPicture) -> bytes:
        """The board picture of a mail, drawn once and reused (unless the view shows answers
        sealed to a simultaneous decision, which are not in the log)."""
        if loaded.sealed:
            return _draw(loaded, picture)
        return self.pictures.get(picture, partial(_draw, loaded))

    def picture_png(self, picture: BoardPicture) -> bytes:
        """The PNG a signed image address names (drawn on the first request, then kept):
        the seat's view after log entry ``picture.seq``, without sealed answers. Raises
        PictureError when there is no such game, entry or seat."""
        return self.pictures.get(picture, self._draw_from_log)

    def picture_svg(self, picture: BoardPicture) -> str:
        """The SVG of the picture a signed image address names (what :meth:`picture_png`
        renders; the hidden-information tests read its words)."""
        return _svg(self._loaded_for(picture), picture)

    def _draw_from_log(self, picture: BoardPicture) -> bytes:
        return _draw(self._loaded_for(picture), picture)

    def _loaded_for(self, picture: BoardPicture) -> Loaded:
        with self.service.session() as s:
            try:
                loaded = self.service.load(s, picture.game, upto=picture.seq)
            except NotFound:
                raise PictureError("this board picture's game does not exist (any more)") \
                    from None
        if (loaded.state is None or loaded.seq != picture.seq or picture.lang not in LANGUAGES
                or all(seat.position != picture.seat for seat in loaded.seats)):
            raise PictureError("this board picture's game has no such moment or seat")
        loaded.sealed = {}
        return loaded

    def _cid(self, uid: str, seq: int, position: int) -> str:
        return f"board.{uid}.{seq}.{position}@{self.settings.mail_domain}"

    # -------------------------------------------------------------- templates

    def _finish(self, kind: str, lang: str, context: dict[str, Any], images: dict[str, bytes],
                game: Game | None, seat: Seat | None, skip: str | None) -> Rendered:
        env = self.env_for(game.ruleset if game is not None else None)
        text_t = env.get_template(f"{kind}.txt")
        html_t = env.get_template(f"{kind}.html")
        subject = "".join(text_t.blocks["subject"](text_t.new_context(context))).strip()
        subject = " ".join(subject.split())
        context = context | {"subject": subject}
        text = tidy_text(text_t.render(context))
        html = self.inliner.inline(html_t.render(context))
        rendered = Rendered(kind, lang, subject, text, html, images,
                            game.uid if game is not None else None,
                            seat.position if seat is not None else None, skip)
        if game is not None and seat is not None:
            rendered.unsubscribe_url = unsubscribe_url(
                self.settings.base_url, self.settings.secret_key, seat.secret, game.uid,
                seat.position)
        return rendered


MEMO: Final = "titanpost.mail.memo"
"""The key of :func:`_session_memo`'s store in a session's ``info``."""


def _session_memo(s: Session, key: tuple[Any, ...], read: Callable[[], T]) -> T:
    """What ``read`` reads in session ``s``, read once per session: the same for every mail
    of a batch about the same game (and moment, when ``key`` names it). Kept in the session's
    ``info``, so it ends with the session and nothing is kept from one batch to the next."""
    memo: dict[tuple[Any, ...], Any] = s.info.setdefault(MEMO, {})
    if key not in memo:
        memo[key] = read()
    found: T = memo[key]
    return found


def _svg(loaded: Loaded, picture: BoardPicture) -> str:
    """The board of ``loaded`` as seat ``picture.seat`` sees it."""
    return game_ui(loaded.game.ruleset).board_svg(
        loaded.view(picture.seat), boards_of(loaded.game), highlight=list(picture.highlight),
        lang=picture.lang)


def _draw(loaded: Loaded, picture: BoardPicture) -> bytes:
    """The board of ``loaded`` as seat ``picture.seat`` sees it, as a PNG."""
    return _png(_svg(loaded, picture), BOARD_PNG_WIDTH, loaded.game.ruleset)


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


__all__ = [
    "MAIL_POLICY",
    "MailError",
    "MailRenderer",
    "Rendered",
    "and_list",
    "build_message",
    "envelope_sender",
    "format_day",
    "format_duration",
    "format_time",
]
