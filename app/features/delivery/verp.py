"""The envelope sender of each mail: ``bounces+<token>@<mail domain>`` (VERP).

A delivery status notification (a bounce) goes to the envelope sender of the mail it is about,
so a per-mail envelope sender tells which outbox row bounced, and so which recipient, even when
the receiving server's report is too garbled to name them. The token is an HMAC of the row's
Message-ID under the server's secret: nobody can forge the bounce of a mail they did not get,
and it tells nothing the mail does not (no row number: counting the mails sent between two of
one's own would tell how busy the other seats were). The sender writes it on the row when it
hands the mail over, where a notification finds it.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
from typing import Final

BOUNCE_PREFIX: Final = "bounces"
TOKEN_LENGTH: Final = 20
"""Base32 characters (100 bits of the HMAC): the local part stays well within 64 characters."""
_ADDRESS = re.compile(
    r"^" + BOUNCE_PREFIX + r"\+(?P<token>[a-z2-7]{" + str(TOKEN_LENGTH) + r"})@(?P<domain>[^@\s]+)$"
)


def bounce_token(secret_key: str, message_id: str) -> str:
    """The token of the mail whose Message-ID is ``message_id`` (lower-case base32)."""
    digest = hmac.new(secret_key.encode(), f"bounce:{message_id}".encode(),
                      hashlib.sha256).digest()
    return base64.b32encode(digest).decode("ascii")[:TOKEN_LENGTH].lower()


def bounce_address(domain: str, token: str) -> str:
    """The envelope sender that carries ``token``."""
    return f"{BOUNCE_PREFIX}+{token}@{domain}"


def parse_bounce_address(domain: str, address: str) -> str | None:
    """The token of a bounce address of this server's ``domain``, else None (its row is looked
    up by the token: a token no row has is a forgery or a mail long gone)."""
    match = _ADDRESS.match(address.strip().strip("<>").lower())
    if match is None or match["domain"] != domain.lower():
        return None
    return match["token"]
