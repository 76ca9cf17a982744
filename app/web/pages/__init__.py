"""The server-rendered pages, one blueprint per area (registered by :func:`app.web.create_app`;
a feature's own pages stand in its folder under app/features/).

- :mod:`.home`: the home page and this browser's games;
- :mod:`.newgame`: creating a game, its set-up page, invitations, start, abandon, join;
- :mod:`.play`: the game page and its composer, a move, an option's preview, the log, resign;
- :mod:`.me`: a player's away dates and quiet hours;
- :mod:`.seats`: a seat of a running game given to someone else;
- :mod:`.admin`: the admin sign-in, the list of games and a game's replay;
- :mod:`.pictures`: the board pictures mails show by signed address;
- :mod:`.log`: the rows of a game's log, as its page and the replay show them;
- :mod:`.language`, :mod:`.gamewords`: the page's language, a game's words on its pages.

What they share lives in :mod:`.common` (page language, error pages, a game's rows, the creator
tokens this browser keeps); the browser's seats live in :mod:`app.web.browser_seats`, which imports
no page.
"""

from __future__ import annotations

from flask import Flask, Response


def install_page_hooks(app: Flask) -> None:
    """What every page shares beyond its blueprint: the answer varies by language."""
    app.after_request(_vary_by_language)


def _vary_by_language(response: Response) -> Response:
    """A page's language may come from the browser's ``Accept-Language``
    (:func:`app.web.browser_seats.browser_language`): a cache must not give one reader's page to
    another."""
    if response.mimetype == "text/html":
        response.vary.add("Accept-Language")
    return response
