"""DKIM: every outgoing mail signed with the From domain's key (RFC 6376, dkimpy).

Big mailbox providers (Gmail, Yahoo since February 2024, Outlook.com since May 2025) want a
sender's mail signed by a key published under its own domain and aligned with its From address
(DMARC). The key is a PEM file (``TITANPOST_DKIM_KEY_FILE``) published as
``<selector>._domainkey.<domain>`` (``TITANPOST_DKIM_SELECTOR``, ``default`` unless set; the domain
is the From address's unless ``TITANPOST_DKIM_DOMAIN`` says otherwise). ``titanpost mail dkim-key``
makes one (RSA 2048, or Ed25519 beside it), ``titanpost mail dns`` prints the records to publish.
A second key (``TITANPOST_DKIM_ED25519_KEY_FILE``, its selector ``TITANPOST_DKIM_ED25519_SELECTOR``)
adds an Ed25519 signature beside the RSA one (RFC 8463): receivers that know it check it, the
others the RSA one.

The :class:`Signer` reads its keys once (the sender makes one when it starts) and signs the bytes
that go on the wire: relaxed/relaxed canonicalisation (a relay that rewraps a header or trims a
line's spaces does not break it), over the headers a reader sees and the threading ones.

The RSA operation is OpenSSL's (``cryptography``), not dkimpy's: dkimpy computes it with
Python's big integers, about 9 ms a signature on a small server (three quarters of the
sender's time per mail), where OpenSSL takes 0.3 ms. dkimpy has no parameter for it, so
:func:`_route_rsa_to_openssl` wraps the two functions its ``DKIM.sign`` calls for RSA (reading the
key, signing the digest): given a :class:`OpenSslRsaKey` they use it, given anything else they
do what dkimpy does. PKCS#1 v1.5 signatures are deterministic, so both give the same bytes (a
test compares them); dkimpy still canonicalises, hashes and writes the header.
"""

from __future__ import annotations

import base64
import hashlib
import threading
from dataclasses import dataclass
from email.generator import BytesGenerator
from email.message import EmailMessage
from email.policy import EmailPolicy
from email.utils import getaddresses
from io import BytesIO
from pathlib import Path
from typing import Any, Final

import dkim
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ed25519, padding, rsa, utils

from app.core.config import Settings
from app.mail.message import envelope_sender

SIGNED_HEADERS: Final = (b"From", b"To", b"Subject", b"Date", b"Message-ID", b"In-Reply-To",
                         b"References", b"Reply-To", b"List-Unsubscribe",
                         b"List-Unsubscribe-Post", b"Auto-Submitted", b"MIME-Version",
                         b"Content-Type", b"Content-Language")
"""The headers a signature covers (those a message has; RFC 6376 5.4: From always)."""
RSA: Final = "rsa"
ED25519: Final = "ed25519"


class DkimError(ValueError):
    """A DKIM key that cannot be used: the setting names what to fix."""


@dataclass(frozen=True)
class DkimKey:
    """One signing key: where it is published and what it is."""

    selector: str
    domain: str
    private_pem: bytes
    algorithm: str = RSA

    @property
    def record_name(self) -> str:
        return f"{self.selector}._domainkey.{self.domain}"


def load_key(path: Path, selector: str, domain: str) -> DkimKey:
    """The key in the PEM file ``path`` (RSA of at least 1024 bits, or Ed25519), or DkimError."""
    try:
        pem = path.read_bytes()
    except OSError as exc:
        raise DkimError(f"cannot read the DKIM key {path}: {exc.strerror or exc}") from None
    try:
        key = serialization.load_pem_private_key(pem, password=None)
    except (ValueError, TypeError) as exc:
        raise DkimError(f"{path} is not a PEM private key without a password ({exc})") from None
    if isinstance(key, rsa.RSAPrivateKey):
        if key.key_size < 1024:
            raise DkimError(f"{path}: an RSA key of {key.key_size} bits is too short (2048)")
        return DkimKey(selector, domain, pem, RSA)
    if isinstance(key, ed25519.Ed25519PrivateKey):
        raw = key.private_bytes(serialization.Encoding.Raw, serialization.PrivateFormat.Raw,
                                serialization.NoEncryption())
        # (dkimpy signs Ed25519 with the raw 32-byte seed, base64-encoded)
        return DkimKey(selector, domain, base64.b64encode(raw), ED25519)
    raise DkimError(f"{path}: DKIM keys are RSA or Ed25519")


def public_record(private_pem: bytes) -> str:
    """The TXT record that publishes the public half of a PEM private key."""
    key = serialization.load_pem_private_key(private_pem, password=None)
    if isinstance(key, ed25519.Ed25519PrivateKey):
        raw = key.public_key().public_bytes(serialization.Encoding.Raw,
                                            serialization.PublicFormat.Raw)
        return f"v=DKIM1; k=ed25519; p={base64.b64encode(raw).decode()}"
    if isinstance(key, rsa.RSAPrivateKey):
        der = key.public_key().public_bytes(serialization.Encoding.DER,
                                            serialization.PublicFormat.SubjectPublicKeyInfo)
        return f"v=DKIM1; k=rsa; p={base64.b64encode(der).decode()}"
    raise DkimError("DKIM keys are RSA or Ed25519")


def new_private_key(algorithm: str = RSA) -> bytes:
    """A new private key as PEM: RSA of 2048 bits, or Ed25519."""
    key: rsa.RSAPrivateKey | ed25519.Ed25519PrivateKey
    if algorithm == ED25519:
        key = ed25519.Ed25519PrivateKey.generate()
    else:
        key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())


def wire_form(message: EmailMessage) -> tuple[bytes, list[str]]:
    """The message as it goes on the wire (CRLF lines) and the MAIL FROM options it needs, as
    smtplib's ``send_message`` would write them: an address beyond ASCII needs SMTPUTF8."""
    addresses = [address for _, address in getaddresses(
        [str(message[name]) for name in ("From", "To") if message[name] is not None])]
    international = any(not address.isascii() for address in addresses)
    policy = message.policy
    if international and isinstance(policy, EmailPolicy):
        policy = policy.clone(utf8=True)
    out = BytesIO()
    BytesGenerator(out, policy=policy).flatten(message, linesep="\r\n")
    return out.getvalue(), (["SMTPUTF8", "BODY=8BITMIME"] if international else [])


class OpenSslRsaKey:
    """An RSA private key that signs a SHA-256 digest with OpenSSL (see the module
    documentation), in the place of the key dkimpy would parse from PEM."""

    def __init__(self, private_pem: bytes) -> None:
        key = serialization.load_pem_private_key(private_pem, password=None)
        if not isinstance(key, rsa.RSAPrivateKey):
            raise DkimError("not an RSA key")
        self.key = key

    def sign_digest(self, digest: bytes) -> bytes:
        return self.key.sign(digest, padding.PKCS1v15(), utils.Prehashed(hashes.SHA256()))


_routing = threading.Lock()


def _route_rsa_to_openssl() -> None:
    """Make dkimpy's RSA signing use an :class:`OpenSslRsaKey` when it is handed one (once per
    process; any other key goes the way dkimpy goes)."""
    with _routing:
        if getattr(dkim, "_titanpost_openssl", False):
            return
        parse = dkim.parse_pem_private_key
        sign = dkim.RSASSA_PKCS1_v1_5_sign

        def parse_key(data: Any) -> Any:
            return data if isinstance(data, OpenSslRsaKey) else parse(data)

        def sign_hash(hashed: Any, key: Any) -> Any:
            if isinstance(key, OpenSslRsaKey):
                if hashed.name != hashlib.sha256().name:
                    raise DkimError("OpenSSL signing is for rsa-sha256 only")
                return key.sign_digest(hashed.digest())
            return sign(hashed, key)

        dkim.parse_pem_private_key = parse_key
        dkim.RSASSA_PKCS1_v1_5_sign = sign_hash
        dkim._titanpost_openssl = True


class Signer:
    """Signs messages with the keys read once (see the module documentation)."""

    def __init__(self, keys: list[DkimKey]) -> None:
        self.keys = keys
        self.signing_keys: list[Any] = []
        for key in keys:
            if key.algorithm == RSA:
                _route_rsa_to_openssl()
                self.signing_keys.append(OpenSslRsaKey(key.private_pem))
            else:
                self.signing_keys.append(key.private_pem)

    def sign(self, data: bytes) -> bytes:
        """``data`` (a whole message, CRLF lines) with a DKIM-Signature for each key on top."""
        signatures = b""
        parsed = dkim.DKIM(data, linesep=b"\r\n")  # (parsed once for every key)
        for key, private in zip(self.keys, self.signing_keys, strict=True):
            algorithm = b"ed25519-sha256" if key.algorithm == ED25519 else b"rsa-sha256"
            signatures += parsed.sign(key.selector.encode(), key.domain.encode(), private,
                                      signature_algorithm=algorithm,
                                      canonicalize=(b"relaxed", b"relaxed"),
                                      include_headers=list(SIGNED_HEADERS))
        return signatures + data


def signing_domain(settings: Settings) -> str:
    """The d= domain: ``TITANPOST_DKIM_DOMAIN``, else the From address's domain."""
    return settings.dkim_domain or envelope_sender(settings).rsplit("@", 1)[-1].lower()


def signer_for(settings: Settings) -> Signer | None:
    """The signer of the settings' keys, None when no key is set (mail goes unsigned)."""
    domain = signing_domain(settings)
    keys = [load_key(Path(path), selector, domain) for path, selector in (
        (settings.dkim_key_file, settings.dkim_selector),
        (settings.dkim_ed25519_key_file, settings.dkim_ed25519_selector)) if path]
    return Signer(keys) if keys else None
