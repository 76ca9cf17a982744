"""The server's features, one folder each: what a feature decides (its commands and the listener
that writes its rows in a move's transaction), its pages and API routes, beside each other.

A feature builds on the game service (:mod:`app.service`), the mail (:mod:`app.mail`) and the
core (:mod:`app.core`); the web application (:mod:`app.web`) registers its routes. Two are part
of every move and the service reads them itself: the clock's arithmetic, rows and pause words
(a decision's deadline) and fair dealing (a game's deal and its record).

A feature's templates are in its own ``templates/`` folder, under the same names as the shared
ones (``pages/``, ``links/``, ``mail/``, ``signin/``): the pages' loader
(:func:`app.web.templates.page_loader`) and the mail's (:func:`app.mail.render.mail_folders`)
look in every feature's folder (:func:`template_folders`) after the shared ``templates/``."""

from __future__ import annotations

from pathlib import Path

FEATURES = Path(__file__).resolve().parent


def template_folders() -> list[Path]:
    """Every feature's own templates folder (``app/features/<feature>/templates/``), by name."""
    return sorted(folder for folder in FEATURES.glob("*/templates") if folder.is_dir())
