"""Per-seat reply addresses: ``play+<game>.<seat>.<signature>@<mail domain>``.

A reply to any mail of a game lands on an address that names the game and seat and carries a
signature, so the inbound listener can refuse unknown or forged recipients at RCPT time.
"""

from __future__ import annotations

import hashlib
import hmac
import re

LOCAL_PREFIX = "play"
_ADDRESS = re.compile(
    r"^" + LOCAL_PREFIX + r"\+(?P<game>[0-9a-f]{32})\.(?P<seat>[0-5])\.(?P<sig>[0-9a-f]{16})@"
    r"(?P<domain>[^@\s]+)$"
)


def _signature(secret_key: str, game_uid: str, position: int) -> str:
    message = f"reply:{game_uid}:{position}".encode()
    return hmac.new(secret_key.encode(), message, hashlib.sha256).hexdigest()[:16]


def reply_address(secret_key: str, domain: str, game_uid: str, position: int) -> str:
    sig = _signature(secret_key, game_uid, position)
    return f"{LOCAL_PREFIX}+{game_uid}.{position}.{sig}@{domain}"


def parse_reply_address(secret_key: str, domain: str, address: str) -> tuple[str, int] | None:
    """``(game uid, seat position)`` for a genuine reply address of this server, else None."""
    match = _ADDRESS.match(address.strip().strip("<>").lower())
    if match is None or match["domain"] != domain.lower():
        return None
    game, seat = match["game"], int(match["seat"])
    if not hmac.compare_digest(match["sig"], _signature(secret_key, game, seat)):
        return None
    return game, seat
