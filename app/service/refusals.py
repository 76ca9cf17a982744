"""Refused submissions per seat: a seat that sends many refused moves in a short time (probing
what the rules refuse, by hand or by script) waits before the next is looked at.

A refusal can tell only what the sender could know (a chain stops at chance: see
:class:`app.games.base.SendersInputs`), so this is a second wall, as the rate limit on guessed
tokens is: counted on the same storage as the pages' and the API's limits (``memory://`` per
process, or a shared Redis), per game and seat, whatever the channel (API, page, command line,
reply mail)."""

from __future__ import annotations

import math
import time
from typing import Final

from limits import parse_many, storage
from limits.strategies import FixedWindowRateLimiter

from app.core.i18n import N_

from .errors import ServiceError

KEY: Final = "titanpost-refusals"
TOO_MANY: Final = N_(
    "too many of your moves were refused in a short time, so this one was not looked at: "
    "nothing was changed. Try again in {seconds} seconds")


class TooManyRefusals(ServiceError):
    """A seat over its limit of refused submissions (429, with the seconds to wait)."""

    status = 429


class RefusalLimit:
    """Counts refused submissions per game and seat against ``rate`` (None: no limit)."""

    def __init__(self, rate: str | None, storage_uri: str) -> None:
        self.items = sorted(parse_many(rate)) if rate else []
        self.strategy = (FixedWindowRateLimiter(storage.storage_from_string(storage_uri))
                         if self.items else None)

    def check(self, uid: str, position: int) -> None:
        """Refuse (TooManyRefusals) a seat over its limit, before its submission is read."""
        if self.strategy is None:
            return
        for item in self.items:
            if not self.strategy.test(item, KEY, uid, str(position)):
                reset = self.strategy.get_window_stats(item, KEY, uid, str(position)).reset_time
                seconds = max(1, math.ceil(reset - time.time()))
                raise TooManyRefusals(TOO_MANY.format(seconds=seconds),
                                      words=(TOO_MANY, {"seconds": seconds}),
                                      retry_after=seconds)

    def count(self, uid: str, position: int) -> None:
        """Count one refused submission of the seat."""
        if self.strategy is None:
            return
        for item in self.items:
            self.strategy.hit(item, KEY, uid, str(position))
