"""Rendering an outbox row into a mail: Jinja2 text + HTML, CSS inlined, the board as a PNG.

Everything a mail shows is recomputed here, at send time, from the game state after the row's
``seq`` moves (the outbox row holds only what cannot be recomputed, such as an invitation link).
A decision mail carries:

- the situation in words (the game's own: ``GameUI.mail_situation``), the moves since the
  recipient's last move,
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
globals are :mod:`app.mail.templating`'s). A game's own folder (``app/games/<game>/templates/
mail/``) holds its decision mails, its ``_parts`` and its sentences in the shared mails
(``_words.txt``), and may override a shared template by name.
The ``.txt`` template's ``subject`` block is the Subject.

:meth:`MailRenderer.render` returns a :class:`Rendered` mail (or one with ``skip`` set, when
the mail is no longer worth sending: its decision was answered already, its invitation was
re-issued); :func:`build_message` (:mod:`app.mail.message`, also importable from here) makes the
:class:`email.message.EmailMessage` with every header.

The renderer is one class, :class:`MailRenderer`, put together from parts: this module holds
its entry points, what each kind of mail renders and the templates' use;
:mod:`app.mail.context` the parts of the templates' context (the game and its players in words,
the decision, the options and their links, the recent moves, the chat, the clock's notices) and
:mod:`app.mail.drawing` the board picture (drawn for a mail, or for a signed image address).
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any

import css_inline
from jinja2 import Environment
from markupsafe import Markup
from sqlmodel import Session, col, select

from app.core.config import Settings
from app.core.data import data_folder
from app.core.i18n import language, translate
from app.core.models import ACTIVE, Game, OutboxMail, Seat
from app.features import template_folders
from app.features.chat.messages import games_with_messages
from app.games import template_folder
from app.games.ui import game_ui
from app.mail.context import MEMO, MailContext, session_memo
from app.mail.drawing import BoardDrawing
from app.mail.images import (
    LINK,
    BoardPicture,
    PictureCache,
    highlight_of,
    picture_mode,
    picture_url,
)
from app.mail.message import MAIL_POLICY, Rendered, build_message, envelope_sender
from app.mail.notify import (
    DIGEST,
    INVITATION,
    NOTICE_KINDS,
    REMINDER,
    REPLY_KINDS,
    SIGNIN,
    STARTED,
    decision_kinds,
    known_kinds,
    mail_mode,
    wants_mail,
)
from app.mail.templating import Loose, template_environment, tidy_text
from app.mail.wording import and_list, format_day, format_duration, format_time
from app.service import GameService, NotFound
from app.web.linktokens import (
    SIGNIN_LINK_MAX_AGE,
    digest_unsubscribe_url,
    unsubscribe_url,
)


def mail_folders(shared: Path) -> list[Path]:
    """The mail templates' folders: ``shared`` (``templates/mail``), then every feature's own
    (``app/features/<feature>/templates/mail``: the clock's deadline mails, a takeback's...)."""
    return [shared, *(folder / "mail" for folder in template_folders()
                      if (folder / "mail").is_dir())]


class MailError(RuntimeError):
    """A row that cannot be rendered (its game or seat is gone, an unknown kind)."""


class MailRenderer(MailContext, BoardDrawing):
    """Renders outbox rows of one server (its settings, templates and game service)."""

    def __init__(self, service: GameService, templates: Path | None = None) -> None:
        """``templates``: the shared mail templates' folder (default: ``templates/mail``),
        before the features' own (:func:`mail_folders`)."""
        self.service = service
        self.settings: Settings = service.settings
        self.templates = mail_folders(templates or data_folder("templates") / "mail")
        self.env = self._environment(self.templates)
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
        """The templates of a game's mails: its own folder (``app/games/<game>/templates/mail/``:
        its decision mails, its ``_parts`` and ``_words``) before the shared one, so a game
        may also override a shared template, ``_base`` included, by its file name."""
        if game_name is None:
            return self.env
        env = self._game_envs.get(game_name)
        if env is None:
            env = self._game_envs[game_name] = self._environment(
                [template_folder(game_name) / "mail", *self.templates])
        return env

    # -------------------------------------------------------------- entry points

    def render(self, row: OutboxMail, *, always: bool = False,
               session: Session | None = None) -> Rendered:
        """The mail of ``row``. When it is no longer worth sending, the result has ``skip``
        set and (unless ``always``, as the dev page asks) nothing else is rendered. A sender
        rendering a batch passes one read ``session`` for all of it (else each mail opens
        its own)."""
        if row.kind not in known_kinds():
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
            "inviter": self._inviter(game, seat, seats, lang),
            "link": payload.get("link") or "",
            "players": [self._player(other, lang, game_ui(game.ruleset)) for other in seats],
            "open_seats": sum(1 for other in seats if other.accepted_at is None),
        }
        return self._finish(row.kind, lang, context, {}, game, seat, skip)

    def _inviter(self, game: Game, seat: Seat, seats: Sequence[Seat], lang: str) -> str | None:
        """Who invites: the name the owner's seat goes by (the creator sets the game up for its
        first seat unless another owner is given), None when the owner has no named seat or is
        the reader (the invitation then says "you are invited", as before)."""
        owner = next((other for other in seats if game.owner_email and not other.is_bot
                      and other.email == game.owner_email), None)
        if owner is None or owner.id == seat.id or not owner.player_name:
            return None
        return self._display_name(owner, lang)

    def _game_mail(self, s: Session, game: Game, seat: Seat, row: OutboxMail,
                   always: bool) -> Rendered:
        lang = language(seat.language)
        seq = int(row.seq or 0)
        # A mail is nearly always about the log's head: loaded as such once for the batch's
        # mails of the game (read, never changed, by each), and kept by the service for the
        # next batch's
        at_head = session_memo(s, ("loaded", game.uid), partial(self.service.load, s, game.uid))
        head = at_head.decision_seq  # the decision pending now opened after this entry
        asks = row.kind in decision_kinds() or row.kind == REMINDER
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
                "results": self._results(loaded, seat, lang),
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
                        "to_act": [], "winners": None, "results": None}
            if row.kind in decision_kinds() or row.kind in (REMINDER, STARTED):
                raise MailError(f"mail {row.id}: game {game.uid} has not started")
        if row.kind in NOTICE_KINDS:
            context |= self._notice(loaded, seat, row, lang)
        context["chat"] = self._chat(s, game, seat, row)
        context["chat_heading"] = translate(lang, "Chat since your last mail")
        context.setdefault("board_src", None)
        return self._finish(row.kind, lang, context, images, game, seat, skip)

    def _digest(self, s: Session, row: OutboxMail, always: bool) -> Rendered:
        """The daily digest of an address: each game waiting for it with its decision, its
        options and the chat since the seat's last mail (a game mail or an earlier digest
        that listed the game); its List-Unsubscribe address covers every seat it lists."""
        payload = row.payload or {}
        lang = language(str(payload.get("language", "en")))
        entries = []
        games: list[Game] = []
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
            games.append(game)
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
        for entry, game in zip(entries, games, strict=True):
            if entry["waiting"]:
                self._digest_asks(entry, game, lang)
        skip = None if any(e["waiting"] for e in entries) else "no game is waiting any more"
        bare = self._skipped(row, lang, None, None, skip, always)
        if bare is not None:
            return bare
        rendered = self._finish(DIGEST, lang, context, {}, None, None, skip)
        if covered:
            rendered.unsubscribe_url = digest_unsubscribe_url(
                self.settings.base_url, self.settings.secret_key, row.recipient, covered)
        return rendered

    def _digest_asks(self, entry: dict[str, Any], game: Game, lang: str) -> None:
        """A waiting game's decision and options for the digest, in its own mail templates'
        words (``asks_text``, ``asks_html``): the digest itself is no one game's."""
        env = self.env_for(game.ruleset)
        context = {"lang": lang, "kind": DIGEST, "g": entry, "base_url": self.settings.base_url}
        entry["asks_text"] = env.get_template("_digest_game.txt").render(context)
        entry["asks_html"] = Markup(env.get_template("_digest_game.html").render(context).rstrip())

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
