"""Board pictures as PNG, for every game: an SVG drawn by a game's picture module rendered with
resvg (resvg-py), so that a mail can carry the board inline."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Final

_FONT_CANDIDATES: Final = (
    ("DejaVuSans.ttf", "DejaVu Sans"),
    ("LiberationSans-Regular.ttf", "Liberation Sans"),
    ("NotoSans-Regular.ttf", "Noto Sans"),
    ("Arial.ttf", "Arial"),
    ("arial.ttf", "Arial"),
)
_FONT_DIRS: Final = (
    "/usr/share/fonts",
    "/usr/local/share/fonts",
    "/usr/X11R6/lib/X11/fonts",
    "/Library/Fonts",
    "/System/Library/Fonts",
    "C:/Windows/Fonts",
)


@cache
def _sans_family() -> str | None:
    """A sans-serif family that is installed, for resvg's generic ``sans-serif`` fallback."""
    for filename, family in _FONT_CANDIDATES:
        for folder in _FONT_DIRS:
            root = Path(folder)
            if root.is_dir() and next(root.rglob(filename), None) is not None:
                return family
    return None


def board_png(svg: str, width: int = 600) -> bytes:
    """Render a board picture's SVG to PNG bytes, ``width`` pixels wide.

    resvg loads the system fonts; our SVGs ask for common sans-serif families (DejaVu Sans,
    Liberation Sans, Noto Sans, Arial among them), and resvg's generic ``sans-serif`` is pointed
    at one that is installed, since its own default (Arial) often is not. resvg-py is imported
    here, so drawing the SVG works without it.
    """
    import resvg_py  # type: ignore[import-not-found,unused-ignore]

    data = resvg_py.svg_to_bytes(svg_string=svg, width=int(width), sans_serif_family=_sans_family())
    return bytes(data)
