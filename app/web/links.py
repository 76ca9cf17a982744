"""Signed links from the mails: ``/l/<token>`` answers a decision, ``/g/<token>`` opens a game.

A GET never changes anything (mail scanners and link previews open every link they see): it
shows what the link would do, and a POST form with a CSRF token does it. An option link is
checked, on both, in this order:

1. its payload names a game and a seat (``peek``), whose secret verifies the signature: a
   damaged, forged or expired link is refused with a page naming which;
2. a browser that already plays another seat of that game cannot use it (a link never acts for
   someone else);
3. the decision it answers must still be pending: when the log has moved past it, the link was
   already used (the next move is this seat's answer with this option) or the game moved on;
   a finished or abandoned game says so;
4. the option must be legal for that seat now.

Then the GET shows the situation, the option in words and the board after it (or the board now
when the outcome depends on chance), and the POST submits it through the game service, remembers
the seat in this browser's session and redirects to the game page.

:func:`option_link` and :func:`game_link` build the addresses the mails carry.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from flask import (
    Blueprint,
    Response,
    current_app,
    flash,
    g,
    redirect,
    render_template,
    request,
    url_for,
)
from flask_wtf.csrf import CSRFError
from markupsafe import Markup

from app.core.config import Settings
from app.core.i18n import LANGUAGES, N_, translate
from app.core.models import ABANDONED, FINISHED, OPEN
from app.games.ui import DEFAULT_GAME, GameUI, game_ui
from app.service import (
    BadRequest,
    Forbidden,
    GameMovedOn,
    IllegalMove,
    LinkSeat,
    NotFound,
    NotPlaying,
)
from app.web.browser_seats import browser_language, remember_seat, seat_in, service
from app.web.linktokens import (
    LinkError,
    OptionLink,
    make_game_token,
    make_option_token,
    peek,
    read_game_token,
    read_option_token,
)

links = Blueprint("links", __name__)


# ------------------------------------------------------------------ building links


def option_link(
    settings: Settings, seat_secret: str, uid: str, position: int, seq: int, option: str
) -> str:
    """The address that answers the decision after ``seq`` moves of game ``uid`` with
    ``option``, for seat ``position`` (signed with the server key and the seat's secret)."""
    token = make_option_token(
        settings.secret_key, seat_secret, OptionLink(uid, position, seq, option)
    )
    return f"{settings.base_url}/l/{token}"


def game_link(settings: Settings, seat_secret: str, uid: str, position: int) -> str:
    """The address that opens game ``uid`` as seat ``position`` in a browser."""
    token = make_game_token(settings.secret_key, seat_secret, uid, position)
    return f"{settings.base_url}/g/{token}"


# ------------------------------------------------------------------ words

REFUSALS: dict[str, tuple[str, str]] = {
    # reason: (title, message), English message ids of the catalogue
    "malformed": (
        N_("Damaged link"),
        N_("This link is damaged: perhaps the mail program cut it in two or changed it. "
           "Nothing was changed. Copy the whole link from the mail, or open the game."),
    ),
    "forged": (
        N_("Forged link"),
        N_("This link is forged: its signature does not match, so this server did not make "
           "it for this seat. Nothing was changed."),
    ),
    "expired": (
        N_("Expired link"),
        N_("This link has expired. Nothing was changed; open the game to see what is "
           "pending now."),
    ),
    "no-game": (
        N_("Unknown game"),
        N_("This link names a game this server does not know. Nothing was changed."),
    ),
    "other-seat": (
        N_("A link for another player"),
        N_("This link belongs to {owner}'s seat, but this browser plays {mine} in this game. "
           "A link cannot act for someone else, so nothing was changed."),
    ),
    "reused": (
        N_("Link already used"),
        N_("This link was already used: the answer \u201c{option}\u201d is already in the "
           "game. Nothing was changed."),
    ),
    "stale": (
        N_("The game moved on"),
        N_("The game moved on: this decision has been answered since the mail was sent, so "
           "this link no longer applies. Nothing was changed."),
    ),
    "finished": (
        N_("The game is over"),
        N_("This game is over{winner}. It takes no more moves; nothing was changed."),
    ),
    "abandoned": (
        N_("The game was abandoned"),
        N_("This game was abandoned. It takes no more moves; nothing was changed."),
    ),
    "not-started": (
        N_("The game has not started"),
        N_("This game has not started yet. Nothing was changed."),
    ),
    "not-yours": (
        N_("Not your decision"),
        N_("The pending decision is not yours ({waiting}). Nothing was changed."),
    ),
    "illegal": (
        N_("Not a legal choice now"),
        N_("\u201c{option}\u201d cannot be played now: {why}. Nothing was changed."),
    ),
    "csrf": (
        N_("The form could not be checked"),
        N_("This form's security token is missing or out of date (CSRF protection), so "
           "nothing was done. Go back, reload the page and confirm again."),
    ),
}


STATUS: dict[str, int] = {
    "malformed": 400,
    "forged": 400,
    "expired": 410,
    "no-game": 404,
    "other-seat": 403,
    "reused": 409,
    "stale": 409,
    "finished": 410,
    "abandoned": 410,
    "not-started": 409,
    "not-yours": 409,
    "illegal": 409,
    "csrf": 400,
}

WORDS: dict[str, str] = {
    # key: English message id of the catalogue
    "open_game": N_("Open the game"),
    "confirm_title": N_("Confirm your move"),
    "lead": N_("{player}, this decision is yours (the decision after move {seq})."),
    "your_choice": N_("Your choice"),
    "confirm": N_("Confirm"),
    "after": N_("The board after this choice:"),
    "after_marked": N_("The board after this choice (the new space is outlined):"),
    "chance": N_("The outcome depends on chance (a roll, a shuffle or a card), so the board "
                 "below shows the game as it is now."),
    "now": N_("The board now:"),
    "elsewhere": N_("Want something else? Open the game to choose another option."),
    "nothing_yet": N_("Nothing happens until you press the button."),
    "game": N_("Game"),
    "applied": N_("Done: your move \u201c{option}\u201d was played."),
    "sealed": N_("Sealed: {label}. Nobody sees it until every answer is in."),
    "sealed_now": N_("Your answer stays sealed. Nobody sees it until every answer is in, so "
                     "the board below shows the game as it is now."),
    "open_title": N_("Open this game"),
    "open_as": N_("Open this game as {player}"),
    "open_intro": N_("This link from your mail lets this browser play {player}'s seat "
                     "({titans}) in {game}."),
    "open_switch": N_("This browser plays {mine} in this game now; opening it as {player} "
                      "replaces that."),
    "opened": N_("This browser now plays {player} in this game."),
    "game_over_too": N_("The game is over."),
    "won": N_(": {winner} won"),
    "waiting_for": N_("waiting for {names}"),
    "nobody": N_("no decision is pending"),
}


class Words(Mapping[str, str]):
    """The link pages' words in one language: ``t.key`` / ``t["key"]`` in the templates."""

    def __init__(self, lang: str) -> None:
        self.lang = lang

    def __getitem__(self, key: str) -> str:
        return translate(self.lang, WORDS[key])

    def __iter__(self) -> Iterator[str]:
        return iter(WORDS)

    def __len__(self) -> int:
        return len(WORDS)

    def __getattr__(self, key: str) -> str:
        try:
            return self[key]
        except KeyError:
            raise AttributeError(key) from None


SPACE = re.compile(r"^[A-F](?:[1-9]|1[0-2])$")
UID = re.compile(r"^[0-9a-f]{32}$")
MAX_SEATS = 64  # a larger seat number in a link is damage, not a seat


def link_language(language: str | None) -> str:
    return language if language in LANGUAGES else "en"


def _ui(game_name: str | None = None) -> GameUI:
    return game_ui(game_name or DEFAULT_GAME)


def describe_decision(pending: dict[str, Any] | None, lang: str,
                      game_name: str | None = None) -> str:
    """The pending decision in a sentence: whose it is and what kind (the game's words)."""
    return _ui(game_name).describe_decision(pending, lang)


def describe_option(option: str, lang: str, titan: str | None = None,
                    game_name: str | None = None) -> str:
    """An option in plain words (``pick yellow`` -> "Take the yellow die")."""
    return _ui(game_name).describe_option(option, {"pending": {"titan": titan}}, lang)


# ------------------------------------------------------------------ refusals


class Refused(Exception):
    """A link that cannot be used: ``reason`` picks the page (and its status)."""

    def __init__(
        self,
        reason: str,
        *,
        uid: str | None = None,
        lang: str | None = None,
        notes: list[str] | None = None,
        **fields: str,
    ) -> None:
        super().__init__(reason)
        self.reason = reason
        self.uid = uid
        self.lang = link_language(lang or browser_language())  # no seat known: the browser's
        self.notes = notes or []
        self.fields = fields

    @property
    def status(self) -> int:
        return STATUS[self.reason]


def _game_url(uid: str) -> str:
    return f"{request.script_root}/games/{uid}"


def refused_page(refusal: Refused) -> tuple[str, int]:
    lang = refusal.lang
    title, message = (translate(lang, text) for text in REFUSALS[refusal.reason])
    g.lang = lang  # the words of the page around (base.html), too
    page = render_template(
        "links/refused.html",
        lang=lang,
        t=Words(lang),
        reason=refusal.reason,
        title=title,
        message=message.format_map(_Blank(refusal.fields)),
        notes=refusal.notes,
        game_url=_game_url(refusal.uid) if refusal.uid else None,
    )
    return page, refusal.status


class _Blank(dict[str, str]):
    def __missing__(self, key: str) -> str:
        return ""


def _settings() -> Settings:
    settings: Settings = current_app.extensions["titanpost.settings"]
    return settings


# ------------------------------------------------------------------ checking a link


def seat_of_token(token: str) -> tuple[str, LinkSeat]:
    """The (unverified) game and seat a token names, read from the database."""
    try:
        payload = peek(token)
    except LinkError:
        raise Refused("malformed") from None
    uid, position = payload["g"], payload.get("s")
    if (
        not isinstance(position, int)
        or isinstance(position, bool)
        or not 0 <= position < MAX_SEATS
        or not UID.match(uid)
    ):
        raise Refused("malformed")
    try:
        return uid, service().link_seat(uid, position)
    except NotFound:
        pass
    try:
        service().ensure_exists(uid)
    except NotFound:
        raise Refused("no-game") from None
    raise Refused("forged", uid=uid)  # a real game, but no such seat: not a link we made


def _verified_option(token: str) -> tuple[OptionLink, LinkSeat]:
    uid, seat = seat_of_token(token)
    lang = link_language(seat.language)
    try:
        link = read_option_token(token, _settings().secret_key, seat.secret)
    except LinkError as exc:
        raise Refused(exc.reason, uid=uid, lang=lang) from None
    if link.game != uid or link.seat != seat.position:
        raise Refused("forged", uid=uid, lang=lang)
    _not_another_seat(seat)
    return link, seat


def _not_another_seat(seat: LinkSeat) -> None:
    """Refuse a link for one seat in a browser that plays another seat of the same game."""
    mine = seat_in(seat.game)
    if mine is None or mine == seat.position:
        return
    try:
        mine_name = service().link_seat(seat.game, mine).name
    except NotFound:
        return  # the session names a seat the game does not have: it does not count
    raise Refused(
        "other-seat",
        uid=seat.game,
        lang=seat.language,
        owner=seat.name,
        mine=f"{mine_name} (seat {mine + 1})",
    )


def _pending(link: OptionLink, seat: LinkSeat) -> dict[str, Any]:
    """The seat's state body when the link's decision is still pending and is the seat's."""
    lang = link_language(seat.language)
    body = service().state(link.game, link.seat)
    game = body["game"]
    status = game["status"]
    uid = link.game
    if status == ABANDONED:
        raise Refused("abandoned", uid=uid, lang=lang)
    if status == OPEN:
        raise Refused("not-started", uid=uid, lang=lang)
    if not body["decision_seq"] <= link.seq <= body["seq"]:
        notes = [Words(lang)["game_over_too"]] if status == FINISHED else []
        move = service().move_after(uid, link.seq) if 0 <= link.seq < body["seq"] else None
        if move is not None and move["seat"] == link.seat and move["input"] == _norm(
            game["ruleset"], link.option
        ):
            raise Refused("reused", uid=uid, lang=lang, notes=notes, option=link.option)
        raise Refused("stale", uid=uid, lang=lang, notes=notes)
    if status == FINISHED:
        winner = game.get("winner")
        names = [_ui(game["ruleset"]).piece_name(w, lang) for w in str(winner).split(",")]
        won = Words(lang)["won"].format(winner=", ".join(names)) if winner else ""
        raise Refused("finished", uid=uid, lang=lang, winner=won)
    to_act: list[int] = game["to_act"]
    if link.seat not in to_act:
        seat_names = {s["position"]: s["name"] for s in game["seats"]}
        waiting = (
            Words(lang)["waiting_for"].format(
                names=", ".join(str(seat_names.get(p, p)) for p in to_act)
            )
            if to_act
            else Words(lang)["nobody"]
        )
        raise Refused("not-yours", uid=uid, lang=lang, waiting=waiting)
    return body


def _norm(rules_name: str, option: str) -> str:
    from app.games import ruleset
    from app.games.base import MoveRejected, SetupError

    try:
        return ruleset(rules_name).normalise(option)
    except (MoveRejected, SetupError):
        return option


def _again(link: OptionLink, seat: LinkSeat, otherwise: Refused) -> Refused:
    """After the service refused: the refusal the game's state now explains, else
    ``otherwise``."""
    try:
        _pending(link, seat)
    except Refused as refusal:
        return refusal
    return otherwise


# ------------------------------------------------------------------ the pages


@links.after_request
def _private(response: Response) -> Response:
    """Link pages carry a credential in their address: keep them out of caches, indexes and
    Referer headers."""
    response.headers["Cache-Control"] = "no-store"
    response.headers["Referrer-Policy"] = "no-referrer"
    response.headers["X-Robots-Tag"] = "noindex, nofollow"
    return response


@links.get("/l/<token>")
def option_page(token: str) -> tuple[str, int]:
    """What the link would play, with a form that plays it. Changes nothing."""
    try:
        link, seat = _verified_option(token)
        body = _pending(link, seat)
        lang = link_language(seat.language)
        try:
            after = service().preview(link.game, link.seat, link.option)
        except IllegalMove as exc:
            raise _again(
                link,
                seat,
                Refused("illegal", uid=link.game, lang=lang, option=link.option,
                        why=exc.say(lang)),
            ) from None
    except Refused as refusal:
        return refused_page(refusal)
    view: dict[str, Any] = body.get("view") or {}
    pending = view.get("pending") if isinstance(view.get("pending"), dict) else None
    titan = pending.get("titan") if pending else None
    try:
        ui = _ui(seat.ruleset)
        marks = ui.highlight(link.option, view, after, ui.boards(seat.setup))
    except (ValueError, OSError):
        marks = []
    board = _board(after if after is not None else view, seat.setup, lang, marks,
                   seat.ruleset)
    words = Words(lang)
    g.lang = lang  # the words of the page around (base.html), too
    page = render_template(
        "links/confirm.html",
        lang=lang,
        t=words,
        title=words["confirm_title"],
        game_name=seat.game_name or seat.game[:8],
        game_url=_game_url(seat.game),
        lead=words["lead"].format(player=seat.name, seq=link.seq),
        situation=describe_decision(pending, lang, seat.ruleset),
        option=link.option,
        option_words=_ui(seat.ruleset).describe_option(
            link.option, view if view else {"pending": {"titan": titan}}, lang),
        chance=after is None,
        sealed=after is None and service().seals_answers(link.game),
        marked=bool(marks),
        board=board,
        action=url_for("links.option_apply", token=token),
    )
    return page, 200


@links.post("/l/<token>")
def option_apply(token: str) -> Any:
    """Play the link's option (after every check again), then go to the game."""
    try:
        link, seat = _verified_option(token)
        _pending(link, seat)
        lang = link_language(seat.language)
        uid = link.game
        try:
            result = service().submit(uid, link.seat, link.seq, link.option)
        except GameMovedOn:
            raise _again(link, seat, Refused("stale", uid=uid, lang=lang)) from None
        except NotPlaying:
            raise _again(link, seat, Refused("finished", uid=uid, lang=lang)) from None
        except Forbidden:
            raise _again(
                link, seat, Refused("not-yours", uid=uid, lang=lang,
                                    waiting=Words(lang)["nobody"])
            ) from None
        except (IllegalMove, BadRequest) as exc:
            raise _again(
                link,
                seat,
                Refused("illegal", uid=uid, lang=lang, option=link.option, why=exc.say(lang)),
            ) from None
        if result.get("already_applied"):
            raise Refused("reused", uid=uid, lang=lang, option=link.option)
    except Refused as refusal:
        return refused_page(refusal)
    remember_seat(uid, link.seat)
    if result.get("sealed"):  # a secret answer: nothing was played yet
        flash(Words(lang)["sealed"].format(label=link.option))
    else:
        flash(Words(lang)["applied"].format(option=link.option))
    return redirect(_game_url(uid), code=303)


def _verified_game(token: str) -> LinkSeat:
    uid, seat = seat_of_token(token)
    lang = link_language(seat.language)
    try:
        game, position = read_game_token(token, _settings().secret_key, seat.secret)
    except LinkError as exc:
        raise Refused(exc.reason, uid=uid, lang=lang) from None
    except (KeyError, TypeError, ValueError):
        raise Refused("malformed", uid=uid, lang=lang) from None
    if game != uid or position != seat.position:
        raise Refused("forged", uid=uid, lang=lang)
    return seat


@links.get("/g/<token>")
def game_page(token: str) -> tuple[str, int]:
    """Offer to open the game as the link's seat. Changes nothing (not even the session)."""
    try:
        seat = _verified_game(token)
    except Refused as refusal:
        return refused_page(refusal)
    lang = link_language(seat.language)
    words = Words(lang)
    mine = seat_in(seat.game)
    switch = None
    if mine is not None and mine != seat.position:
        try:
            switch = words["open_switch"].format(
                mine=service().link_seat(seat.game, mine).name, player=seat.name
            )
        except NotFound:
            switch = None
    game_name = seat.game_name or seat.game[:8]
    g.lang = lang  # the words of the page around (base.html), too
    page = render_template(
        "links/open.html",
        lang=lang,
        t=words,
        title=words["open_title"],
        intro=words["open_intro"].format(
            player=seat.name,
            titans=", ".join(_ui(seat.ruleset).piece_name(t, lang) for t in seat.pieces) or "?",
            game=game_name,
        ),
        switch=switch,
        button=words["open_as"].format(player=seat.name),
        game_name=game_name,
        game_url=_game_url(seat.game),
        action=url_for("links.game_open", token=token),
    )
    return page, 200


@links.post("/g/<token>")
def game_open(token: str) -> Any:
    """Remember the link's seat in this browser and go to the game."""
    try:
        seat = _verified_game(token)
    except Refused as refusal:
        return refused_page(refusal)
    remember_seat(seat.game, seat.position)
    flash(Words(link_language(seat.language))["opened"].format(player=seat.name))
    return redirect(_game_url(seat.game), code=303)


@links.errorhandler(CSRFError)
def _csrf_refused(exc: CSRFError) -> tuple[str, int]:
    """A POST without a valid CSRF token: nothing was done; say so in the seat's language."""
    uid: str | None = None
    lang = "en"
    token = (request.view_args or {}).get("token")
    if isinstance(token, str):
        try:
            uid, seat = seat_of_token(token)
            lang = seat.language
        except Refused as refusal:
            uid = refusal.uid
    # (the page's own words say what happened: Flask-WTF's English detail would be the one
    # sentence a Polish reader could not read)
    return refused_page(Refused("csrf", uid=uid, lang=lang))


# ------------------------------------------------------------------ the board


def _board(
    view: dict[str, Any], setup: dict[str, Any], lang: str, highlight: list[str],
    game_name: str | None = None,
) -> Markup | None:
    if not view:
        return None
    ui = _ui(game_name)
    try:
        boards = ui.boards(setup)
    except (ValueError, OSError):
        return None
    return Markup(ui.board_svg(view, boards, highlight=highlight, lang=lang))
