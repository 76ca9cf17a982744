"""The cyclic garbage collector held back while the sender renders a batch of mails.

Rendering a mail allocates many short-lived containers (Jinja contexts, rows, the MIME parts),
so the collector ran every few dozen of them, each run walking everything allocated and still
alive since the last, and a full run the whole process (its templates, locale data, cached
states): about 15% of the CPU a mail took. Held back while a batch is rendered (the sender's
batch: 50 mails by default; CPU work and database reads, no waiting on the mail relay), it runs
once after, over what the batch left. The cycles a batch leaves wait that long: a few
megabytes.

The collector is the process's: every thread that holds it back is counted, and it runs again
(if it ran before the first of them) when the last lets go.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager


class _Holds:
    """How many callers hold the collector back, and whether it ran before the first."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.count = 0
        self.was_enabled = False


_HOLDS = _Holds()


@contextmanager
def collector_held() -> Iterator[None]:
    """No cyclic garbage collection inside the block (of any thread): see the module."""
    with _HOLDS.lock:
        if _HOLDS.count == 0:
            _HOLDS.was_enabled = gc.isenabled()
            gc.disable()
        _HOLDS.count += 1
    try:
        yield
    finally:
        with _HOLDS.lock:
            _HOLDS.count -= 1
            if _HOLDS.count == 0 and _HOLDS.was_enabled:
                gc.enable()
