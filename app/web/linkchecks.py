"""Checking a signed link from a mail, before its page shows or does anything. An option link is
checked, on both the GET and the POST, in this order:

1. its payload names a game and a seat (``peek``), whose secret verifies the signature: a
   damaged, forged or expired link is refused with a page naming which;
2. a browser that already plays another seat of that game cannot use it (a link never acts for
   someone else);
3. the decision it answers must still be pending: when the log has moved past it, the link was
   already used (the next move is this seat's answer with this option) or the game moved on;
   a finished or abandoned game says so;
4. the option must be legal for that seat now.

A game link is checked by its signature. A check that fails raises
:class:`~app.web.linkwords.Refused`.
"""

from __future__ import annotations

import re
from typing import Any

from flask import current_app

from app.core.config import Settings
from app.core.models import ABANDONED, FINISHED, OPEN
from app.service import LinkSeat, NotFound
from app.web.browser_seats import seat_in, service
from app.web.linktokens import LinkError, OptionLink, peek, read_game_token, read_option_token
from app.web.linkwords import Refused, Words, link_language, ui_of

UID = re.compile(r"^[0-9a-f]{32}$")
MAX_SEATS = 64  # a larger seat number in a link is damage, not a seat


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


def verified_option(token: str) -> tuple[OptionLink, LinkSeat]:
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


def pending_state(link: OptionLink, seat: LinkSeat) -> dict[str, Any]:
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
        names = [ui_of(game["ruleset"]).piece_name(w, lang) for w in str(winner).split(",")]
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


def refusal_after(link: OptionLink, seat: LinkSeat, otherwise: Refused) -> Refused:
    """After the service refused: the refusal the game's state now explains, else
    ``otherwise``."""
    try:
        pending_state(link, seat)
    except Refused as refusal:
        return refusal
    return otherwise


def verified_game(token: str) -> LinkSeat:
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
