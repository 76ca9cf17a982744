"""The answers to replies by e-mail, in the seat's language, as the inbound worker writes them.

What the worker (:mod:`app.mail.inbound`) mails back to a reply refused (an illegal move, a
decision no longer pending, no move found, a mail from another address than the seat's or from
no one address), posted to the game's chat, or played (when asked for); an answer to the
seat's player ends with what it can do now.
"""

from __future__ import annotations

from dataclasses import dataclass
from email.message import EmailMessage
from typing import Any

from app.core.i18n import translate
from app.games.base import NAMES_ITS_PART, ChainStop
from app.games.ui import game_ui
from app.service import GameMovedOn, IllegalMove

from .inbound_headers import header_text
from .inbound_text import Extracted


@dataclass
class ReplyContext:
    """The game and seat a queued reply is for, as its answer tells them."""

    game_id: int
    game_name: str
    seat_id: int | None
    seat_email: str
    rules_name: str
    lang: str = "en"
    """The seat's language: the answers to its replies speak it."""


def answer_subject(msg: EmailMessage, context: ReplyContext) -> str:
    original = " ".join(header_text(msg, "Subject").split())
    if original:
        return original if original.lower().startswith("re:") else f"Re: {original}"
    return f"Re: {_game_title(context)}"


def _game_title(context: ReplyContext) -> str:
    if context.game_name:
        return translate(context.lang, "Titan Post game “{game}”", game=context.game_name)
    return translate(context.lang, "your Titan Post game")


def _describe(context: ReplyContext, pending: dict[str, Any] | None) -> str:
    """The pending decision in a sentence, in the seat's language, without its period."""
    try:
        ui = game_ui(context.rules_name)
    except KeyError:
        return str((pending or {}).get("kind", "")) or translate(context.lang,
                                                                  "no decision is pending")
    return ui.describe_decision(pending, context.lang).rstrip(".")


def _indented(lines: Any) -> str:
    return "\n".join(f"  {line}" for line in lines)


def _winner_words(context: ReplyContext, winner: str) -> str:
    """The winning pieces (``Game.winner``: their ids, comma-joined) by their names."""
    try:
        ui = game_ui(context.rules_name)
    except KeyError:
        return winner
    return ", ".join(ui.piece_name(piece, context.lang) for piece in winner.split(","))


def _now_text(context: ReplyContext, current: dict[str, Any]) -> str:
    """What the player can do now, for the end of an answer."""
    lang = context.lang
    if not current:
        return ""
    status = current.get("status")
    if status == "finished":
        winner = current.get("winner")
        if winner:
            return translate(lang, "The game is over: {winner} won.",
                             winner=_winner_words(context, str(winner)))
        return translate(lang, "The game is over.")
    if status == "open":
        return translate(lang, "The game has not started yet: it takes no moves.")
    if status == "abandoned":
        return translate(lang, "The game was abandoned: it takes no moves.")
    if current.get("yours"):
        return "\n".join([
            translate(lang, "Your decision now (after move {seq}): {decision}.",
                      seq=current.get("seq"),
                      decision=_describe(context, current.get("pending"))),
            translate(lang, "Reply to this mail with your move on the first line; your "
                      "options are:"),
            "",
            _indented(current.get("options", [])),
            "",
            translate(lang, "Several inputs can go on one line joined with “;”, or on "
                      "separate lines."),
        ])
    waiting = ", ".join(
        translate(lang, "seat {seat} ({name})", seat=p + 1, name=name) if name
        else translate(lang, "seat {seat}", seat=p + 1)
        for p, name in current.get("to_act", [])
    )
    if not waiting:
        return translate(lang, "It is not your decision now (after move {seq}). You will get "
                         "a mail when it is your turn.", seq=current.get("seq"))
    return translate(lang, "It is not your decision now (after move {seq}): waiting for "
                     "{players}. You will get a mail when it is your turn.",
                     seq=current.get("seq"), players=waiting)


def _not_played(context: ReplyContext, reason: str) -> str:
    return translate(context.lang, "Your reply to {game} was not played: {reason}.",
                     game=_game_title(context), reason=reason)


def _you_wrote(context: ReplyContext, notation: str) -> str:
    return translate(context.lang, "You wrote: {notation}", notation=notation)


def illegal_text(
    context: ReplyContext,
    notation: str,
    exc: IllegalMove,
    legal: list[str],
    current: dict[str, Any],
) -> str:
    lang = context.lang
    parts = [p.strip() for p in notation.split(";")]
    index = exc.extra.get("index")
    reason = exc.say(lang)
    names_part = exc.words is not None and exc.words[0] in NAMES_ITS_PART
    if (not names_part and isinstance(index, int) and len(parts) > 1
            and 0 <= index < len(parts)):
        reason = translate(lang, "{reason} (input {number}, “{input}”; nothing of the reply "
                           "was played)", reason=reason, number=index + 1,
                           input=parts[index])
    lines = [_not_played(context, reason), "", _you_wrote(context, notation), ""]
    if legal and legal != current.get("options"):
        # The game moved on meanwhile: list what was legal when the reply arrived.
        lines += [translate(lang, "At that point the legal inputs were:"), "",
                  _indented(legal), ""]
    now = _now_text(context, current)
    if now:
        lines.append(now)
    return "\n".join(lines).rstrip() + "\n"


def moved_on_text(
    context: ReplyContext, notation: str, exc: GameMovedOn, current: dict[str, Any]
) -> str:
    lines = [
        _not_played(context, exc.say(context.lang)),
        "",
        _you_wrote(context, notation),
        "",
        translate(context.lang, "The decision you answered is no longer pending."),
    ]
    now = _now_text(context, current)
    if now:
        lines += ["", now]
    return "\n".join(lines).rstrip() + "\n"


def refused_text(
    context: ReplyContext, notation: str, reason: str, current: dict[str, Any]
) -> str:
    lines = [_not_played(context, reason), "", _you_wrote(context, notation)]
    now = _now_text(context, current)
    if now:
        lines += ["", now]
    return "\n".join(lines).rstrip() + "\n"


def _examples(context: ReplyContext) -> str:
    try:
        return _indented(game_ui(context.rules_name).reply_examples)
    except KeyError:
        return ""


def unparseable_text(context: ReplyContext, read: Extracted, current: dict[str, Any]) -> str:
    lang = context.lang
    lines = [
        translate(lang, "We could not find a move in your reply to {game}.",
                  game=_game_title(context)),
        "",
        translate(lang, "Write your move on the first line of the reply, in the game's "
                  "notation, for example:"),
        "",
        _examples(context),
        "",
        translate(lang, "Several inputs can go on one line joined with “;”, or on separate "
                  "lines. Quoted text and your signature below the move are ignored."),
    ]
    if read.text:
        first = read.text.strip().splitlines()[0][:200]
        lines += ["", translate(lang, "Your reply began: {text}", text=first)]
    now = _now_text(context, current)
    if now:
        lines += ["", now]
    return "\n".join(lines).rstrip() + "\n"


def chat_posted_text(context: ReplyContext, text: str, current: dict[str, Any]) -> str:
    lang = context.lang
    lines = [
        translate(lang, "Your reply to {game} had no move in it, so it was posted to the "
                  "game's chat, where every player (and spectator) reads it:",
                  game=_game_title(context)),
        "",
        _indented(text.splitlines()),
        "",
        translate(lang, "The other players see it on the game page and in their next mail. "
                  "If you meant a move, reply with it on the first line, in the game's "
                  "notation, for example:"),
        "",
        _examples(context),
    ]
    now = _now_text(context, current)
    if now:
        lines += ["", now]
    return "\n".join(lines).rstrip() + "\n"


def stranger_text(context: ReplyContext, author: str) -> str:
    """The answer to a reply from another address than the seat's (in the seat's language:
    the game's best guess; it tells nothing of the game)."""
    return translate(context.lang, "Your mail was not played: it came from {address}, and "
                     "the address you wrote to belongs to a seat that is played from "
                     "another address. A move counts only when it comes from the address "
                     "the game's mails are sent to: reply from there.",
                     address=author) + "\n"


def not_one_author_text(context: ReplyContext) -> str:
    """The answer to a mail whose From names no one address (it tells nothing of the game)."""
    return translate(context.lang, "Your mail was not played: its From line does not name "
                     "exactly one address. A move counts only when it comes from one address, "
                     "the one the game's mails are sent to: reply from there, with that "
                     "address alone as the sender.") + "\n"


def ok_text(context: ReplyContext, notation: str, current: dict[str, Any],
             stopped: dict[str, Any] | None = None) -> str:
    played = stopped["played"] if stopped else notation
    lines = [translate(context.lang, "Played in {game}: {notation}", game=_game_title(context),
                       notation=played)]
    if stopped:
        text, fields = ChainStop.from_json(stopped).words
        lines += ["", translate(context.lang, text, **fields)]
    now = _now_text(context, current)
    if now:
        lines += ["", now]
    return "\n".join(lines).rstrip() + "\n"
