"""Signed tokens for the links in mails (itsdangerous).

An option link is bound to a game, a seat, the decision (the number of moves in the log when it
opened) and one option; it is signed with the server key and the seat's own secret, and it lives
as long as that decision is pending (at most ``OPTION_LINK_MAX_AGE``). A game link lets a browser
open the game as that seat.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from itsdangerous import BadSignature, SignatureExpired, URLSafeTimedSerializer

from app.core.integers import in_column

OPTION_SALT = "titanpost.option-link"
GAME_SALT = "titanpost.game-link"
OPTION_LINK_MAX_AGE = 30 * 24 * 3600
GAME_LINK_MAX_AGE = 365 * 24 * 3600


class LinkError(ValueError):
    """A link that cannot be used; ``reason`` is "forged", "expired" or "malformed"."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message


@dataclass(frozen=True)
class OptionLink:
    game: str
    seat: int
    seq: int
    option: str


def _serializer(secret_key: str, seat_secret: str, salt: str) -> URLSafeTimedSerializer:
    return URLSafeTimedSerializer(secret_key + seat_secret, salt=salt)


def make_option_token(secret_key: str, seat_secret: str, link: OptionLink) -> str:
    payload = {"g": link.game, "s": link.seat, "q": link.seq, "o": link.option}
    return _serializer(secret_key, seat_secret, OPTION_SALT).dumps(payload)


def make_game_token(secret_key: str, seat_secret: str, game: str, seat: int) -> str:
    return _serializer(secret_key, seat_secret, GAME_SALT).dumps({"g": game, "s": seat})


def peek(token: str) -> dict[str, Any]:
    """The unverified payload (to find whose seat secret verifies it); raises LinkError.

    Anyone can make a token whose payload says anything: its game must be a string and its
    seat (and decision, if it names one) a whole number a column holds, else the link is
    damaged (app/core/integers.py): the seat is looked up before the signature can be checked."""
    try:
        _, payload = URLSafeTimedSerializer("unused").loads_unsafe(token)
    except Exception:  # itsdangerous raises several kinds on garbage
        raise LinkError("malformed", "this link is damaged (was it cut in two by the mail "
                        "program?)") from None
    if (not isinstance(payload, dict) or not isinstance(payload.get("g"), str)
            or not in_column(payload.get("s"))
            or not in_column(payload.get("q", 0))):
        raise LinkError("malformed", "this link is damaged")
    return payload


def _verify(token: str, secret_key: str, seat_secret: str, salt: str,
            max_age: int) -> dict[str, Any]:
    try:
        data: dict[str, Any] = _serializer(secret_key, seat_secret, salt).loads(
            token, max_age=max_age
        )
    except SignatureExpired:
        raise LinkError("expired", "this link has expired") from None
    except BadSignature:
        raise LinkError("forged", "this link was not made by this server (its signature "
                        "does not match)") from None
    return data


def read_option_token(token: str, secret_key: str, seat_secret: str,
                      max_age: int = OPTION_LINK_MAX_AGE) -> OptionLink:
    data = _verify(token, secret_key, seat_secret, OPTION_SALT, max_age)
    try:
        return OptionLink(str(data["g"]), int(data["s"]), int(data["q"]), str(data["o"]))
    except (KeyError, TypeError, ValueError):
        raise LinkError("malformed", "this link is damaged") from None


def read_game_token(token: str, secret_key: str, seat_secret: str) -> tuple[str, int]:
    data = _verify(token, secret_key, seat_secret, GAME_SALT, GAME_LINK_MAX_AGE)
    return str(data["g"]), int(data["s"])


UNSUBSCRIBE_SALT = "titanpost.unsubscribe-link"
UNSUBSCRIBE_LINK_MAX_AGE = 2 * 365 * 24 * 3600
"""An unsubscribe link works for two years: an old mail's link should still stop the mail."""


def make_unsubscribe_token(secret_key: str, seat_secret: str, game: str, seat: int) -> str:
    """The token of a mail's one-click unsubscribe address (``/u/<token>``, List-Unsubscribe):
    game and seat, signed with the server key and the seat's secret, so that it stops working
    when the seat is given to someone else."""
    return _serializer(secret_key, seat_secret, UNSUBSCRIBE_SALT).dumps({"g": game, "s": seat})


def read_unsubscribe_token(token: str, secret_key: str, seat_secret: str) -> tuple[str, int]:
    data = _verify(token, secret_key, seat_secret, UNSUBSCRIBE_SALT, UNSUBSCRIBE_LINK_MAX_AGE)
    try:
        return str(data["g"]), int(data["s"])
    except (KeyError, TypeError, ValueError):
        raise LinkError("malformed", "this link is damaged") from None


def unsubscribe_url(base_url: str, secret_key: str, seat_secret: str, game: str,
                    seat: int) -> str:
    """The address a mail of the seat names in ``List-Unsubscribe`` (see
    app/features/unsubscribe/links.py)."""
    return f"{base_url}/u/{make_unsubscribe_token(secret_key, seat_secret, game, seat)}"


DIGEST_UNSUBSCRIBE_SALT = "titanpost.digest-unsubscribe-link"


def make_digest_unsubscribe_token(secret_key: str, email: str,
                                  seats: list[tuple[str, int]]) -> str:
    """The token of a digest's one-click unsubscribe address (``/u/digest/<token>``): the
    address the digest went to and the seats (game, position) it covers, signed with the
    server key. A digest covers several games, so no one seat's secret can sign it; a seat
    since given to another address is left alone when the link is used."""
    payload = {"e": email, "seats": [[game, seat] for game, seat in seats]}
    return URLSafeTimedSerializer(secret_key, salt=DIGEST_UNSUBSCRIBE_SALT).dumps(payload)


def read_digest_unsubscribe_token(token: str, secret_key: str) -> tuple[str, list[tuple[str, int]]]:
    """The address and seats of a digest's unsubscribe token; raises LinkError."""
    try:
        data = URLSafeTimedSerializer(secret_key, salt=DIGEST_UNSUBSCRIBE_SALT).loads(
            token, max_age=UNSUBSCRIBE_LINK_MAX_AGE)
    except SignatureExpired:
        raise LinkError("expired", "this link has expired") from None
    except BadSignature:
        raise LinkError("forged", "this link was not made by this server (its signature "
                        "does not match)") from None
    try:
        seats = [(str(game), int(seat)) for game, seat in data["seats"]]
        return str(data["e"]), seats
    except (KeyError, TypeError, ValueError):
        raise LinkError("malformed", "this link is damaged") from None


def digest_unsubscribe_url(base_url: str, secret_key: str, email: str,
                           seats: list[tuple[str, int]]) -> str:
    """The address a digest names in ``List-Unsubscribe`` (see
    app/features/unsubscribe/links.py)."""
    return f"{base_url}/u/digest/{make_digest_unsubscribe_token(secret_key, email, seats)}"


CALENDAR_SALT = "titanpost.calendar-feed"


def make_calendar_token(secret_key: str, seat_secret: str, game: str, seat: int) -> str:
    """The token of a seat's deadline calendar feed (calendar apps cannot log in, so the
    address carries it): game and seat, signed with the server key and the seat's secret."""
    return _serializer(secret_key, seat_secret, CALENDAR_SALT).dumps({"g": game, "s": seat})


def read_calendar_token(token: str, secret_key: str, seat_secret: str) -> tuple[str, int]:
    data = _verify(token, secret_key, seat_secret, CALENDAR_SALT, UNSUBSCRIBE_LINK_MAX_AGE)
    try:
        return str(data["g"]), int(data["s"])
    except (KeyError, TypeError, ValueError):
        raise LinkError("malformed", "this link is damaged") from None


SIGNIN_SALT = "titanpost.signin-link"
SIGNIN_LINK_MAX_AGE = 15 * 60
"""A sign-in link works for 15 minutes, and once (the ``signins`` row of its id,
app/features/signin/signins.py)."""
ACCOUNT_SALT = "titanpost.account"
ACCOUNT_MAX_AGE = 90 * 24 * 3600
"""How long a terminal's account token (``titanpost login EMAIL``) lasts, unless signed out."""


@dataclass(frozen=True)
class SignInLink:
    """What a sign-in link or account token carries: the address and the ``signins`` row id."""

    email: str
    token_id: str


def make_signin_token(secret_key: str, link: SignInLink, salt: str = SIGNIN_SALT) -> str:
    """A sign-in link's token (or, with ``ACCOUNT_SALT``, a terminal's account token): the
    address and the row id, signed with the server key."""
    return URLSafeTimedSerializer(secret_key, salt=salt).dumps({"e": link.email,
                                                                "j": link.token_id})


def read_signin_token(token: str, secret_key: str, salt: str = SIGNIN_SALT,
                      max_age: int = SIGNIN_LINK_MAX_AGE) -> SignInLink:
    """The address and row id of a sign-in token; raises LinkError ``malformed`` (damaged),
    ``forged`` (not signed by this server) or ``expired``, in that order: an expired token
    is one whose signature is good."""
    try:
        _, unverified = URLSafeTimedSerializer("unused", salt=salt).loads_unsafe(token)
    except Exception:  # itsdangerous raises several kinds on garbage
        raise LinkError("malformed", "this link is damaged") from None
    if not isinstance(unverified, dict) or token.lstrip(".").count(".") != 2:
        raise LinkError("malformed", "this link is damaged")
    try:
        data = URLSafeTimedSerializer(secret_key, salt=salt).loads(token, max_age=max_age)
    except SignatureExpired:
        raise LinkError("expired", "this link has expired") from None
    except BadSignature:
        raise LinkError("forged", "this link was not made by this server (its signature "
                        "does not match)") from None
    if not isinstance(data, dict) or not isinstance(data.get("e"), str) \
            or not isinstance(data.get("j"), str):
        raise LinkError("malformed", "this link is damaged")
    return SignInLink(data["e"], data["j"])
