"""Signed mail (issue 39): every mail the sender hands to the relay carries DKIM signatures
(RSA and Ed25519, relaxed/relaxed) that verify with the published keys once Dovecot has stored
the message; every kind of mail of both games in both languages has the headers the big
providers ask for; ``titanpost mail dkim-key`` makes a key and its record, ``titanpost mail dns``
prints and checks the domain's records; a key that cannot be used stops the sender with why."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import timedelta
from email import message_from_bytes, policy
from email.utils import parseaddr
from pathlib import Path
from typing import Any

import dkim
import pytest
from sqlmodel import col, select

from app.core.models import OutboxMail, utcnow
from app.games import GAMES
from app.mail.dnsrecords import DKIM, DMARC, SPF, Record, check, needed_records
from app.mail.message import build_message
from app.mail.notify import (
    DIGEST,
    GAME_OVER,
    INVITATION,
    NOTICE_KINDS,
    REPLY_KINDS,
    SIGNIN,
    STARTED,
)
from app.mail.send import Sender
from app.mail.signing import (
    ED25519,
    RSA,
    SIGNED_HEADERS,
    DkimError,
    DkimKey,
    OpenSslRsaKey,
    Signer,
    new_private_key,
    public_record,
    wire_form,
)
from tests.mailservers import Dovecot
from tests.test_mail_out import DOMAIN, Inbox, Post, Smtp, _start, make_post, settings_for
from tests.test_pseudo_locale_mail import _kinds, _race

pytest_plugins = ["tests.mailservers"]


@dataclass
class RawInbox(Inbox):
    """An SMTP server that keeps each message's bytes as they came over the wire."""

    raw: list[tuple[str, bytes]] = field(default_factory=list)

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        with self.lock:
            self.raw.append((envelope.rcpt_tos[0], bytes(envelope.original_content)))
        return await super().handle_DATA(server, session, envelope)


@pytest.fixture
def relay() -> Iterator[Smtp]:
    inbox = RawInbox()
    controller, port = _start(inbox)
    try:
        yield Smtp(inbox, port, [])
    finally:
        controller.stop()


@pytest.fixture
def keys(tmp_path: Path) -> dict[str, Path]:
    found = {}
    for algorithm in (RSA, ED25519):
        path = tmp_path / f"{algorithm}.pem"
        path.write_bytes(new_private_key(algorithm))
        found[algorithm] = path
    return found


def key_env(keys: dict[str, Path]) -> dict[str, str]:
    return {"TITANPOST_DKIM_KEY_FILE": str(keys[RSA]), "TITANPOST_DKIM_SELECTOR": "tp2026",
            "TITANPOST_DKIM_ED25519_KEY_FILE": str(keys[ED25519])}


def published(keys: dict[str, Path]) -> Any:
    """dkimpy's DNS lookup answered with the two keys' records, as DNS would."""
    records = {f"tp2026._domainkey.{DOMAIN}.": public_record(keys[RSA].read_bytes()),
               f"ed25519._domainkey.{DOMAIN}.": public_record(keys[ED25519].read_bytes())}

    def lookup(name: bytes, timeout: int = 5) -> bytes | None:
        text = name.decode()
        found = records.get(text if text.endswith(".") else text + ".")
        return found.encode() if found is not None else None

    return lookup


def verified(raw: bytes, lookup: Any) -> list[str]:
    """The algorithms of the message's DKIM signatures that verify, in their order."""
    signatures = message_from_bytes(raw, policy=policy.compat32).get_all("DKIM-Signature") or []
    checker = dkim.DKIM(raw)
    return [str(tags.group(1)) for index, signature in enumerate(signatures)
            if (tags := re.search(r"a=([a-z0-9-]+)", str(signature))) is not None
            and checker.verify(idx=index, dnsfunc=lookup)]


def all_mail(post: Post) -> None:
    """Send every row of the outbox (the continuation delay and the clock's times past)."""
    for hours in (1, 24, 72):
        post.sender().run_once(now=utcnow() + timedelta(hours=hours))


def every_kind(post: Post) -> list[tuple[str, bytes]]:
    """Every outbox row, also those the sender skipped (answered before it went out), as the
    sender puts it on the wire: rendered, built, signed with its signer; and what it did send
    (the relay's copies)."""
    sender = post.sender()
    assert sender.signer is not None
    made = []
    with post.service.session() as s:
        for row in s.exec(select(OutboxMail).order_by(col(OutboxMail.id))).all():
            mail = sender.renderer.render(row, always=True, session=s)
            data, _ = wire_form(build_message(post.settings, row, mail))
            made.append((row.kind, sender.signer.sign(data)))
    inbox = post.smtp.inbox if post.smtp is not None else None
    assert isinstance(inbox, RawInbox)
    sent = [(str(message_from_bytes(raw)["X-Titan-Post-Kind"]), raw) for _, raw in inbox.raw]
    assert sent, "the sender sent nothing"
    return made + sent


ASKS_NOTHING = (*NOTICE_KINDS, STARTED, GAME_OVER, DIGEST)
"""Mails that are notices: Auto-Submitted (RFC 3834) says no one should answer them
automatically (every mail of the server carries it)."""


def check_headers(messages: list[tuple[str, bytes]]) -> None:
    """The headers big providers ask for, on every message: Date, a Message-ID on the sender's
    domain, Auto-Submitted on notices, one-click List-Unsubscribe where the mail can be stopped;
    CRLF lines only, none beyond RFC 5322's 998 characters; in both languages."""
    languages = set()
    for kind, raw in messages:
        assert re.search(rb"(?<!\r)\n", raw) is None, f"{kind}: a bare LF"
        assert max(len(line) for line in raw.split(b"\r\n")) <= 998, f"{kind}: a long line"
        msg = message_from_bytes(raw, policy=policy.default)
        languages.add(str(msg["Content-Language"]))
        assert msg["Date"] is not None
        assert str(msg["Message-ID"]).endswith(f"@{DOMAIN}>"), msg["Message-ID"]
        assert parseaddr(str(msg["From"]))[1].endswith(f"@{DOMAIN}")
        if kind in ASKS_NOTHING:
            assert msg["Auto-Submitted"] == "auto-generated", kind
        if kind not in (INVITATION, SIGNIN, *REPLY_KINDS):  # (a seat's mail: it may stop it;
            # an invitation, a sign-in link and the answer to one's own mail are asked for)
            assert str(msg["List-Unsubscribe"]).startswith("<http"), kind
            assert msg["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click", kind
    assert languages == {"en", "pl"}


@pytest.mark.parametrize("game", sorted(GAMES))
def test_every_kind_of_mail_is_signed_well_formed_and_verifies_as_dovecot_stored_it(
        tmp_path: Path, relay: Smtp, keys: dict[str, Path], dovecot: Dovecot,
        game: str) -> None:
    post = make_post(f"sqlite:///{tmp_path / 'kinds.db'}", relay,
                     TITANPOST_MAIL_IMAGES="link", **key_env(keys))  # (no board drawn)
    try:
        _race(post, game)
        all_mail(post)
        messages = every_kind(post)
    finally:
        post.service.engine.dispose()
    kinds = {kind for kind, _ in messages}
    assert kinds == _kinds(game), sorted(kinds ^ _kinds(game))
    check_headers(messages)
    for _, raw in messages:  # stored by Dovecot as an MTA hands it over (LMTP)
        dovecot.deliver(f"post@{DOMAIN}", f"{dovecot.user}@{DOMAIN}", raw)
    stored = sorted((dovecot.maildir / "new").glob("*"))
    assert len(stored) == len(messages)
    lookup = published(keys)
    for path in stored:
        data = path.read_bytes()
        assert b"Delivered-To:" in data or b"Return-Path:" in data  # (Dovecot's own lines)
        assert verified(data, lookup) == ["rsa-sha256", "ed25519-sha256"], path.name




def test_the_sender_signs_what_it_hands_the_relay_on_both_databases(
        migrated_database_url: str, relay: Smtp, keys: dict[str, Path]) -> None:
    post = make_post(migrated_database_url, relay, **key_env(keys))
    try:
        post.new_game()
        all_mail(post)
    finally:
        post.service.engine.dispose()
    inbox = relay.inbox
    assert isinstance(inbox, RawInbox) and inbox.raw
    lookup = published(keys)
    for _, raw in inbox.raw:
        assert verified(raw, lookup) == ["rsa-sha256", "ed25519-sha256"]


def test_unsigned_without_a_key_and_a_bad_key_stops_the_sender(tmp_path: Path,
                                                              relay: Smtp) -> None:
    url = f"sqlite:///{tmp_path / 'plain.db'}"
    post = make_post(url, relay)
    post.new_game()
    all_mail(post)
    inbox = relay.inbox
    assert isinstance(inbox, RawInbox)
    assert inbox.raw and not any(b"DKIM-Signature" in raw for _, raw in inbox.raw)
    post.service.engine.dispose()
    broken = tmp_path / "broken.pem"
    broken.write_text("not a key")
    bad = make_post(url, relay, TITANPOST_DKIM_KEY_FILE=str(broken))
    with pytest.raises(DkimError, match="not a PEM private key"):
        Sender(bad.service)
    bad.service.engine.dispose()


def test_dkim_key_writes_a_key_of_its_own_and_prints_its_record(tmp_path: Path,
                                                               titanpost: str) -> None:
    env = {"TITANPOST_MAIL_FROM": f"Titan Post <post@{DOMAIN}>", "TITANPOST_ENV": "test",
           "TITANPOST_SECRET_KEY": "dkim-test-secret-key-0123456789abcdef",
           "TITANPOST_DATABASE_URL": f"sqlite:///{tmp_path / 'x.db'}", "PATH": "/usr/bin:/bin"}
    key = tmp_path / "dkim.pem"
    made = subprocess.run([titanpost, "mail", "dkim-key", str(key)], env=env,
                          capture_output=True, text=True, check=False)
    assert made.returncode == 0, made.stderr
    assert key.stat().st_mode & 0o777 == 0o600
    assert f"default._domainkey.{DOMAIN}  TXT" in made.stdout
    assert public_record(key.read_bytes()) in made.stdout
    again = subprocess.run([titanpost, "mail", "dkim-key", str(key)], env=env,
                           capture_output=True, text=True, check=False)
    assert again.returncode == 1 and "not overwritten" in again.stderr
    records = subprocess.run([titanpost, "mail", "dns", "--no-check"],
                             env=env | {"TITANPOST_DKIM_KEY_FILE": str(key)},
                             capture_output=True, text=True, check=False)
    assert records.returncode == 0, records.stderr
    lines = records.stdout.splitlines()
    assert [line.split()[0] for line in lines[:-1]] == [SPF, DKIM, DMARC]
    assert lines[-1].startswith("Replies and bounces come back to the mail domain localhost:")


def test_the_published_records_are_checked_one_by_one(keys: dict[str, Path]) -> None:
    settings = settings_for("sqlite://", "smtp://relay.example.net:587", **key_env(keys))
    records = needed_records(settings)
    assert [(r.kind, r.name) for r in records] == [
        (SPF, DOMAIN), (DKIM, f"tp2026._domainkey.{DOMAIN}"),
        (DKIM, f"ed25519._domainkey.{DOMAIN}"), (DMARC, f"_dmarc.{DOMAIN}")]
    assert "a:relay.example.net" in records[0].value
    other_key = public_record(new_private_key(RSA))
    dns = {DOMAIN: ["v=spf1 include:_spf.example.net ~all", "google-site-verification=x"],
           f"tp2026._domainkey.{DOMAIN}": [other_key],
           f"ed25519._domainkey.{DOMAIN}": [records[2].value]}
    checked = check(records, lambda name: dns.get(name, []))
    assert [(c.record.kind, c.ok, bool(c.found)) for c in checked] == [
        (SPF, True, True), (DKIM, False, True), (DKIM, True, True), (DMARC, False, False)]
    assert Record(DKIM, "x", records[1].value).matches(records[1].value)


def test_openssl_signs_the_same_bytes_as_dkimpy_and_other_keys_keep_dkimpys_way() -> None:
    """RSA PKCS#1 v1.5 is deterministic: the signature the Signer makes with OpenSSL is the one
    dkimpy's own arithmetic makes for the same message, second and key; a PEM key handed to
    dkimpy directly is still signed its own way, and both verify."""
    pem = new_private_key(RSA)
    key = DkimKey("sel", "example.org", pem, RSA)
    record = public_record(pem).encode()
    message = (b"From: Ann <ann@example.org>\r\nTo: bob@example.org\r\nSubject: Hi\r\n"
               b"Date: Sat, 05 Dec 2026 10:00:00 +0000\r\nMessage-ID: <1@example.org>\r\n\r\n"
               b"Your turn.\r\n")
    signer = Signer([key])
    for _ in range(3):  # (t= is the second of signing: both must fall in the same one)
        ours = signer.sign(message)
        theirs = dkim.sign(message, b"sel", b"example.org", pem,
                           canonicalize=(b"relaxed", b"relaxed"),
                           include_headers=list(SIGNED_HEADERS), linesep=b"\r\n") + message
        if stamp(ours) == stamp(theirs):
            break
    assert isinstance(signer.signing_keys[0], OpenSslRsaKey)
    assert ours == theirs
    for signed in (ours, theirs):
        assert dkim.verify(signed, dnsfunc=lambda name, timeout=5: record)


def stamp(signed: bytes) -> bytes:
    """The t= tag of a signed message's first DKIM-Signature."""
    found = re.search(rb"\bt=(\d+)", signed)
    assert found is not None
    return found.group(1)


def test_a_mail_domain_of_its_own_needs_its_own_spf_record(keys: dict[str, Path]) -> None:
    """The envelope sender (each mail's bounce address) is on the mail domain: receivers check
    SPF there, so a mail domain other than the From domain gets its own record."""
    settings = settings_for("sqlite://", "smtp://relay.example.net:587",
                            TITANPOST_MAIL_DOMAIN="mail." + DOMAIN, **key_env(keys))
    spf = [(r.name, r.value) for r in needed_records(settings) if r.kind == SPF]
    assert [name for name, _ in spf] == [DOMAIN, "mail." + DOMAIN]
    assert all("a:relay.example.net" in value for _, value in spf)
