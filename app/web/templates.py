"""Where the pages' templates are found: the shared ones (``templates/``), each feature's own
(``app/features/<feature>/templates/``, under the same names) and each registered game's own
parts (``app/games/<game>/templates/pages/``), which the shared pages include as
``games/<game>/<file>`` (the set-up fields of a new race and a seat, the status line, the
players' table, a decision's composer)."""

from __future__ import annotations

from pathlib import Path

from jinja2 import BaseLoader, ChoiceLoader, FileSystemLoader, PrefixLoader

from app.features import template_folders
from app.games import GAMES, template_folder


def page_loader(shared: Path) -> BaseLoader:
    """The loader of the shared templates in ``shared`` and the features' own, and of every
    game's pages' parts under ``games/<game>/``."""
    games = PrefixLoader({name: FileSystemLoader(template_folder(name) / "pages")
                          for name in GAMES})
    return ChoiceLoader([FileSystemLoader([shared, *template_folders()]),
                         PrefixLoader({"games": games})])
