"""What the games' board pictures share: the palette's neutral ink and font, text and
attribute values made safe for XML, and the points of a hexagon. A game's picture draws its own
board with them (``app/games/<game>/picture/``)."""

from __future__ import annotations

import math
import re
from typing import Final
from xml.sax.saxutils import escape

FONT: Final = (
    "system-ui, -apple-system, 'Segoe UI', Roboto, 'Helvetica Neue', 'DejaVu Sans', "
    "'Liberation Sans', 'Noto Sans', Arial, sans-serif"
)
"""The font families a picture asks for (common sans-serif ones; see app/core/pictures.py)."""
INK: Final = "#2b2a33"
MUTED: Final = "#7a7163"

NOT_XML: Final = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
"""The characters XML cannot hold."""


def xml_chars(text: str) -> str:
    """``text`` without the characters XML cannot hold (a malformed view may carry any)."""
    return NOT_XML.sub("\ufffd", text)


def svg_attr(value: object) -> str:
    """``value`` as the text of an attribute between double quotes."""
    return escape(xml_chars(str(value)), {'"': "&quot;"})


def svg_text(x: float, y: float, content: str, *, size: float, fill: str = INK,
             bold: bool = False, anchor: str = "start", extra: str = "") -> str:
    """A ``<text>`` element: ``content`` escaped, ``extra`` attributes as they are."""
    weight = ' font-weight="bold"' if bold else ""
    return (
        f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}" fill="{fill}"{weight} '
        f'text-anchor="{anchor}"{extra}>{escape(xml_chars(content))}</text>'
    )


_FLAT: Final = tuple((math.cos(math.radians(60 * k)), math.sin(math.radians(60 * k)))
                     for k in range(6))
_POINTY: Final = tuple((math.cos(math.radians(60 * k - 90)),
                        math.sin(math.radians(60 * k - 90))) for k in range(6))


def flat_hexagon(cx: float, cy: float, radius: float) -> str:
    """The ``points`` of a hexagon with a flat top around (``cx``, ``cy``)."""
    return " ".join(f"{cx + radius * dx:.1f},{cy + radius * dy:.1f}" for dx, dy in _FLAT)


def pointy_hexagon(cx: float, cy: float, radius: float) -> str:
    """The ``points`` of a hexagon with a pointed top around (``cx``, ``cy``)."""
    return " ".join(f"{cx + radius * dx:.1f},{cy + radius * dy:.1f}" for dx, dy in _POINTY)


def icon_html(body: str, *, reach: float = 12.0, size: int = 24, label: str = "") -> str:
    """SVG ``body`` drawn round 0,0 (``reach`` user units each way) as an icon inside a page's
    HTML, ``size`` CSS px square: a picture of its own (``label`` its words) or, without a
    label, a decoration beside words that say the same."""
    names = (f'role="img" aria-label="{svg_attr(label)}"' if label
             else 'aria-hidden="true" focusable="false"')
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{size}" height="{size}" '
            f'viewBox="{-reach:g} {-reach:g} {2 * reach:g} {2 * reach:g}" {names} '
            f'font-family="{svg_attr(FONT)}">{body}</svg>')
