"""Replies through real mail servers.

- ``titanpost mail poll`` (the installed command, as a subprocess) reads a reply that a player
  sent to Postfix, which delivered it into Dovecot by LMTP; and it never downloads a mail over
  ``TITANPOST_MAX_MAIL_BYTES``: Dovecot's own log counts what it sent.
- ``titanpost mail listen`` (a subprocess too) behind Postfix: Postfix relays the reply domain
  to it; a reply is applied, while a mail to an address that is not a reply address (550 at
  RCPT) and one over the limit (552) are bounced by Postfix to their sender.

The servers are private instances started by the fixtures of tests/mailservers.py (skipped,
saying why, where Debian's dovecot and postfix are not installed).

Each test runs on one database (what they check is the mail servers' side; a reply applied is
the same on both, as tests/test_mail_in.py shows on each): a reply is applied on PostgreSQL,
the production database, by each command, and the limits are checked on SQLite.
"""

from __future__ import annotations

import os
import re
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from email.message import EmailMessage
from pathlib import Path

import pytest

from tests.apifixtures import base_env, make_service
from tests.dbutil import migrated_database
from tests.mailservers import (
    WAIT_SECONDS,
    Dovecot,
    Postfix,
    PostfixFactory,
    wait_for_line,
    wait_for_port,
)
from tests.netutil import free_port
from tests.test_mail_in import DOMAIN, Table, gmail_reply, new_table, wire

pytest_plugins = ["tests.apifixtures", "tests.mailservers"]

MAIL_LIMIT = 40_000
"""TITANPOST_MAX_MAIL_BYTES of these tests: a photo attached makes a reply too large."""


@pytest.fixture
def table(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Table]:
    """A started game of three players on the database the test names (``sqlite`` or
    ``postgresql``, by indirect parametrization), its mails limited to MAIL_LIMIT."""
    with migrated_database(request.param, tmp_path) as url:
        made = new_table(make_service(url, TITANPOST_MAIL_DOMAIN=DOMAIN,
                                      TITANPOST_MAX_MAIL_BYTES=str(MAIL_LIMIT)))
        try:
            yield made
        finally:
            made.service.engine.dispose()


ON_POSTGRESQL = pytest.mark.parametrize("table", ["postgresql"], indirect=True)
ON_SQLITE = pytest.mark.parametrize("table", ["sqlite"], indirect=True)


def command_env(table: Table, **extra: str) -> dict[str, str]:
    """The environment of a titanpost command of the game's server: the test's own, with
    the server's TITANPOST_* settings instead of any others."""
    url = table.service.engine.url.render_as_string(hide_password=False)
    env = {k: v for k, v in os.environ.items() if not k.startswith("TITANPOST_")}
    return env | base_env(url, TITANPOST_MAIL_DOMAIN=DOMAIN,
                          TITANPOST_MAX_MAIL_BYTES=str(MAIL_LIMIT), **extra)


def reply(table: Table, text: str) -> EmailMessage:
    """The acting player's reply to the pending decision's mail."""
    return gmail_reply(table.address(), text, in_reply_to=table.decision_id())


def with_photo(msg: EmailMessage) -> EmailMessage:
    """``msg`` with an attachment that takes it over MAIL_LIMIT."""
    msg.add_attachment(b"\xff" * (2 * MAIL_LIMIT), maintype="image", subtype="jpeg",
                       filename="board.jpg")
    return msg


def wait_for_moves(table: Table, listener_log: Path) -> None:
    deadline = time.monotonic() + WAIT_SECONDS
    while not table.moves():
        assert time.monotonic() < deadline, listener_log.read_text()
        time.sleep(0.2)


# ------------------------------------------------------------------ mail poll against Dovecot


def poll(titanpost: str, table: Table, dovecot: Dovecot) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([titanpost, "mail", "poll"], capture_output=True, text=True,
                          env=command_env(table, TITANPOST_IMAP_URL=dovecot.imap_url()),
                          timeout=WAIT_SECONDS, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    return done


@ON_POSTGRESQL
def test_mail_poll_applies_a_reply_postfix_delivered_into_dovecot(
        table: Table, dovecot: Dovecot, postfix_factory: PostfixFactory, titanpost: str) -> None:
    """The reply domain's mailbox set-up of docs/mail.md: the MTA hands ``play+...@`` to
    Dovecot (LMTP, plus-addressing), and ``mail poll`` reads the INBOX of ``play``."""
    relay = postfix_factory({DOMAIN: f"lmtp:inet:127.0.0.1:{dovecot.lmtp_port}"})
    relay.send(table.player, [table.address()], wire(reply(table, table.options[0])))
    relay.wait_for(rf"to=<{re.escape(table.address())}>.* status=sent .*Saved",
                   "delivery into Dovecot")

    done = poll(titanpost, table, dovecot)
    assert "fetched 1, queued 1, not for a reply address 0\n" in done.stdout, done.stdout
    assert re.search(rf"reply \d+: applied \({re.escape(table.options[0])}\)", done.stdout)
    assert [m["input"] for m in table.moves()][:1] == [table.options[0]]
    [row] = table.inbound_rows()
    assert (row["recipient"], row["source"], row["sender"], row["result"]) == (
        table.address(), "imap", f"<{table.player}>", "applied")  # Dovecot's Return-Path
    assert [flags for _, flags in dovecot.messages()] == ["S"]  # seen: not fetched again


@ON_SQLITE
def test_mail_poll_never_downloads_a_mail_over_the_limit(
        table: Table, dovecot: Dovecot, titanpost: str) -> None:
    big = wire(with_photo(reply(table, table.options[0])))
    small = wire(reply(table, table.options[0]))
    assert len(big) > MAIL_LIMIT > len(small)
    dovecot.deliver(table.player, table.address(), big)
    dovecot.deliver(table.player, table.address(), small)

    done = poll(titanpost, table, dovecot)
    assert "fetched 1, queued 1, not for a reply address 0, too large 1" in done.stdout
    assert f"over the limit of {MAIL_LIMIT}" in done.stderr
    assert [m["input"] for m in table.moves()][:1] == [table.options[0]]
    assert len(table.inbound_rows()) == 1
    # Dovecot's own count of the session: one body sent, and fewer bytes in all than the
    # big mail has
    wait_for_line(dovecot.log, "Logged out in=", "end of the IMAP session")
    [session] = dovecot.logouts()
    assert session["bodies"] == 1 and session["out"] < MAIL_LIMIT < len(big), session
    (_, small_flags), (big_size, big_flags) = dovecot.messages()
    assert big_size > MAIL_LIMIT and big_flags == "FS"  # flagged: a person can find it
    assert small_flags == "S"


# --------------------------------------------------------------- mail listen behind Postfix


@contextmanager
def listening(table: Table, tmp_path: Path, titanpost: str) -> Iterator[tuple[int, Path]]:
    """``titanpost mail listen`` on a free loopback port: (its port, its log)."""
    port = free_port()
    log_path = tmp_path / "listen.log"
    with log_path.open("w") as log:
        process = subprocess.Popen(
            [titanpost, "mail", "listen", "--port", str(port), "--interval", "0.5"],
            env=command_env(table), stdout=log, stderr=subprocess.STDOUT)
        try:
            wait_for_port(port, "titanpost mail listen", log_path)
            yield port, log_path
        finally:
            process.terminate()
            process.wait(30)


def bounce_to(relay: Postfix, address: str) -> EmailMessage:
    """The delivery report Postfix sent back to ``address`` (it arrives at the outside sink)."""
    deadline = time.monotonic() + WAIT_SECONDS
    while not relay.outside.mails(address):
        assert time.monotonic() < deadline, relay.log.read_text()
        time.sleep(0.2)
    [report] = relay.outside.mails(address)
    assert report.get_content_type() == "multipart/report"
    return report


@ON_POSTGRESQL
def test_mail_listen_behind_postfix_applies_a_reply(
        table: Table, postfix_factory: PostfixFactory, titanpost: str, tmp_path: Path) -> None:
    with listening(table, tmp_path, titanpost) as (port, log):
        relay = postfix_factory({DOMAIN: f"smtp:[127.0.0.1]:{port}"})
        relay.send(table.player, [table.address()], wire(reply(table, table.options[0])))
        wait_for_moves(table, log)
        relay.wait_for(rf"to=<{re.escape(table.address())}>, relay=127\.0\.0\.1\[127\.0\.0\.1\]"
                       rf":{port}.* status=sent \(250 2\.0\.0 Reply queued\)", "relayed reply")
        stranger = f"nobody@{DOMAIN}"
        relay.send(table.player, [stranger], wire(gmail_reply(stranger, "pass")))
        report = bounce_to(relay, table.player)
    assert [m["input"] for m in table.moves()][:1] == [table.options[0]]
    [row] = table.inbound_rows()
    assert (row["source"], row["sender"], row["result"]) == ("smtp", table.player, "applied")
    assert "550 5.1.1 No such reply address" in report.as_string()


@ON_SQLITE
def test_mail_listen_refuses_oversize_replies_and_postfix_bounces_them(
        table: Table, postfix_factory: PostfixFactory, titanpost: str, tmp_path: Path) -> None:
    """Postfix reads the limit the listener announces (SIZE) and bounces a larger reply
    without sending it; a relay that ignores the announcement sends it and gets 552."""
    other = (table.actor + 1) % 3
    other_player = f"h{other}@example.com"
    with listening(table, tmp_path, titanpost) as (port, _):
        relay = postfix_factory({DOMAIN: f"smtp:[127.0.0.1]:{port}",
                                 table.address(other): f"nosize:[127.0.0.1]:{port}"})
        relay.send(table.player, [table.address()], wire(with_photo(reply(table, "pass"))))
        too_big = gmail_reply(table.address(other), "pass")
        relay.send(other_player, [table.address(other)], wire(with_photo(too_big)))
        announced = relay.wait_for(rf"to=<{re.escape(table.address())}>.* status=bounced "
                                   r"\((.*)\)$", "bounce at the announced limit")
        refused = relay.wait_for(rf"to=<{re.escape(table.address(other))}>.* status=bounced "
                                 r"\((.*)\)$", "bounce after the listener's 552")
        first, second = bounce_to(relay, table.player), bounce_to(relay, other_player)
    assert f"exceeds size limit {MAIL_LIMIT} of server 127.0.0.1" in announced[1], announced[0]
    assert "said: 552" in refused[1] and "end of DATA" in refused[1], refused[0]
    assert "Status: 5.3.4" in first.as_string() and "552" in second.as_string()
    assert table.inbound_rows() == [] and table.moves() == []



@ON_POSTGRESQL
def test_mail_listen_behind_postfix_takes_a_message_to_several_seats_once(
        table: Table, postfix_factory: PostfixFactory, titanpost: str, tmp_path: Path) -> None:
    """One message to two seats' reply addresses (one of them twice): Postfix hands the
    listener both in the order it likes, the message is queued once, for its author's seat,
    played once and answered once (here: not at all, a played move needs no answer)."""
    mine, other = table.address(), table.address((table.actor + 1) % 3)
    msg = reply(table, table.options[0])
    msg["Cc"] = other
    with listening(table, tmp_path, titanpost) as (port, log):
        relay = postfix_factory({DOMAIN: f"smtp:[127.0.0.1]:{port}"})
        relay.send(table.player, [other, mine, mine.upper()], wire(msg))
        wait_for_moves(table, log)
        for address in (mine, other):
            relay.wait_for(rf"to=<{re.escape(address)}>.* status=sent \(250 2\.0\.0 Reply "
                           r"queued\)", "relayed reply")
    assert [m["input"] for m in table.moves()][:1] == [table.options[0]]
    [row] = table.inbound_rows()
    assert (row["recipient"], row["result"]) == (mine, "applied")
    assert not [m for m in table.outbox() if m["kind"].startswith("reply-")]
