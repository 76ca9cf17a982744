"""Titan Race: its pure rules engine in :mod:`.engine`, and the layers above it: the ruleset the
service plays it through (:mod:`.ruleset`), its words (:mod:`.describe`), board picture
(:mod:`.picture`), mail parts (:mod:`.mail`), and all of them behind the
:class:`app.games.ui.GameUI` protocol (:mod:`.ui`). ``SETUP_FLAGS``: its set-up flags on the
command line (:mod:`app.games.commandline`)."""

from app.games.commandline import SetupFlag
from app.games.errors import N_

from .engine.circuits import BUILT_IN

DEFAULT_TITANS = "grinder,rassik,craken,slaugg"
"""The demo's Titans, in seating order, when ``--titans`` names none."""

SETUP_FLAGS = (
    SetupFlag(
        ("--circuit", "-c"), "circuits", multiple=True, metavar="NAME|FILE.toml",
        help=N_("Titan Race: one circuit, or three for grand-slam (built-in name or a TOML "
                "file)."),
        demo_help=N_("Circuit name or TOML file; give three for Grand Slam. Built in: "
                     "{circuits}"),
        demo_values={"circuits": ", ".join(BUILT_IN)}),
    SetupFlag(
        ("--titans", "-t"), "titans", demo_only=True,
        help=N_("Titan Race: comma-separated Titans in seating order (default {default})."),
        demo_values={"default": DEFAULT_TITANS}),
)
