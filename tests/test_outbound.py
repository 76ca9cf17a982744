"""Requests to the outside go only where they should (app/core/outbound.py, issue 36).

The address policy over a table of addresses (every IPv4-carrying IPv6 form, the ranges that are
not global unicast, and good public ones); the connection itself checking the address it
connects to (real HTTP and HTTPS servers on loopback, a name answered by a resolver the tests put
in place of the system's: :data:`app.core.outbound.getaddrinfo`); no redirect followed by a webhook
post or a push, to loopback or to a private address (a real server that redirects); and the
webhook registration's order: the creator token before anything is resolved, one answer for a
wrong token whatever the address, counted by the login rate limit. The deliveries and the
registrations run on SQLite and PostgreSQL.
"""

from __future__ import annotations

import ipaddress
import socket
import ssl
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import requests
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from app.core import outbound
from app.core.outbound import NotPublic, check_host, is_public, outbound_session
from app.features.push.notifications import PushSender
from app.features.webhooks.hooks import WebhookRefused, WebhookSender, check_url
from tests.apifixtures import Api, dispose, make_api
from tests.netutil import serve_in_thread
from tests.test_push import PushService, device, ready, subscribe
from tests.test_push import outbox as push_outbox
from tests.test_webhooks import Hooks, add_hook, prepared
from tests.test_webhooks import outbox as webhook_outbox

pytest_plugins = ["tests.apifixtures"]

# ------------------------------------------------------------------ the policy, address by address

NOT_PUBLIC = [
    # IPv4: loopback, private, link-local (cloud metadata), this network, shared (CGNAT)
    "127.0.0.1", "127.255.0.9", "10.0.0.1", "172.16.5.4", "172.31.255.255", "192.168.1.1",
    "169.254.169.254", "0.0.0.0", "0.1.2.3", "100.64.0.1", "100.127.255.254",
    # IETF protocol assignments, documentation, 6to4 relay anycast, benchmarking
    "192.0.0.8", "192.0.0.170", "192.0.2.1", "198.51.100.7", "203.0.113.9", "192.88.99.1",
    "198.18.0.1", "198.19.255.255",
    # multicast, reserved, broadcast
    "224.0.0.1", "239.255.255.250", "240.0.0.1", "255.255.255.255",
    # IPv6: loopback, unspecified, link-local, site-local, unique local, multicast
    "::1", "::", "fe80::1", "fec0::1", "fc00::1", "fd12:3456:789a::1", "ff02::1", "ff0e::1",
    # documentation, discard-only, IETF protocol assignments, benchmarking, ORCHID
    "2001:db8::1", "3fff::1", "100::1", "2001:2::1", "2001:10::1",
    # IPv4-mapped
    "::ffff:127.0.0.1", "::ffff:10.0.0.1", "::ffff:169.254.169.254", "::ffff:224.0.0.1",
    # IPv4-compatible (deprecated: ::a.b.c.d)
    "::127.0.0.1", "::10.0.0.1", "::169.254.169.254", "::0.0.0.1",
    # IPv4-translated (SIIT), outside global unicast
    "::ffff:0:10.0.0.1", "::ffff:0:8.8.8.8",
    # NAT64, well-known prefix: 10.0.0.1, 169.254.169.254, 127.0.0.1, 224.0.0.1, 100.64.0.1
    "64:ff9b::a00:1", "64:ff9b::a9fe:a9fe", "64:ff9b::7f00:1", "64:ff9b::e000:1",
    "64:ff9b::6440:1",
    # ... beside the /96, and the local-use prefix: a private IPv4, or any other layout
    "64:ff9b:0:1::808:808", "64:ff9b:1::a00:1", "64:ff9b:1::a9fe:a9fe",
    "64:ff9b:1:a00:1::", "64:ff9b:1:ab00:100::808:808",
    # 6to4 carrying 127.0.0.1, 10.0.0.1, 169.254.169.254, 192.168.0.1
    "2002:7f00:1::1", "2002:a00:1::1", "2002:a9fe:a9fe::", "2002:c0a8:1:1::1",
    # Teredo: server 65.54.227.120 with client 192.0.2.45 / 10.0.0.1; server 10.0.0.1
    "2001:0:4136:e378:8000:63bf:3fff:fdd2", "2001:0:4136:e378:8000:63bf:f5ff:fffe",
    "2001:0:a00:1:8000:63bf:f7f7:f7f7",
]

PUBLIC = [
    "8.8.8.8", "1.1.1.1", "93.184.216.34", "151.101.1.69", "100.128.0.1", "223.255.255.254",
    "2606:4700:4700::1111", "2a00:1450:4001:80b::200e", "2001:4860:4860::8888",
    "::ffff:8.8.8.8",             # IPv4-mapped public
    "::8.8.8.8",                  # IPv4-compatible, judged on its IPv4
    "64:ff9b::808:808",           # NAT64 to 8.8.8.8
    "64:ff9b:1::808:808",         # local-use NAT64, /96 layout, to 8.8.8.8
    "2002:808:808::1",            # 6to4 through 8.8.8.8
    "2001:0:4136:e378:8000:63bf:f7f7:f7f7",  # Teredo, server 65.54.227.120, client 8.8.8.8
]


@pytest.mark.parametrize("text", NOT_PUBLIC)
def test_these_addresses_are_refused(text: str) -> None:
    assert not is_public(ipaddress.ip_address(text))


@pytest.mark.parametrize("text", PUBLIC)
def test_these_addresses_are_public(text: str) -> None:
    assert is_public(ipaddress.ip_address(text))


@pytest.mark.parametrize("host", ["2130706433", "0x7f000001", "127.1", "0177.0.0.1",
                                  "::ffff:7f00:1", "::7f00:1"])
def test_a_host_is_judged_on_the_address_it_reaches_not_on_its_spelling(host: str) -> None:
    """Numeric spellings of loopback, read by the system's resolver (no lookup leaves the
    machine): the answer is what is judged."""
    with pytest.raises(NotPublic) as refused:
        check_host(host, 80, allow_private=False)
    assert refused.value.address is not None
    assert refused.value.address in (ipaddress.ip_address("127.0.0.1"),
                                     ipaddress.ip_address("::ffff:127.0.0.1"),
                                     ipaddress.ip_address("::127.0.0.1"))


# ------------------------------------------------------------------ a resolver of the tests' own


def answer(address: str, port: int) -> tuple[Any, ...]:
    """One ``getaddrinfo`` entry for a TCP connection to ``address``."""
    if ipaddress.ip_address(address).version == 6:
        return (socket.AF_INET6, socket.SOCK_STREAM, socket.IPPROTO_TCP, "", (address, port, 0, 0))
    return (socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP, "", (address, port))


@dataclass
class Resolver:
    """Stands in for the system resolver: each name in ``names`` answers its lists of
    addresses in turn (the last again and again), a name it does not know has no address, and
    an address answers itself. Every lookup is written down in ``lookups``."""

    names: dict[str, list[list[str]]] = field(default_factory=dict)
    lookups: list[str] = field(default_factory=list)

    def __call__(self, host: str, port: Any, *args: Any, **kwargs: Any) -> list[tuple[Any, ...]]:
        self.lookups.append(host)
        try:
            return [answer(str(ipaddress.ip_address(host)), int(port))]
        except ValueError:
            pass
        turns = self.names.get(host)
        if not turns:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        addresses = turns.pop(0) if len(turns) > 1 else turns[0]
        return [answer(address, int(port)) for address in addresses]


@pytest.fixture
def resolver(monkeypatch: pytest.MonkeyPatch) -> Resolver:
    made = Resolver()
    monkeypatch.setattr(outbound, "getaddrinfo", made)
    return made


def test_a_name_is_refused_for_any_answer_that_is_not_public(resolver: Resolver) -> None:
    resolver.names = {"mixed.example": [["93.184.216.34", "10.0.0.1"]],
                      "nat64.example": [["64:ff9b::a9fe:a9fe"]],
                      "good.example": [["93.184.216.34", "2606:4700:4700::1111"]]}
    for name in ("mixed.example", "nat64.example"):
        with pytest.raises(NotPublic) as refused:
            check_host(name, 443, allow_private=False)
        assert refused.value.address is not None and not is_public(refused.value.address)
    check_host("good.example", 443, allow_private=False)
    check_host("mixed.example", 443, allow_private=True)


def test_a_name_without_address_is_refused_as_a_private_one_is(resolver: Resolver) -> None:
    """One answer for both: the server's resolver is no oracle for which internal names
    exist."""
    resolver.names = {"intranet.example": [["10.1.2.3"]]}
    said = []
    for name in ("intranet.example", "nowhere.invalid"):
        with pytest.raises(WebhookRefused) as refused:
            check_url(f"https://{name}/hook", allow_private=False)
        said.append(str(refused.value).replace(name, "<host>"))
    assert said[0] == said[1] == ("the webhook host <host> has no public address: webhooks "
                                  "post only to public addresses")


# ------------------------------------------------------------------ the connection's own check


@dataclass
class Receiver:
    """A real HTTP server on loopback: keeps each request's path and Host header, answers
    ``status`` (with ``location`` as its Location, if any)."""

    url: str = ""
    port: int = 0
    received: list[tuple[str, str]] = field(default_factory=list)
    status: int = 204
    location: str | None = None


def start_receiver(context: ssl.SSLContext | None = None) -> tuple[Receiver, ThreadingHTTPServer]:
    state = Receiver()

    class Handler(BaseHTTPRequestHandler):
        def answer(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            self.rfile.read(length)
            state.received.append((self.path, self.headers.get("Host", "")))
            self.send_response(state.status)
            if state.location is not None:
                self.send_header("Location", state.location)
            self.send_header("Content-Length", "0")
            self.end_headers()

        do_POST = do_GET = answer

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    if context is not None:
        server.socket = context.wrap_socket(server.socket, server_side=True)
    serve_in_thread(server)
    state.port = server.server_address[1]
    state.url = f"{'https' if context else 'http'}://127.0.0.1:{state.port}"
    return state, server


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    state, server = start_receiver()
    yield state
    server.shutdown()
    server.server_close()


@pytest.fixture
def landing() -> Iterator[Receiver]:
    """A second server, where a redirect would land if it were followed."""
    state, server = start_receiver()
    yield state
    server.shutdown()
    server.server_close()


def test_a_private_address_is_refused_by_the_connection_before_a_byte_is_sent(
        receiver: Receiver) -> None:
    session = outbound_session(allow_private=False)
    for url in (receiver.url, f"http://[::ffff:127.0.0.1]:{receiver.port}"):
        with pytest.raises(NotPublic):
            session.post(f"{url}/hook", data=b"{}", timeout=5)
    assert receiver.received == []
    allowed = outbound_session(allow_private=True).post(f"{receiver.url}/hook", data=b"{}",
                                                         timeout=5)
    assert allowed.status_code == 204
    assert receiver.received == [("/hook", f"127.0.0.1:{receiver.port}")]


def test_the_connection_goes_to_the_address_it_checked_however_the_name_answers_later(
        receiver: Receiver, resolver: Resolver) -> None:
    """DNS rebinding: the name answers a public address to the check made when the address
    is given, then loopback. The connection looks the name up itself, once, and refuses."""
    name = "rebind.example"
    resolver.names = {name: [["93.184.216.34"], ["127.0.0.1"]]}
    check_host(name, receiver.port, allow_private=False)  # (the first answer: public)
    with pytest.raises(NotPublic) as refused:
        outbound_session(allow_private=False).post(f"http://{name}:{receiver.port}/hook",
                                                   data=b"{}", timeout=5)
    assert str(refused.value.address) == "127.0.0.1"
    assert receiver.received == [] and resolver.lookups == [name, name]
    # allowed, the post goes to the address of the connection's one lookup, named as asked
    resolver.lookups.clear()
    sent = outbound_session(allow_private=True).post(f"http://{name}:{receiver.port}/hook",
                                                     data=b"{}", timeout=5)
    assert sent.status_code == 204 and resolver.lookups == [name]
    assert receiver.received == [("/hook", f"{name}:{receiver.port}")]


def certificate_for(name: str, folder: Path) -> tuple[Path, Path]:
    """A self-signed certificate for ``name`` and its key, as PEM files in ``folder``."""
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    now = datetime.now(UTC)
    cert = (x509.CertificateBuilder().subject_name(subject).issuer_name(subject)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - timedelta(minutes=5)).not_valid_after(now + timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([x509.DNSName(name)]), critical=False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(key, hashes.SHA256()))
    cert_path, key_path = folder / "cert.pem", folder / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                           serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return cert_path, key_path


def test_https_still_checks_the_certificate_against_the_name(
        tmp_path: Path, resolver: Resolver) -> None:
    """The connection is made to the checked address, and TLS verifies the name asked for."""
    cert, key = certificate_for("hooks.example", tmp_path)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    state, server = start_receiver(context)
    try:
        resolver.names = {"hooks.example": [["127.0.0.1"]], "other.example": [["127.0.0.1"]]}
        session = outbound_session(allow_private=True)
        sent = session.post(f"https://hooks.example:{state.port}/hook", data=b"{}", timeout=5,
                            verify=str(cert))
        assert sent.status_code == 204
        with pytest.raises(requests.exceptions.SSLError):
            session.post(f"https://other.example:{state.port}/hook", data=b"{}", timeout=5,
                         verify=str(cert))
        assert state.received == [("/hook", f"hooks.example:{state.port}")]
    finally:
        server.shutdown()
        server.server_close()


# ------------------------------------------------------------------ deliveries: no redirect


@pytest.fixture
def api(migrated_database_url: str) -> Iterator[Api]:
    """The app, letting webhooks and pushes reach loopback (where the tests' servers are)."""
    made = make_api(migrated_database_url, TITANPOST_WEBHOOK_ALLOW_PRIVATE="1")
    yield made
    dispose(made)


@pytest.fixture
def strict(migrated_database_url: str) -> Iterator[Api]:
    """The app as in production: public addresses only."""
    made = make_api(migrated_database_url)
    yield made
    dispose(made)


REDIRECTS = [(307, "loopback"), (308, "private"), (302, "private"), (303, "loopback")]


def redirect_to(receiver: Receiver, landing: Receiver, status: int, where: str) -> str:
    """Make ``receiver`` answer every request with a redirect to ``landing`` (loopback) or to
    10.0.0.1 (private); the host it redirects to."""
    receiver.status = status
    if where == "loopback":
        receiver.location = f"{landing.url}/landed"
        return "127.0.0.1"
    receiver.location = "http://10.0.0.1/latest/meta-data"
    return "10.0.0.1"


@pytest.mark.parametrize("status, where", REDIRECTS)
def test_a_webhook_post_follows_no_redirect(api: Api, receiver: Receiver, landing: Receiver,
                                            resolver: Resolver, status: int, where: str) -> None:
    prepared(api, Hooks(url=receiver.url), "json")
    redirect_to(receiver, landing, status, where)
    resolver.lookups.clear()
    report = WebhookSender(api.service, timeout=5).run_once()
    assert report.gave_up == report.claimed == 1
    said = f"gave up: HTTP {status}: a redirect, not followed"
    assert [row[3] for row in webhook_outbox(api)] == [said]
    assert [path for path, _ in receiver.received] == ["/json"]
    assert landing.received == [] and resolver.lookups == ["127.0.0.1"]  # (no second host)


@pytest.mark.parametrize("status, where", REDIRECTS)
def test_a_push_follows_no_redirect(api: Api, receiver: Receiver, landing: Receiver,
                                    resolver: Resolver, status: int, where: str) -> None:
    ready(api, PushService(url=receiver.url))
    redirect_to(receiver, landing, status, where)
    resolver.lookups.clear()
    report = PushSender(api.service, timeout=5).run_once()
    assert report.claimed >= 1 and report.gave_up == report.claimed
    said = f"gave up: HTTP {status}: a redirect, not followed"
    assert {row[4] for row in push_outbox(api)} == {said}
    assert len(receiver.received) == report.claimed
    assert landing.received == [] and set(resolver.lookups) == {"127.0.0.1"}
    assert api.scalar("SELECT count(*) FROM push_subscriptions") == 3  # (kept: a row given up)


def test_a_webhook_whose_name_turns_private_is_not_posted(
        strict: Api, receiver: Receiver, resolver: Resolver) -> None:
    """Public when added, loopback when posted to: the post is refused by its connection."""
    name = "rebind.example"
    resolver.names = {name: [["93.184.216.34"], ["127.0.0.1"]]}
    table = strict.accept_all(strict.create(3))
    add_hook(strict, table, f"http://{name}:{receiver.port}/hook", "json")
    strict.start(table)
    report = WebhookSender(strict.service, timeout=5).run_once()
    assert report.gave_up == report.claimed == 1 and receiver.received == []
    assert [row[3] for row in webhook_outbox(strict)] == [
        f"gave up: the host {name} is not a public address"]


def test_a_push_service_whose_name_turns_private_is_not_posted(
        strict: Api, receiver: Receiver, resolver: Resolver) -> None:
    name = "push.example"
    resolver.names = {name: [["151.101.1.69"]] * 3 + [["127.0.0.1"]]}  # (three subscriptions)
    service = PushService(url=f"http://{name}:{receiver.port}")
    ready(strict, service)
    report = PushSender(strict.service, timeout=5).run_once()
    assert report.claimed >= 1 and report.gave_up == report.claimed and receiver.received == []
    said = f"gave up: the host {name} is not a public address"
    assert {row[4] for row in push_outbox(strict)} == {said}


def test_a_push_subscription_to_a_private_service_is_refused(
        strict: Api, resolver: Resolver) -> None:
    table = strict.accept_all(strict.create(3))
    for endpoint in ("http://[::127.0.0.1]:8080", "http://[64:ff9b::a9fe:a9fe]",
                     "https://224.0.0.1"):
        refused = subscribe(strict, table, 0, device(PushService(url=endpoint), "x"), expect=400)
        assert refused["message"] == "the push service's address is not allowed"
    assert strict.scalar("SELECT count(*) FROM push_subscriptions") == 0


# ------------------------------------------------------------------ registering a webhook


ISSUE_URLS = ["http://[::127.0.0.1]/x", "http://[64:ff9b::a00:1]/x",
              "http://[64:ff9b::a9fe:a9fe]/latest", "http://224.0.0.1/x",
              "http://[::ffff:10.0.0.1]/x", "http://100.64.0.1/x", "http://[2002:a9fe:a9fe::]/x",
              "http://[fe80::1]/x", "http://[ff02::1]/x"]
"""The addresses of issue 36 and their neighbours: each refused for the creator."""

ANY_URLS = [*ISSUE_URLS, "https://public.example/hook", "https://intranet.example/hook",
            "https://nowhere.invalid/hook", "ftp://public.example/x", "http://public.example:99999/",
            "https://127.0.0.1:9/x"]
"""Whatever a guesser might send."""


def names(resolver: Resolver) -> None:
    resolver.names = {"public.example": [["93.184.216.34"]],
                      "intranet.example": [["10.1.2.3"]]}


def test_a_wrong_creator_token_gets_one_answer_whatever_the_address_and_no_lookup(
        strict: Api, resolver: Resolver) -> None:
    names(resolver)
    table = strict.create(3)
    answers = set()
    for url in ANY_URLS:
        for fmt in ("json", "ntfy"):
            response = strict.client.post(f"/api/games/{table.uid}/webhooks",
                                          json={"url": url, "format": fmt},
                                          headers={"X-Creator-Token": "guessed"})
            answers.add((response.status_code, response.get_data(as_text=True)))
    assert len(answers) == 1 and next(iter(answers))[0] == 403
    unknown = strict.client.post("/api/games/no-such-game/webhooks", headers=table.creator,
                                 json={"url": "https://public.example/hook", "format": "json"})
    assert unknown.status_code == 404
    assert resolver.lookups == []
    assert strict.rows("SELECT * FROM webhooks") == []


def test_wrong_creator_tokens_on_webhooks_are_rate_limited(
        migrated_database_url: str, resolver: Resolver) -> None:
    names(resolver)
    api = make_api(migrated_database_url, TITANPOST_RATE_LIMIT_LOGIN="3/minute")
    try:
        table = api.create(3)
        guesser = {"environ_base": {"REMOTE_ADDR": "198.51.100.7"}}

        def post(url: str, token: str) -> int:
            response = api.client.post(f"/api/games/{table.uid}/webhooks", **guesser,
                                       json={"url": url, "format": "json"},
                                       headers={"X-Creator-Token": token})
            return response.status_code

        assert [post(url, "guessed") for url in ANY_URLS[:3]] == [403, 403, 403]
        assert [post(url, "guessed") for url in ANY_URLS[3:]] == [429] * len(ANY_URLS[3:])
        assert post("https://public.example/hook", table.creator_token) == 429
        assert resolver.lookups == []
        assert api.rows("SELECT * FROM webhooks") == []
    finally:
        dispose(api)


@pytest.mark.parametrize("url", [*ISSUE_URLS, "https://intranet.example/hook",
                                 "https://nowhere.invalid/hook"])
def test_the_creator_is_told_the_host_has_no_public_address(
        strict: Api, resolver: Resolver, url: str) -> None:
    names(resolver)
    table = strict.create(3)
    host = urlsplit(url).hostname
    for language, words in (("en", "the webhook host {} has no public address: webhooks post "
                                   "only to public addresses"),
                            ("pl", "host webhooka {} nie ma adresu publicznego: webhooki "
                                   "wysyłają tylko na adresy publiczne")):
        response = strict.client.post(f"/api/games/{table.uid}/webhooks",
                                      json={"url": url, "format": "json"},
                                      headers={**table.creator, "Accept-Language": language})
        assert response.status_code == 400
        assert response.get_json()["message"] == words.format(host)
    assert strict.rows("SELECT * FROM webhooks") == []


def test_the_creator_adds_a_public_address(strict: Api, resolver: Resolver) -> None:
    names(resolver)
    table = strict.create(3)
    add_hook(strict, table, "https://public.example/hook", "json")
    assert resolver.lookups == ["public.example"]
    assert [row[0] for row in strict.rows("SELECT url FROM webhooks")] == [
        "https://public.example/hook"]
