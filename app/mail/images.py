"""The board picture of a mail: inline (a ``cid:`` part) or a signed image address.

Drawing the 800-pixel board PNG costs about 90 ms, nine tenths of rendering a mail, so a
sender that drew one per mail could not deliver more than about ten mails a second. A mail
therefore names its picture by a signed address instead, ``<base>/board/<token>.png``: the
token (itsdangerous, signed with the server key, no time stamp, so the same picture always has
the same address) names the game, the log position (``seq``), the seat whose view the picture
is, the language and the space marks outlined. The web server draws the picture on its first
request, keeps it in memory (:class:`PictureCache`) and serves it as immutable: the state
after a given entry of the append-only log never changes. Gmail (through its image proxy) and
most other clients show such pictures by default.

The picture is the seat's own view after entry ``seq`` as the log has it: the answers sealed to
a simultaneous decision (not in the log) are not drawn, so an address always shows the same
picture; a mail whose seat view has sealed answers in it carries its picture inline instead.

The inline picture stays the fallback: ``TITANPOST_MAIL_IMAGES`` is ``inline`` (always),
``link`` (always the address) or ``auto`` (the default): the address when players' mail clients
can reach the base address (``TITANPOST_BASE_URL`` is ``https://`` on a public host name),
inline otherwise (``http://``, ``localhost``, an IP address, a name without a dot or under a
reserved or local domain such as ``.test``, ``.example``, ``.local``, ``.internal``).
"""

from __future__ import annotations

import hashlib
import ipaddress
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Final
from urllib.parse import urlsplit

from itsdangerous import BadSignature, URLSafeSerializer

from app.core.config import Settings

INLINE: Final = "inline"
LINK: Final = "link"
AUTO: Final = "auto"
MODES: Final = (INLINE, LINK, AUTO)
PICTURE_SALT: Final = "titanpost.board-picture"
PICTURE_PATH: Final = "/board/"
PICTURE_MAX_AGE: Final = 365 * 24 * 3600
"""Seconds a client or proxy may keep a served picture (it never changes)."""
LOCAL_SUFFIXES: Final = (".localhost", ".local", ".test", ".example", ".invalid",
                         ".internal", ".lan", ".home", ".corp", ".intranet",
                         ".home.arpa", ".localdomain")
"""Host names under these reach no mail client outside (RFC 2606, RFC 6761, RFC 6762 and
common private names)."""


def reachable_from_outside(base_url: str) -> bool:
    """Whether a mail client's image proxy (Gmail's) can fetch pictures from ``base_url``: an
    ``https://`` address on a public host name or address."""
    parts = urlsplit(base_url)
    host = (parts.hostname or "").rstrip(".").lower()
    if parts.scheme != "https" or not host:
        return False
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return "." in host and host != "localhost" and not host.endswith(LOCAL_SUFFIXES)
    return address.is_global


def picture_mode(settings: Settings) -> str:
    """``inline`` or ``link``: how this server's mails carry their board picture."""
    if settings.mail_images == AUTO:
        return LINK if reachable_from_outside(settings.base_url) else INLINE
    return settings.mail_images


@dataclass(frozen=True)
class BoardPicture:
    """What a board picture shows: seat ``seat``'s view of game ``game`` after log entry
    ``seq``, worded in ``lang``, with ``highlight`` space marks outlined."""

    game: str
    seq: int
    seat: int
    lang: str
    highlight: tuple[str, ...] = ()


class PictureError(ValueError):
    """An image address that this server did not make (or that was altered)."""


def _serializer(secret_key: str) -> URLSafeSerializer:
    return URLSafeSerializer(secret_key, salt=PICTURE_SALT)


def make_picture_token(secret_key: str, picture: BoardPicture) -> str:
    payload = {"g": picture.game, "q": picture.seq, "s": picture.seat, "l": picture.lang,
               "h": list(picture.highlight)}
    token: str = _serializer(secret_key).dumps(payload)
    return token


def read_picture_token(secret_key: str, token: str) -> BoardPicture:
    """The picture a token names; raises PictureError when it is forged or damaged."""
    try:
        data = _serializer(secret_key).loads(token)
    except BadSignature:
        raise PictureError("this board picture's address was not made by this server or was "
                           "altered (its signature does not match)") from None
    try:
        highlight = data["h"]
        if not isinstance(highlight, list) or not all(isinstance(h, str) for h in highlight):
            raise TypeError
        return BoardPicture(str(data["g"]), int(data["q"]), int(data["s"]), str(data["l"]),
                            tuple(highlight))
    except (KeyError, TypeError, ValueError):
        raise PictureError("this board picture's address is damaged") from None


def picture_url(settings: Settings, picture: BoardPicture) -> str:
    token = make_picture_token(settings.secret_key, picture)
    return f"{settings.base_url}{PICTURE_PATH}{token}.png"


def etag_of(png: bytes) -> str:
    return hashlib.sha256(png).hexdigest()[:32]


class PictureCache:
    """The PNGs of the last ``size`` pictures drawn, by picture (thread-safe); a picture asked
    for by several threads at once is drawn once. (A board PNG is about 100 KiB: 128 of them
    hold about 13 MiB a process.)"""

    def __init__(self, size: int = 128) -> None:
        self.size = size
        self._pngs: OrderedDict[BoardPicture, bytes] = OrderedDict()
        self._lock = threading.Lock()
        self._drawing: dict[BoardPicture, threading.Lock] = {}
        self.drawn = 0
        """How many pictures were drawn (not found in the cache)."""

    def get(self, picture: BoardPicture, draw: Callable[[BoardPicture], bytes]) -> bytes:
        with self._lock:
            found = self._pngs.get(picture)
            if found is not None:
                self._pngs.move_to_end(picture)
                return found
            drawing = self._drawing.setdefault(picture, threading.Lock())
        try:
            with drawing:
                with self._lock:
                    found = self._pngs.get(picture)
                if found is None:
                    found = draw(picture)
                    with self._lock:
                        self.drawn += 1
                        self._pngs[picture] = found
                        while len(self._pngs) > self.size:
                            self._pngs.popitem(last=False)
        finally:
            with self._lock:
                self._drawing.pop(picture, None)
        return found


def highlight_of(marks: Sequence[str]) -> tuple[str, ...]:
    return tuple(sorted(set(marks)))


__all__ = [
    "AUTO",
    "INLINE",
    "LINK",
    "MODES",
    "BoardPicture",
    "PictureCache",
    "PictureError",
    "make_picture_token",
    "picture_mode",
    "picture_url",
    "reachable_from_outside",
    "read_picture_token",
]
