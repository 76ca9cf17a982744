"""The live connections of the pages: Server-Sent Events that say "this changed", nothing more.

- ``GET /games/<id>/live?mark=<mark>``: the game page's (a seat's or a spectator's; refused as
  the page is for a viewer the game has no room for);
- ``GET /live/games``: My games' (the games this browser plays or made, and those of the address
  it signed in as).

Each stream sends ``event: changed`` when one of its games changed (see :mod:`.feed`), a comment
line every :data:`HEARTBEAT` seconds (so that proxies and the browser keep the connection, and a
closed one is noticed), and ends after :data:`LIFETIME`: the browser connects again, with the
mark of the page it shows, and is told at once if the game changed meanwhile. The page then
fetches itself (a plain GET, as its viewer) and swaps its content in: the stream itself says
nothing about what changed, so it tells no viewer more than the page does, and its events come
for every change a viewer could see, hidden or not, at the moment the page would show it.

While a seat's page is open the seat counts as watching (:mod:`.presence`): its mail and push
wait. That row is not the game's state: the stream changes nothing of the game.

Serving: a stream holds its connection for minutes. Under gunicorn's threaded workers that would
be a thread a page; deploy/ serves ``/live`` routes from gevent workers of their own (one
greenlet a page) and tells nginx not to buffer them (``X-Accel-Buffering: no``).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any, Final

from flask import Blueprint, Response, current_app, request
from flask.typing import ResponseReturnValue
from sqlmodel import select

from app.core.models import Game, Seat
from app.features.live.feed import FEED, Subscription, hook_sessions
from app.features.live.marks import marks, marks_of
from app.features.live.presence import Presence, Watched
from app.features.signin.signins import account_seats
from app.service import Forbidden, GameService, NotFound
from app.web.browser_seats import my_seats, seat_in, service, signed_in
from app.web.pages.common import created_games

live = Blueprint("live", __name__)

HEARTBEAT: Final = 25.0
"""Seconds between two comment lines of a quiet stream."""
LIFETIME: Final = 30 * 60.0
"""Seconds a stream lasts before the browser is asked to connect again."""
RETRY_MS: Final = 3000
"""How long the browser waits before connecting again after a stream ended or broke."""
MOST_GAMES: Final = 500
"""The most games one My games stream follows."""


def install_presence(app: Any) -> None:
    """Keep the open pages of this app's seats (its blueprint is registered with the pages)."""
    hook_sessions()
    service: GameService = app.extensions["titanpost.service"]
    app.extensions["titanpost.presence"] = Presence(service)


def presence() -> Presence:
    found: Presence = current_app.extensions["titanpost.presence"]
    return found


@live.get("/games/<uid>/live")
def game_stream(uid: str) -> ResponseReturnValue:
    """The live connection of game ``uid``'s page."""
    svc = service()
    position = seat_in(uid)
    with svc.session() as s:
        game = s.exec(select(Game).where(Game.uid == uid)).first()
        if game is None:
            raise NotFound(f"there is no game '{uid}'")
        if position is None and not game.settings.get("spectators", True):
            raise Forbidden("this game has no spectators: only its players may look at it")
        seat = None if position is None else s.exec(select(Seat).where(
            Seat.game_id == game.id, Seat.position == position)).first()
        assert game.id is not None
        current = marks(s, [game.id])
    watcher = ((game.id, seat.id) if seat is not None and seat.id is not None and not seat.is_bot
               else None)
    told = request.args.get("mark", "")
    return stream([uid], watcher, changed_already=bool(told) and told != current)


@live.get("/live/games")
def my_games_stream() -> ResponseReturnValue:
    """The live connection of My games: every game it lists."""
    uids = my_game_uids()
    told = request.args.get("mark", "")
    return stream(uids, None, changed_already=bool(told) and told != marks_of(service(), uids))


def my_game_uids() -> list[str]:
    """The games My games lists: those this browser plays or made, and those of the address
    it signed in as (at most :data:`MOST_GAMES`)."""
    uids = dict.fromkeys([*my_seats(), *created_games()])
    account = signed_in()
    if account is not None:
        uids.update(dict.fromkeys(uid for uid, _ in account_seats(service(), account.email)))
    return list(uids)[:MOST_GAMES]


def stream(uids: list[str], watcher: Watched | None, *, changed_already: bool) -> Response:
    """The event stream of ``uids``; ``watcher``: the (game, seat) that counts as watching while
    it is open."""
    svc = service()
    subscription = FEED.subscribe(uids, svc.engine)
    if changed_already:
        subscription.notify()
    seen = presence()
    if watcher is not None:
        seen.enter(watcher)
    response = Response(events(subscription, seen, watcher), mimetype="text/event-stream")
    response.headers["Cache-Control"] = "no-store"
    response.headers["X-Accel-Buffering"] = "no"
    return response


def events(subscription: Subscription, seen: Presence, watcher: Watched | None,
           heartbeat: float = HEARTBEAT, lifetime: float = LIFETIME) -> Iterator[str]:
    """The stream's text, until its lifetime ends or the browser goes (the server notices at the
    next line it writes, and closes the generator: the ``finally`` lets go)."""
    try:
        yield f"retry: {RETRY_MS}\n\n"
        ends = time.monotonic() + lifetime
        while (left := ends - time.monotonic()) > 0:
            if subscription.wait(min(heartbeat, left)):
                yield "event: changed\ndata: \n\n"
            else:
                yield ": \n\n"
    finally:
        subscription.close()
        if watcher is not None:
            seen.leave(watcher)
