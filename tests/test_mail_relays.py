"""A second relay (issue 39): ``TITANPOST_SMTP_URL`` names two, and each address sticks to one.

Two real SMTP servers (aiosmtpd) on loopback play the primary and the fallback relay, on SQLite
and PostgreSQL, with the real sender; time is driven with the ``now`` the sender takes. Each
relay keeps every recipient it was offered (RCPT) and every message it took, so that a mail
that arrived twice, or went by a relay it should not have, is seen.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from aiosmtpd.controller import Controller

from app.core.config import ConfigError, Settings
from app.core.models import MailAddress, OutboxMail, utcnow
from app.core.observability import log_secrets
from app.features.delivery.routing import FALLBACK, PRIMARY, Relays
from app.features.delivery.standing import state_of
from app.mail.dnsrecords import needed_records
from app.mail.send import backoff
from tests.netutil import free_port
from tests.test_mail_out import ANN, LATER, Inbox, Post, make_post, settings_for

CAROL = "carol@example.com"
DAVE = "dave@example.com"
FAILOVER = timedelta(minutes=30)


@dataclass
class Relay(Inbox):
    """A relay that refuses the recipients in ``refuse`` at RCPT (550) and the messages to
    those in ``refuse_data`` at the end of their data (554)."""

    refuse: set[str] = field(default_factory=set)
    refuse_data: set[str] = field(default_factory=set)
    offered: list[str] = field(default_factory=list)

    async def handle_RCPT(self, server: Any, session: Any, envelope: Any, address: str,
                          options: Any) -> str:
        self.offered.append(address)
        if address in self.refuse:
            return "550 5.1.1 no such user here"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        if set(envelope.rcpt_tos) & self.refuse_data:
            return "554 5.7.1 not taken from you"
        return await super().handle_DATA(server, session, envelope)

    def to(self, address: str) -> int:
        return len(self.mails(address))


@dataclass
class Relays2:
    post: Post
    primary: Relay
    fallback: Relay

    def every_id(self) -> Counter[str]:
        """How often each Message-ID arrived, by either relay."""
        return self.primary.ids() + self.fallback.ids()

    def state(self, address: str) -> MailAddress:
        with self.post.service.session() as s:
            state = state_of(s, address)
            assert state is not None
            return state

    def row(self, address: str) -> OutboxMail:
        return self.post.rows(recipient=address)[-1]

    def invite(self, *emails: str) -> None:
        """A game that invites ``emails`` (one invitation mail each)."""
        seats: list[dict[str, Any]] = [{"email": email} for email in emails]
        self.post.new_game(seats=seats + [{"bot": True}] * (3 - len(seats)), start=False)


def _relay() -> tuple[Relay, Controller]:
    relay = Relay()
    controller = Controller(relay, hostname="127.0.0.1", port=free_port())
    controller.start()
    return relay, controller


@pytest.fixture
def relays(migrated_database_url: str) -> Iterator[Relays2]:
    (primary, one), (fallback, two) = _relay(), _relay()
    setting = f"smtp://127.0.0.1:{one.port} smtp://127.0.0.1:{two.port}"
    post = make_post(migrated_database_url, None, TITANPOST_SMTP_URL=setting)
    try:
        yield Relays2(post, primary, fallback)
    finally:
        post.service.engine.dispose()
        if one.loop.is_running():
            one.stop()
        two.stop()


def _aware(moment: datetime | None) -> datetime:
    assert moment is not None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


# ------------------------------------------------------------------ refusals


def test_a_refused_address_goes_by_the_other_relay_and_stays_there(relays: Relays2) -> None:
    relays.primary.refuse.add(CAROL)
    relays.invite(CAROL, ANN)
    report = relays.post.send()
    assert (report.sent, report.gave_up, report.failed) == (2, 0, 0)
    assert (relays.primary.to(CAROL), relays.fallback.to(CAROL)) == (0, 1)
    assert (relays.primary.to(ANN), relays.fallback.to(ANN)) == (1, 0)
    assert relays.row(CAROL).relay == FALLBACK and relays.row(ANN).relay == PRIMARY
    carol = relays.state(CAROL)
    assert carol.relay == FALLBACK and carol.undeliverable_since is None

    # the next mail to her goes by the fallback at once: the primary is not asked again
    relays.invite(CAROL, ANN)
    assert relays.post.send().sent == 2
    assert relays.primary.offered.count(CAROL) == 1
    assert (relays.primary.to(CAROL), relays.fallback.to(CAROL)) == (0, 2)
    assert relays.primary.to(ANN) == 2

    # now the fallback refuses her and the primary takes her again: she moves back
    relays.primary.refuse.clear()
    relays.fallback.refuse.add(CAROL)
    relays.invite(CAROL)
    assert relays.post.send().sent == 1
    assert (relays.primary.to(CAROL), relays.fallback.to(CAROL)) == (1, 2)
    assert relays.state(CAROL).relay == PRIMARY and relays.row(CAROL).relay == PRIMARY

    # no mail twice: every row arrived once, by one relay
    rows = relays.post.rows()
    assert all(row.sent_at is not None and row.last_error is None for row in rows)
    assert relays.every_id() == Counter({row.message_id: 1 for row in rows})


def test_an_address_both_relays_refuse_is_undeliverable(relays: Relays2) -> None:
    relays.primary.refuse.add(CAROL)
    relays.fallback.refuse.add(CAROL)
    relays.invite(CAROL, ANN)
    report = relays.post.send()
    assert (report.sent, report.gave_up) == (1, 1)
    assert relays.primary.offered.count(CAROL) == relays.fallback.offered.count(CAROL) == 1
    assert relays.primary.to(CAROL) == relays.fallback.to(CAROL) == 0
    row = relays.row(CAROL)
    assert row.sent_at is None and row.next_attempt_at is None
    assert (row.last_error or "").startswith("gave up: refused: 550")
    assert "(by the primary relay)" in (row.last_error or "")
    assert "(by the fallback relay)" in (row.last_error or "")
    carol = relays.state(CAROL)
    assert carol.undeliverable_since is not None and "550" in (carol.bounce_reason or "")
    # mail to her stops: neither relay is asked again
    relays.invite(CAROL)
    relays.post.send()
    assert relays.primary.offered.count(CAROL) == relays.fallback.offered.count(CAROL) == 1


def test_a_message_refused_at_the_end_of_its_data_goes_once_by_the_other(
        relays: Relays2) -> None:
    """The primary refuses the message after its hand-over was committed: the fallback is
    offered it (the relay answered, so it did not take it), and the address is not marked:
    the message was refused, not the address."""
    relays.primary.refuse_data.add(CAROL)
    relays.invite(CAROL, ANN)
    assert relays.post.send().sent == 2
    assert (relays.primary.to(CAROL), relays.fallback.to(CAROL)) == (0, 1)
    assert relays.row(CAROL).relay == FALLBACK and relays.state(CAROL).relay == FALLBACK
    assert relays.every_id() == Counter({row.message_id: 1 for row in relays.post.rows()})
    # both refuse the message: given up, the address still deliverable
    relays.fallback.refuse_data.add(CAROL)
    relays.invite(CAROL)
    report = relays.post.send()
    assert (report.sent, report.gave_up) == (0, 1)
    assert "554" in (relays.row(CAROL).last_error or "")
    assert relays.state(CAROL).undeliverable_since is None


# ------------------------------------------------------------------ a relay that is down


def test_a_relay_down_longer_than_the_failover_time_loses_its_addresses(
        migrated_database_url: str) -> None:
    fallback, controller = _relay()
    down = f"smtp://127.0.0.1:{free_port()}"  # nobody listens there
    setting = f"{down}, smtp://127.0.0.1:{controller.port}"
    post = make_post(migrated_database_url, None, TITANPOST_SMTP_URL=setting)
    relays = Relays2(post, Relay(), fallback)
    try:
        relays.invite(CAROL, ANN)
        t0 = utcnow() + LATER
        report = post.send(now=t0)
        assert (report.failed, report.sent) == (2, 0)
        assert _aware(relays.state(CAROL).relay_trouble_since) == t0
        assert relays.state(CAROL).relay == PRIMARY

        # shorter than the failover time: tried again on the primary, with the backoff
        t1 = t0 + timedelta(minutes=10)
        report = post.send(now=t1)
        assert (report.failed, report.sent) == (2, 0)
        assert fallback.mails() == []
        row = relays.row(CAROL)
        assert row.attempts == 2 and "cannot connect" in (row.last_error or "")
        assert _aware(row.next_attempt_at) == t1 + backoff(2)
        assert _aware(relays.state(CAROL).relay_trouble_since) == t0  # (since the first)

        # longer: the fallback has them, and they stay there
        t2 = t0 + FAILOVER + timedelta(minutes=1)
        report = post.send(now=t2)
        assert (report.sent, report.failed) == (2, 0)
        assert (fallback.to(CAROL), fallback.to(ANN)) == (1, 1)
        carol = relays.state(CAROL)
        assert carol.relay == FALLBACK and carol.relay_trouble_since is None

        # a relay that is down does not hold the other's mail up: in one round, Carol's mail
        # goes by the fallback while Dave's (new, so on the primary) waits for the primary
        relays.invite(CAROL, DAVE)
        report = post.send(now=t2 + timedelta(minutes=1))
        assert (report.sent, report.failed) == (1, 1)
        assert (fallback.to(CAROL), fallback.to(DAVE)) == (2, 0)
        assert relays.state(DAVE).relay == PRIMARY
        assert relays.every_id() == Counter(
            {row.message_id: 1 for row in post.rows() if row.sent_at is not None})
    finally:
        post.service.engine.dispose()
        controller.stop()


def test_a_fallback_that_fails_too_sends_the_address_back_after_the_failover_time(
        migrated_database_url: str) -> None:
    """Both relays down: the address moves to the fallback after the failover time, then,
    the fallback failing as long, back to the primary (which is up again by then)."""
    primary, port = Relay(), free_port()  # (not listening yet)
    one = Controller(primary, hostname="127.0.0.1", port=port)
    down = f"smtp://127.0.0.1:{free_port()}"
    post = make_post(migrated_database_url, None,
                     TITANPOST_SMTP_URL=f"smtp://127.0.0.1:{port} {down}")
    relays = Relays2(post, primary, Relay())
    try:
        relays.invite(CAROL)
        t0 = utcnow() + LATER
        assert post.send(now=t0).failed == 1
        t1 = t0 + FAILOVER
        assert post.send(now=t1).failed == 1
        carol = relays.state(CAROL)
        assert carol.relay == FALLBACK and _aware(carol.relay_trouble_since) == t1
        one.start()  # the primary is back
        assert post.send(now=t1 + timedelta(minutes=1)).claimed == 0  # (backing off)
        assert post.send(now=t1 + timedelta(minutes=20)).failed == 1  # still the fallback
        assert primary.mails() == []
        assert post.send(now=t1 + FAILOVER + timedelta(minutes=20)).sent == 1
        assert primary.to(CAROL) == 1 and relays.state(CAROL).relay == PRIMARY
    finally:
        post.service.engine.dispose()
        if one.loop.is_running():
            one.stop()


# ------------------------------------------------------------------ the setting


def test_the_setting_names_one_or_two_relays(tmp_path: Any) -> None:
    url = f"sqlite:///{tmp_path / 'x.db'}"
    one = settings_for(url, "smtp://u:p,q@mail.example.com:587?starttls=1")
    assert one.smtp_url == "smtp://u:p,q@mail.example.com:587?starttls=1"
    assert one.smtp_fallback_url is None and one.smtp_failover_minutes == 30
    for setting in ("smtp://a.example.com smtps://u:secret-two@b.example.com",
                    " smtp://a.example.com ,  smtps://u:secret-two@b.example.com ",
                    "smtp://a.example.com,smtps://u:secret-two@b.example.com"):
        two = settings_for(url, setting, TITANPOST_SMTP_FAILOVER_MINUTES="5")
        assert (two.smtp_url, two.smtp_fallback_url) == (
            "smtp://a.example.com", "smtps://u:secret-two@b.example.com")
        assert two.smtp_failover_minutes == 5
        routes = Relays.of(two)
        assert routes is not None and routes.failover == timedelta(minutes=5)
        assert [(name, t.host, t.port) for name, t in routes.targets.items()] == [
            (PRIMARY, "a.example.com", 25), (FALLBACK, "b.example.com", 465)]
        assert "secret-two" in log_secrets(two)
        spf = needed_records(two)[0].value
        assert "a:a.example.com" in spf and "a:b.example.com" in spf
    single = Relays.of(one)
    assert single is not None and list(single.targets) == [PRIMARY]
    assert single.other(PRIMARY) is None
    assert Relays.of(settings_for(url, None)) is None
    for bad in ("smtp://a smtp://b smtp://c", "smtp://a http://b"):
        with pytest.raises(ConfigError):
            settings_for(url, bad)
    with pytest.raises(ConfigError):
        settings_for(url, "smtp://a", TITANPOST_SMTP_FAILOVER_MINUTES="-1")


def test_an_address_on_a_relay_no_longer_configured_goes_by_the_primary() -> None:
    settings = Settings.from_env({"TITANPOST_ENV": "test", "TITANPOST_SECRET_KEY": "x" * 32,
                                  "TITANPOST_DATABASE_URL": "sqlite://",
                                  "TITANPOST_SMTP_URL": "smtp://a.example.com"})
    single = Relays.of(settings)
    assert single is not None
    now = utcnow()
    stuck = MailAddress(address=CAROL, relay=FALLBACK, relay_trouble_since=now - FAILOVER * 9)
    assert single.route(stuck, now) == PRIMARY
    both = Relays.of(settings, "smtp://a.example.com smtp://b.example.com")
    assert both is not None
    assert both.route(None, now) == PRIMARY
    assert both.route(stuck, now) == PRIMARY  # (its relay failed too long: the other one)
    assert both.route(MailAddress(address=CAROL, relay=FALLBACK), now) == FALLBACK
    recent = MailAddress(address=CAROL, relay=FALLBACK, relay_trouble_since=now - FAILOVER / 2)
    assert both.route(recent, now) == FALLBACK
