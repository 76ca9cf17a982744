"""The server-rendered pages, one blueprint per area, and the one place that registers them.

- :mod:`.home`: the home page and this browser's games;
- :mod:`.newgame`: creating a game, its set-up page, invitations, start, abandon, join;
- :mod:`.play`: the game page and its composer, a move, an option's preview, the log, resign;
- :mod:`.me`: a player's away dates and quiet hours;
- :mod:`.owner`: pausing, resuming and re-seating a running game;
- :mod:`.admin`: the admin sign-in, the list of games and a game's replay;
- :mod:`.pictures`: the board pictures mails show by signed address.

What they share lives in :mod:`.common` (page language, error pages, a game's rows, the creator
tokens this browser keeps); the browser's seats live in :mod:`app.web`, which imports no page.
"""

from __future__ import annotations

from flask import Flask


def register_web(app: Flask) -> None:
    """Register every page blueprint, the signed-link pages and (outside production) the
    outbox page."""
    from ..links import links
    from .admin import bp as admin
    from .home import bp as home
    from .me import bp as me
    from .newgame import bp as newgame
    from .owner import bp as owner
    from .pictures import bp as pictures
    from .play import bp as play

    for blueprint in (home, newgame, play, me, owner, admin, links, pictures):
        app.register_blueprint(blueprint)
    if not app.extensions["titanpost.settings"].production:  # the outbox page (mail not sent)
        from ..mail.devmail import devmail

        app.register_blueprint(devmail)
