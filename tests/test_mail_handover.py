"""No mail twice when a sender dies or its connection breaks in the middle of an SMTP delivery.

The sender marks a row ``handed_at`` just before it ends the message's data (the ``.`` line):
from then on the relay may have the message, so the row is never sent again. These tests stop a
real sender at each point of the SMTP transaction, against a real aiosmtpd server:

- a ``titanpost mail send`` process killed with SIGKILL after the relay took the message and
  before it answered: the next sender settles the row as sent (unconfirmed), never twice;
- the same process killed before the data was ended (at RCPT): the relay has nothing, the row
  is sent again once its lease has run out;
- the connection lost while waiting for the relay's answer: settled unconfirmed at once;
- the relay answering 451 after the data: the row is retried and arrives once.
"""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from aiosmtpd.controller import Controller

from app import create_app
from app.core.models import OutboxMail, utcnow
from app.mail.send import LEASE, UNCONFIRMED
from tests.netutil import free_port
from tests.test_mail_out import BASE, DOMAIN, LATER, SECRET, Inbox, Post, Smtp, make_post

AFTER_THE_LEASE = LEASE + LATER


class StoppingInbox(Inbox):
    """An SMTP server that, for the first message only, does ``stop`` at ``where``: at RCPT
    (before any data) or after the data was received (before the server answers)."""

    def __init__(self, where: str) -> None:
        super().__init__()
        self.where = where
        self.stop: Any = None
        self.stopped_on: list[str] = []

    def _stop_once(self, what: str) -> bool:
        if self.stop is None or self.stopped_on:
            return False
        self.stopped_on.append(what)
        self.stop()
        return True

    async def handle_RCPT(self, server: Any, session: Any, envelope: Any, address: str,
                          rcpt_options: list[str]) -> str:
        if self.where == "rcpt":
            self._stop_once(address)
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        answer = await super().handle_DATA(server, session, envelope)
        if self.where == "data":
            self._stop_once(str(self.mails()[-1]["Message-ID"]))
        return answer


@pytest.fixture
def stopping(request: pytest.FixtureRequest) -> Iterator[Smtp]:
    inbox = StoppingInbox(request.param)
    port = free_port()
    controller = Controller(inbox, hostname="127.0.0.1", port=port)
    controller.start()
    try:
        yield Smtp(inbox, port, [])
    finally:
        controller.stop()


def _sender_process(titanpost: str, url: str, smtp: Smtp) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TITANPOST_")}
    env |= {"TITANPOST_DATABASE_URL": url, "TITANPOST_SECRET_KEY": SECRET,
            "TITANPOST_MAIL_DOMAIN": DOMAIN, "TITANPOST_BASE_URL": BASE,
            "TITANPOST_SMTP_URL": smtp.url}
    return subprocess.Popen([titanpost, "mail", "send", "--once"], env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def _kill_on_stop(inbox: StoppingInbox, process: subprocess.Popen[str]) -> None:
    def stop() -> None:
        process.send_signal(signal.SIGKILL)
        process.wait(30)
    inbox.stop = stop


def _deliverable(post: Post) -> list[OutboxMail]:
    return [r for r in post.rows() if not (r.last_error or "").startswith("skipped")]


@pytest.mark.parametrize("stopping", ["data"], indirect=True)
def test_a_sender_killed_after_ending_the_data_never_sends_it_again(
        tmp_path: Path, stopping: Smtp, titanpost: str) -> None:
    url = f"sqlite:///{tmp_path / 'kill.db'}"
    post = make_post(url, stopping)
    post.new_game()  # a pick mail and a started mail are due (the invitations are skipped)
    inbox = stopping.inbox
    assert isinstance(inbox, StoppingInbox)
    process = _sender_process(titanpost, url, stopping)
    _kill_on_stop(inbox, process)
    assert process.wait(60) == -signal.SIGKILL, process.communicate()
    [victim] = inbox.stopped_on
    [row] = post.rows(message_id=victim)
    assert row.handed_at is not None and row.sent_at is None

    # while its lease runs, nobody touches it
    early = post.sender().run_once(now=utcnow() + timedelta(minutes=1))
    assert early.unconfirmed == 0 and post.rows(message_id=victim)[0].sent_at is None

    late = post.sender().run_once(now=utcnow() + AFTER_THE_LEASE)
    assert late.unconfirmed == 1, late
    [row] = post.rows(message_id=victim)
    assert row.sent_at == row.handed_at and (row.last_error or "").startswith(UNCONFIRMED)
    assert post.sender().run_once(now=utcnow() + 2 * AFTER_THE_LEASE).claimed == 0

    delivered = _deliverable(post)
    assert len(delivered) >= 2 and all(r.sent_at is not None for r in delivered)
    ids = inbox.ids()
    assert sorted(ids) == sorted(r.message_id for r in delivered)
    assert set(ids.values()) == {1}, ids

    app = create_app(post.settings)
    health = app.test_client().get("/healthz").get_json()
    assert health["outbox"]["unconfirmed"] == 1
    post.service.engine.dispose()


@pytest.mark.parametrize("stopping", ["rcpt"], indirect=True)
def test_a_sender_killed_before_ending_the_data_sends_it_again(
        tmp_path: Path, stopping: Smtp, titanpost: str) -> None:
    url = f"sqlite:///{tmp_path / 'kill.db'}"
    post = make_post(url, stopping)
    post.new_game()
    inbox = stopping.inbox
    assert isinstance(inbox, StoppingInbox)
    process = _sender_process(titanpost, url, stopping)
    _kill_on_stop(inbox, process)
    assert process.wait(60) == -signal.SIGKILL, process.communicate()
    assert inbox.ids() == {}  # killed at the first RCPT: the relay has nothing
    claimed = [r for r in _deliverable(post) if r.sent_at is None]
    assert claimed and all(r.handed_at is None for r in claimed)

    late = post.sender().run_once(now=utcnow() + AFTER_THE_LEASE)
    assert late.unconfirmed == 0 and late.sent == len(claimed), late
    delivered = _deliverable(post)
    assert all(r.sent_at is not None and not r.last_error for r in delivered)
    ids = inbox.ids()
    assert sorted(ids) == sorted(r.message_id for r in delivered)
    assert set(ids.values()) == {1}, ids
    post.service.engine.dispose()


class DroppingInbox(Inbox):
    """Takes the first message and drops the connection instead of answering."""

    dropped: int = 0

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        answer = await super().handle_DATA(server, session, envelope)
        if not self.dropped:
            self.dropped += 1
            server.transport.close()
        return answer


class RefusingInbox(Inbox):
    """Answers the first message's data with 451 (so it is not taken), then accepts."""

    refused: int = 0

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        if not self.refused:
            self.refused += 1
            return "451 4.3.0 try again later"
        return await super().handle_DATA(server, session, envelope)


def _serve(inbox: Inbox) -> tuple[Controller, Smtp]:
    port = free_port()
    controller = Controller(inbox, hostname="127.0.0.1", port=port)
    controller.start()
    return controller, Smtp(inbox, port, [])


def test_a_connection_lost_after_the_data_is_settled_unconfirmed(tmp_path: Path) -> None:
    controller, smtp = _serve(DroppingInbox())
    try:
        post = make_post(f"sqlite:///{tmp_path / 'drop.db'}", smtp)
        post.new_game()
        first = post.sender().run_once(now=utcnow() + LATER)
        assert first.unconfirmed == 1 and first.sent == 0, first
        [row] = [r for r in post.rows() if (r.last_error or "").startswith(UNCONFIRMED)]
        assert row.sent_at is not None and "no answer from the relay" in (row.last_error or "")
        # the rest of the batch is released and goes out with the next round, the dropped
        # one is never sent again
        second = post.sender().run_once(now=utcnow() + AFTER_THE_LEASE)
        assert second.unconfirmed == 0 and second.sent >= 1, second
        ids = smtp.inbox.ids()
        assert sorted(ids) == sorted(r.message_id for r in _deliverable(post))
        assert set(ids.values()) == {1}, ids
        post.service.engine.dispose()
    finally:
        controller.stop()


def test_an_error_answer_after_the_data_is_retried(tmp_path: Path) -> None:
    controller, smtp = _serve(RefusingInbox())
    try:
        post = make_post(f"sqlite:///{tmp_path / 'refuse.db'}", smtp)
        post.new_game()
        first = post.sender().run_once(now=utcnow() + LATER)
        assert first.failed == 1 and first.unconfirmed == 0, first
        [row] = [r for r in _deliverable(post) if r.sent_at is None]
        assert row.handed_at is None and "451" in (row.last_error or "")
        again = post.sender().run_once(now=utcnow() + LATER + timedelta(minutes=2))
        assert again.sent == 1, again
        ids = smtp.inbox.ids()
        assert sorted(ids) == sorted(r.message_id for r in _deliverable(post))
        assert set(ids.values()) == {1}, ids
        post.service.engine.dispose()
    finally:
        controller.stop()
