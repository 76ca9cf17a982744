"""The garbage collector held back while the sender renders a batch (:mod:`app.mail.collector`):
off inside, back as it was after, however many threads hold it and however a block ends."""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator

import pytest

from app.mail.collector import collector_held


@pytest.fixture(autouse=True)
def collector_restored() -> Iterator[None]:
    was = gc.isenabled()
    yield
    if was:
        gc.enable()
    else:
        gc.disable()


def test_held_inside_and_back_after() -> None:
    gc.enable()
    with collector_held():
        assert not gc.isenabled()
        with collector_held():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the outer block still holds it
    assert gc.isenabled()


def test_back_after_an_error() -> None:
    gc.enable()
    with pytest.raises(ZeroDivisionError), collector_held():
        _ = 1 / 0
    assert gc.isenabled()


def test_a_collector_that_was_off_stays_off() -> None:
    gc.disable()
    with collector_held():
        assert not gc.isenabled()
    assert not gc.isenabled()


def test_threads_that_overlap_let_it_run_when_the_last_lets_go() -> None:
    """Thread A holds, B holds, A lets go (still held for B), B lets go (back on): with one
    flag saved per block instead of a count, B would restore "off" for good."""
    gc.enable()
    a_in, b_in, a_out = threading.Event(), threading.Event(), threading.Event()
    seen: dict[str, bool] = {}

    def first() -> None:
        with collector_held():
            a_in.set()
            b_in.wait(5)
        a_out.set()

    def second() -> None:
        a_in.wait(5)
        with collector_held():
            b_in.set()
            a_out.wait(5)
            seen["after A let go"] = gc.isenabled()

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert seen == {"after A let go": False}
    assert gc.isenabled()
