"""The Great Race (docs/great-race-rules.md): its pure rules engine in :mod:`.engine`, and the
layers above it: the ruleset the service plays it through (:mod:`.ruleset`), its words
(:mod:`.describe`), board picture (:mod:`.picture`), text board (:mod:`.textboard`), mail parts
(:mod:`.mail`), and all of them behind the :class:`app.games.ui.GameUI` protocol (:mod:`.ui`).
``SETUP_FLAGS``: its set-up flags on the command line (:mod:`app.games.commandline`)."""

from app.games.commandline import SetupFlag
from app.games.errors import N_

from .engine.board import PURPLE

DEFAULT_CREWS = "french,belgian,italian,english"
"""The demo's crews, in seating order, when ``--crews`` names none."""

SETUP_FLAGS = (
    SetupFlag(
        ("--start", "start"), "start", metavar="CITY",
        help=N_("The Great Race: the start city, alger (the default) or le-cap."),
        demo_help=N_("The Great Race: the start city ({cities}; default {first})."),
        demo_values={"cities": ", ".join(PURPLE), "first": PURPLE[0]}),
    SetupFlag(("--leaders",), "leaders", is_flag=True,
              help=N_("The Great Race: with the Leader module.")),
    SetupFlag(
        ("--crews",), "crews", demo_only=True,
        help=N_("The Great Race: comma-separated crews in seating order (default {default})."),
        demo_values={"default": DEFAULT_CREWS}),
)
