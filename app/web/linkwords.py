"""The words of the signed links' pages, and their refusals.

:data:`WORDS` (read through :class:`Words`, in the reader's language) are the pages' words;
:class:`Refused` names why a link cannot be used, and :func:`refused_page` shows it with its words
(:data:`REFUSALS`) and HTTP status (:data:`STATUS`): the calendar feed refuses its links with it
too. A pending decision and an option are described in their game's words.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from flask import g, has_request_context, render_template, request

from app.core.i18n import LANGUAGES, N_, translate
from app.games.ui import DEFAULT_GAME, GameUI, game_ui
from app.web.browser_seats import browser_language

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
                     "({pieces}) in {game}."),
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


def link_language(language: str | None) -> str:
    """The language of a link's page: ``?lang=`` (asked for on the site, as on every page),
    else ``language`` (the seat's, or the browser's when no seat is known), else English."""
    asked = request.args.get("lang") if has_request_context() else None
    if asked in LANGUAGES:
        return str(asked)
    return language if language in LANGUAGES else "en"


def ui_of(game_name: str | None = None) -> GameUI:
    return game_ui(game_name or DEFAULT_GAME)


def describe_decision(pending: dict[str, Any] | None, lang: str,
                      game_name: str | None = None) -> str:
    """The pending decision in a sentence: whose it is and what kind (the game's words)."""
    return ui_of(game_name).describe_decision(pending, lang)


def describe_option(option: str, lang: str, pending: dict[str, Any] | None = None,
                    game_name: str | None = None) -> str:
    """An option in plain words (``pick yellow`` -> "Take the yellow die"), ``pending`` the
    decision it answers (it tells whose piece acts)."""
    return ui_of(game_name).describe_option(option, {"pending": dict(pending or {})}, lang)


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


def game_page_url(uid: str) -> str:
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
        game_url=game_page_url(refusal.uid) if refusal.uid else None,
    )
    return page, refusal.status


class _Blank(dict[str, str]):
    def __missing__(self, key: str) -> str:
        return ""
