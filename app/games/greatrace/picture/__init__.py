"""The Great Race board picture (being split into modules; for now all in :mod:`.map`)."""

from .map import (
    BOXES,
    GAUGE_MAX,
    NO_DASHBOARD,
    RISK_FILL,
    WORDS,
    _crews,
    _finish,
    _hand_count,
    _int,
    _mapping,
    _pending_crews,
    _phase,
    _space,
    _start,
    _strings,
    board_svg,
    crew_colour,
    crew_name,
    parse_tile,
    word,
)

__all__ = ["BOXES", "GAUGE_MAX", "NO_DASHBOARD", "RISK_FILL", "WORDS", "_crews", "_finish",
           "_hand_count", "_int", "_mapping", "_pending_crews", "_phase", "_space", "_start",
           "_strings", "board_svg", "crew_colour", "crew_name", "parse_tile", "word"]
