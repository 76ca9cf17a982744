"""Everything the server holds about one address, for its player to take away ("My data").

:func:`personal_data` gathers it: the address's mail standing and away dates, every seat it
holds with that seat's settings and API tokens (their labels and times: never a hash or a
secret), each of those games **as that seat sees it** (the same reads a seat's API makes:
:meth:`GameService.state` and :meth:`GameService.log` at the seat's position, so nothing of
another seat's hidden information: the twin-game principle), its notes, the mails sent to it
(their delivery, not their bodies), the replies it mailed, its seats' push subscriptions (the
push service's host, not the keys), its sign-in sessions (times, not tokens), the chat written
from its seats and the groups it owns or is in (their names, not the other members' addresses).

:func:`as_json` and :func:`as_zip` make the download: one JSON file, or a ZIP of ``data.json``,
``games/<uid>.json`` per game and a ``README.txt`` in the reader's language.
"""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any, Final
from urllib.parse import urlsplit

from sqlalchemy import func, or_
from sqlmodel import Session, col, select

from app.core.i18n import N_, translate
from app.core.models import (
    Absence,
    ApiToken,
    ChatMessage,
    Game,
    InboundMail,
    MailAddress,
    OutboxMail,
    PlayerGroup,
    PlayerGroupMember,
    PushSubscription,
    Seat,
    SignIn,
)
from app.features.notes.records import notes_of
from app.features.signin.signins import address_digest
from app.games.ui import game_ui
from app.service import GameService, ServiceError

FORMAT: Final = 1
"""The download's format (``format`` in data.json): raised when a field changes meaning."""

README: Final = (
    N_("Your data on the Titan Post server {server}, for {address}, made on {made}."),
    N_("data.json: everything the server holds about your address: the address's mail standing "
       "and away dates; every seat it holds (game, name, position, language, your settings, "
       "when you joined or resigned, your API tokens by label and date); your notes; the mails "
       "sent to you (kind, game, times, delivery; not their text); the replies you mailed; your "
       "push subscriptions (the push service, not its keys); your sign-ins (times only); the "
       "chat you wrote; the groups you own or are in."),
    N_("games/<id>.json: one file per game of yours: the game as your seat sees it (the board, "
       "what your seat alone sees, the players by name) and its log as your seat sees it: your "
       "own inputs in full, the others' as every player sees them, chance once it came out. "
       "Nothing another player keeps hidden is in it."),
    N_("The server keeps no more about you than this. To be forgotten, use \"Forget me\" on "
       "the page {page} or `titanpost forget-me`."),
)
"""The README's paragraphs (catalogue messages; fields ``server``, ``address``, ``made``,
``page``)."""


def _iso(moment: datetime | None) -> str | None:
    if moment is None:
        return None
    return (moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)).isoformat()


# ---------------------------------------------------------------------- the address's rows


def address_seats(s: Session, email: str) -> list[tuple[Game, Seat]]:
    """Every seat ``email`` holds, with its game, in the order the games were made."""
    return list(s.exec(select(Game, Seat).join(Seat, col(Seat.game_id) == col(Game.id))
                       .where(Seat.email == email)
                       .order_by(col(Game.id), col(Seat.position))).all())


def _standing(s: Session, email: str) -> dict[str, Any] | None:
    row = s.get(MailAddress, email)
    if row is None:
        return None
    return {"last_delivered_at": _iso(row.last_delivered_at),
            "last_bounce_at": _iso(row.last_bounce_at), "bounce_reason": row.bounce_reason,
            "bounces": row.bounces, "undeliverable_since": _iso(row.undeliverable_since),
            "relay": row.relay, "relay_trouble_since": _iso(row.relay_trouble_since)}


def _away(s: Session, email: str) -> list[dict[str, Any]]:
    rows = s.exec(select(Absence).where(Absence.email == email).order_by(col(Absence.id))).all()
    return [{"id": row.id, "from": _iso(row.starts_at), "until": _iso(row.ends_at),
             "mode": row.mode, "created_at": _iso(row.created_at),
             "cancelled_at": _iso(row.cancelled_at)} for row in rows]


def _seat_row(s: Session, game: Game, seat: Seat) -> dict[str, Any]:
    tokens = s.exec(select(ApiToken).where(ApiToken.seat_id == seat.id)
                    .order_by(col(ApiToken.id))).all()
    pushes = s.exec(select(PushSubscription).where(PushSubscription.seat_id == seat.id)
                    .order_by(col(PushSubscription.id))).all()
    return {
        "game": game.uid, "name": game.name, "title": game_ui(game.ruleset).title,
        "ruleset": game.ruleset, "variant": game.variant, "status": game.status,
        "position": seat.position, "player_name": seat.player_name,
        "language": seat.language, "settings": dict(seat.notify or {}),
        "computer_plays": seat.is_bot, "invited_at": _iso(seat.invited_at),
        "accepted_at": _iso(seat.accepted_at), "resigned_at": _iso(seat.resigned_at),
        "declined_at": _iso(seat.declined_at), "owner": game.owner_email == seat.email,
        "api_tokens": [{"label": t.label, "created_at": _iso(t.created_at),
                        "revoked_at": _iso(t.revoked_at)} for t in tokens],
        "push_subscriptions": [{"service": urlsplit(p.endpoint).hostname or "",
                                "created_at": _iso(p.created_at)} for p in pushes],
    }


def _uids(s: Session, ids: Iterable[int | None]) -> dict[int, str]:
    wanted = sorted({i for i in ids if i is not None})
    if not wanted:
        return {}
    rows = s.exec(select(Game.id, Game.uid).where(col(Game.id).in_(wanted))).all()
    return {int(gid): uid for gid, uid in rows if gid is not None}


def _mails(s: Session, email: str) -> list[dict[str, Any]]:
    rows = s.exec(select(OutboxMail).where(OutboxMail.recipient == email)
                  .order_by(col(OutboxMail.id))).all()
    uids = _uids(s, (r.game_id for r in rows))
    return [{"kind": r.kind, "game": uids.get(r.game_id) if r.game_id else None,
             "created_at": _iso(r.created_at), "sent_at": _iso(r.sent_at),
             "bounced_at": _iso(r.bounced_at), "bounce": r.bounce, "relay": r.relay,
             "last_error": r.last_error, "body_purged": r.body_purged_at is not None}
            for r in rows]


def _replies(s: Session, email: str) -> list[dict[str, Any]]:
    rows = s.exec(select(InboundMail).where(func.lower(InboundMail.sender) == email)
                  .order_by(col(InboundMail.id))).all()
    return [{"game": r.game_uid, "position": r.seat, "received_at": _iso(r.received_at),
             "processed_at": _iso(r.processed_at), "result": r.result} for r in rows]


def _sign_ins(s: Session, digest: str) -> list[dict[str, Any]]:
    rows = s.exec(select(SignIn).where(SignIn.email_digest == digest)
                  .order_by(col(SignIn.id))).all()
    return [{"requested_at": _iso(r.requested_at), "mailed": r.mailed, "used_at": _iso(r.used_at),
             "used_by": r.used_by, "revoked_at": _iso(r.revoked_at)} for r in rows]


def _chat(s: Session, seats: list[tuple[Game, Seat]]) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    for game, seat in seats:
        rows = s.exec(select(ChatMessage).where(ChatMessage.game_id == game.id,
                                                ChatMessage.seat == seat.position)
                      .order_by(col(ChatMessage.id))).all()
        found += [{"game": game.uid, "position": seat.position, "text": r.text,
                   "created_at": _iso(r.created_at)} for r in rows]
    return found


def _groups(s: Session, email: str) -> list[dict[str, Any]]:
    """The groups ``email`` owns or is in: names and counts, not the others' addresses."""
    member_of = set(s.exec(select(PlayerGroupMember.group_id)
                           .where(PlayerGroupMember.email == email)).all())
    groups = s.exec(select(PlayerGroup).where(or_(
        col(PlayerGroup.owner_email) == email, col(PlayerGroup.id).in_(sorted(member_of) or [-1])))
        .order_by(col(PlayerGroup.id))).all()
    rows = []
    for group in groups:
        members = s.exec(select(func.count()).select_from(PlayerGroupMember)
                         .where(PlayerGroupMember.group_id == group.id)).one()
        rows.append({"group": group.uid, "name": group.name,
                     "owner": group.owner_email == email, "member": group.id in member_of,
                     "members": int(members), "created_at": _iso(group.created_at)})
    return rows


def _owned_games(s: Session, email: str) -> list[dict[str, Any]]:
    rows = s.exec(select(Game).where(Game.owner_email == email).order_by(col(Game.id))).all()
    return [{"game": g.uid, "name": g.name, "status": g.status} for g in rows]


# ---------------------------------------------------------------------- the whole


def personal_data(service: GameService, email: str) -> dict[str, Any]:
    """Everything the server holds about ``email`` (normalised by the caller): its rows, and
    ``games``: each game of its seats as that seat sees it (``state`` and ``log``)."""
    with service.session() as s:
        seats = address_seats(s, email)
        data: dict[str, Any] = {
            "format": FORMAT, "address": email, "made_at": datetime.now(UTC).isoformat(),
            "mail_standing": _standing(s, email), "away": _away(s, email),
            "seats": [_seat_row(s, game, seat) for game, seat in seats],
            "owned_games": _owned_games(s, email),
            "notes": notes_of(s, email), "mails": _mails(s, email),
            "replies": _replies(s, email),
            "sign_ins": _sign_ins(s, address_digest(service.settings.secret_key, email)),
            "chat": _chat(s, seats), "groups": _groups(s, email),
        }
    data["games"] = {game.uid: _seen(service, game.uid, seat.position) for game, seat in seats}
    return data


def _seen(service: GameService, uid: str, position: int) -> dict[str, Any]:
    """Game ``uid`` as seat ``position`` sees it through the API (GET /api/games/<uid> and
    /log with the seat's token)."""
    try:
        return {"position": position, "state": service.state(uid, position),
                "log": service.log(uid, position)["moves"]}
    except ServiceError as exc:  # (a game removed meanwhile)
        return {"position": position, "error": exc.message}


def summary(data: dict[str, Any]) -> dict[str, int]:
    """How many of each kind the data holds (the page's table)."""
    return {key: len(data[key]) for key in ("seats", "games", "notes", "mails", "replies",
                                             "away", "sign_ins", "chat", "groups",
                                             "owned_games")}


# ---------------------------------------------------------------------- the files


def as_json(data: dict[str, Any]) -> bytes:
    return (json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode()


def readme(data: dict[str, Any], lang: str, server: str, page: str) -> str:
    fields = {"server": server, "address": data["address"], "made": data["made_at"][:16],
              "page": page}
    return "\n\n".join(translate(lang, text, **fields) for text in README) + "\n"


def as_zip(data: dict[str, Any], lang: str, server: str, page: str) -> bytes:
    """``data.json`` (the games as a list of their files), ``games/<uid>.json`` each and
    ``README.txt`` in ``lang``."""
    games = data["games"]
    rest = {key: value for key, value in data.items() if key != "games"}
    rest["games"] = [f"games/{uid}.json" for uid in games]
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("README.txt", readme(data, lang, server, page))
        archive.writestr("data.json", as_json(rest))
        for uid, seen in games.items():
            archive.writestr(f"games/{uid}.json", as_json({"game": uid, **seen}))
    return buffer.getvalue()


def file_name(email: str, kind: str) -> str:
    """``titanpost-data-ann-example.org.json``: the download's name."""
    safe = "".join(c if c.isalnum() or c in ".-" else "-" for c in email)
    return f"titanpost-data-{safe}.{kind}"
