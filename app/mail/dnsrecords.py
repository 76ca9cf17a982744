"""The DNS records a From domain needs for its mail to be delivered, and a check of those
published (``titanpost mail dns``).

- SPF (RFC 7208): the domain names who may send its mail: the relays
  (``TITANPOST_SMTP_URL``'s hosts, the fallback's too), and the domain's own MX and A hosts.
  Receivers check SPF against the envelope sender, whose domain is the mail domain
  (``TITANPOST_MAIL_DOMAIN``: each mail's bounce address, :mod:`app.features.delivery.verp`);
  where that differs from the From domain it needs a record of its own (and, for DMARC's
  relaxed alignment, the same organisational domain as the From address).
- DKIM (RFC 6376): the public half of each signing key (app/mail/signing.py), at
  ``<selector>._domainkey.<domain>``.
- DMARC (RFC 7489): at ``_dmarc.<domain>``, what receivers do with mail that fails both, and
  where they send their reports; start with ``p=none``, then ``quarantine`` once the reports
  show every mail passing.

The check asks DNS (dnspython) for each record's TXT answers and says, record by record, whether
the published one is there and matches; a machine that cannot reach DNS is told so, not failed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from app.core.config import Settings
from app.mail.relay import parse_smtp_url
from app.mail.signing import public_record, signing_domain

SPF: Final = "SPF"
DKIM: Final = "DKIM"
DMARC: Final = "DMARC"

Lookup = Callable[[str], list[str]]
"""TXT answers of a name (each record's strings joined); raises LookupError when DNS cannot be
asked at all."""


@dataclass(frozen=True)
class Record:
    """One TXT record to publish."""

    kind: str
    name: str
    value: str

    def matches(self, published: str) -> bool:
        """Whether a published TXT answer is this record (DKIM: the same key; SPF and DMARC:
        a record of the kind, whatever its policy, which is the domain's own choice)."""
        if self.kind == DKIM:
            return _tag(published, "p") == _tag(self.value, "p") != ""
        prefix = "v=spf1" if self.kind == SPF else "v=DMARC1"
        return published.replace(" ", "").lower().startswith(prefix.lower())


def _tag(record: str, name: str) -> str:
    for part in record.replace(" ", "").split(";"):
        key, _, value = part.partition("=")
        if key.strip() == name:
            return value
    return ""


def needed_records(settings: Settings) -> list[Record]:
    """The records the settings' From domain needs (DKIM: one per key set)."""
    domain = signing_domain(settings)
    senders = ["mx", "a"]
    for url in (settings.smtp_url, settings.smtp_fallback_url):
        host = parse_smtp_url(url).host if url else None
        if host and host not in ("localhost", "127.0.0.1", "::1") and f"a:{host}" not in senders:
            senders.append(f"a:{host}")
    spf = f"v=spf1 {' '.join(senders)} ~all"
    records = [Record(SPF, domain, spf)]
    envelope_domain = settings.mail_domain.lower()
    if envelope_domain != domain and "." in envelope_domain:  # (not a bare "localhost")
        records.append(Record(SPF, envelope_domain, spf))
    for path, selector in ((settings.dkim_key_file, settings.dkim_selector),
                           (settings.dkim_ed25519_key_file, settings.dkim_ed25519_selector)):
        if path:
            records.append(Record(DKIM, f"{selector}._domainkey.{domain}",
                                  public_record(Path(path).read_bytes())))
    records.append(Record(DMARC, f"_dmarc.{domain}",
                          f"v=DMARC1; p=none; rua=mailto:postmaster@{domain}; adkim=r; aspf=r"))
    return records


@dataclass(frozen=True)
class Checked:
    record: Record
    found: list[str]
    ok: bool


def check(records: list[Record], lookup: Lookup) -> list[Checked]:
    """Each record with the TXT answers published at its name and whether one matches."""
    checked = []
    for record in records:
        found = lookup(record.name)
        checked.append(Checked(record, found, any(record.matches(f) for f in found)))
    return checked


def dns_lookup(timeout: float = 4.0) -> Lookup:
    """TXT lookups through the machine's resolver (dnspython)."""
    import dns.exception
    import dns.resolver

    resolver = dns.resolver.Resolver()
    resolver.lifetime = timeout

    def lookup(name: str) -> list[str]:
        try:
            answer = resolver.resolve(name, "TXT")
        except (dns.resolver.NXDOMAIN, dns.resolver.NoAnswer):
            return []
        except (dns.resolver.NoNameservers, dns.exception.Timeout) as exc:
            raise LookupError(f"DNS cannot be asked ({type(exc).__name__})") from None
        return [b"".join(rdata.strings).decode("utf-8", "replace") for rdata in answer]

    return lookup
