"""Titan Post: a play-by-email turn server for racing board games, each registered in
:mod:`app.games`.

Where things are: the games, each in a folder of its own, on a shared kit (:mod:`app.games`);
what every part stands on (:mod:`app.core`); the game service, the one way a game changes
(:mod:`app.service`), with its listeners (:mod:`app.listeners`); the server's features, one
folder each (:mod:`app.features`); the web application (:mod:`app.web`) and the mail
(:mod:`app.mail`). The command line is the ``cli`` package beside this one.

``from app import create_app`` gives :func:`app.web.create_app`, imported only when asked for,
so that a game's engine can be used without loading Flask or a database driver.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from app.web import create_app as create_app


def __getattr__(name: str) -> Any:
    if name == "create_app":
        from app.web import create_app

        return create_app
    raise AttributeError(f"module 'app' has no attribute {name!r}")
