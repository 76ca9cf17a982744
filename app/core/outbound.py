"""Where the server connects on a user's behalf: public addresses only, checked on the
connection itself.

A game's creator names its webhooks' addresses and a browser names its push service's: the server
then posts to whatever they named, from inside its own network. This module is the one policy for
every such request (:mod:`app.features.webhooks.hooks`, :mod:`app.features.push.notifications`):

- **Which addresses** (:func:`is_public`): globally routable unicast only. An IPv6 address that
  carries an IPv4 one (IPv4-mapped ``::ffff:a.b.c.d``, IPv4-compatible ``::a.b.c.d``, NAT64
  ``64:ff9b::/96`` and ``64:ff9b:1::/96``, 6to4 ``2002::/16``, Teredo ``2001::/32``) is judged
  on the IPv4 address it reaches, since that is where the packets end up: ``::127.0.0.1`` and
  ``64:ff9b::a9fe:a9fe`` are loopback and 169.254.169.254.
- **The address connected to** (:func:`outbound_session`): its connections resolve the name
  themselves, refuse it if any answer is not public, and connect only to those checked answers.
  A name that answers a public address to an earlier check and a private one a moment later (DNS
  rebinding) gains nothing: what is checked is what is connected to.
- **No redirects**: the session follows none, whatever its caller asks (see
  :func:`outbound_session` for why), and it reads no proxy from the environment (a proxy would
  connect on our behalf where no check of ours runs).

A request refused by the policy raises :class:`NotPublic` (not a ``requests`` error: it is a
verdict, not a failure worth retrying). ``allow_private`` (``TITANPOST_WEBHOOK_ALLOW_PRIVATE``)
lets every address through: a receiver on the same host, the tests.
"""

from __future__ import annotations

import ipaddress
import socket
from dataclasses import dataclass
from functools import cache
from typing import Any, ClassVar

import requests
from requests.adapters import HTTPAdapter
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool
from urllib3.exceptions import ConnectTimeoutError, NameResolutionError, NewConnectionError
from urllib3.util.connection import allowed_gai_family

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

_V4 = ipaddress.IPv4Network
_V6 = ipaddress.IPv6Network

REFUSED_IPV4: tuple[tuple[ipaddress.IPv4Network, str], ...] = (
    (_V4("0.0.0.0/8"), "this network"),
    (_V4("10.0.0.0/8"), "private"),
    (_V4("100.64.0.0/10"), "shared address space (carrier-grade NAT)"),
    (_V4("127.0.0.0/8"), "loopback"),
    (_V4("169.254.0.0/16"), "link-local (cloud metadata services)"),
    (_V4("172.16.0.0/12"), "private"),
    (_V4("192.0.0.0/24"), "IETF protocol assignments"),
    (_V4("192.0.2.0/24"), "documentation"),
    (_V4("192.88.99.0/24"), "6to4 relay anycast (deprecated)"),
    (_V4("192.168.0.0/16"), "private"),
    (_V4("198.18.0.0/15"), "benchmarking"),
    (_V4("198.51.100.0/24"), "documentation"),
    (_V4("203.0.113.0/24"), "documentation"),
    (_V4("224.0.0.0/4"), "multicast"),
    (_V4("240.0.0.0/4"), "reserved, and the limited broadcast"),
)
"""The IPv4 ranges refused beside what Python's ``is_global`` refuses (its lists differ between
Python versions, and it counts multicast as global): written out, the same everywhere."""

GLOBAL_UNICAST_IPV6 = _V6("2000::/3")
"""The only IPv6 range global unicast addresses are allocated from: outside it lie loopback,
unspecified, IPv4-compatible, unique-local (fc00::/7), link-local (fe80::/10), site-local
(fec0::/10), multicast (ff00::/8) and the reserved rest."""

REFUSED_IPV6: tuple[tuple[ipaddress.IPv6Network, str], ...] = (
    (_V6("2001::/23"), "IETF protocol assignments"),
    (_V6("2001:db8::/32"), "documentation"),
    (_V6("3fff::/20"), "documentation"),
)
"""The parts of 2000::/3 refused (Teredo's 2001::/32 and 6to4's 2002::/16 are judged on the
IPv4 addresses they carry first)."""

IPV4_COMPATIBLE = _V6("::/96")
NAT64 = _V6("64:ff9b::/96")
LOCAL_NAT64 = _V6("64:ff9b:1::/48")
LOCAL_NAT64_96 = _V6("64:ff9b:1::/96")
"""The local-use NAT64 prefix (RFC 8215) and the one layout of it whose IPv4 can be read for
sure: a network may embed the IPv4 address at any of RFC 6052's places under its /48, but an
address in 64:ff9b:1::/96 reads as its last 32 bits at the /96 place and as an address of
0.0.0.0/8 (never routed) at every other. The rest of the /48 is refused."""


def embedded_ipv4(address: ipaddress.IPv6Address) -> tuple[ipaddress.IPv4Address, ...] | None:
    """The IPv4 addresses an IPv6 address reaches when it is one of the forms that carry one
    (a Teredo address both its server and its client), else None."""
    last_32 = ipaddress.IPv4Address(int(address) & 0xFFFF_FFFF)
    if address.ipv4_mapped is not None:
        return (address.ipv4_mapped,)
    if address in IPV4_COMPATIBLE or address in NAT64 or address in LOCAL_NAT64_96:
        return (last_32,)
    if address.sixtofour is not None:
        return (address.sixtofour,)
    if address.teredo is not None:
        return address.teredo
    return None


def is_public(address: IPAddress) -> bool:
    """Whether the server may connect to ``address`` on a user's behalf: globally routable
    unicast, judged on the IPv4 address an IPv6 form carries."""
    if isinstance(address, ipaddress.IPv4Address):
        return _public_ipv4(address)
    if address in LOCAL_NAT64 and address not in LOCAL_NAT64_96:
        return False
    carried = embedded_ipv4(address)
    if carried is not None:
        return all(_public_ipv4(inner) for inner in carried)
    return (address in GLOBAL_UNICAST_IPV6 and address.is_global
            and not any(address in network for network, _ in REFUSED_IPV6))


def _public_ipv4(address: ipaddress.IPv4Address) -> bool:
    return address.is_global and not any(address in network for network, _ in REFUSED_IPV4)


# ------------------------------------------------------------------ names and their answers


getaddrinfo = socket.getaddrinfo
"""The resolver every check here asks (the tests put another in its place, to count the
lookups or to answer a name differently from one lookup to the next)."""


class NotPublic(Exception):
    """``host`` has an address that the policy refuses (``address``), or none at all
    (``address`` None: it does not resolve), and ``allow_private`` is off."""

    def __init__(self, host: str, address: IPAddress | None) -> None:
        what = "has no address" if address is None else "is not a public address"
        super().__init__(f"the host {host} {what}")
        self.host = host
        self.address = address


@dataclass(frozen=True)
class Answer:
    """One of a name's addresses, as the resolver gave it and as the socket connects to it."""

    family: int
    kind: int
    proto: int
    sockaddr: tuple[Any, ...]

    @property
    def address(self) -> IPAddress:
        return ipaddress.ip_address(str(self.sockaddr[0]))


def resolve(host: str, port: int) -> list[Answer]:
    """The TCP addresses of ``host`` (a name or an address), as :data:`getaddrinfo` answers;
    ``socket.gaierror`` when it has none."""
    host = host.strip("[]").rstrip(".")
    try:
        infos = getaddrinfo(host, port, allowed_gai_family(), socket.SOCK_STREAM)
    except UnicodeError:  # (a label IDNA cannot encode)
        raise socket.gaierror(socket.EAI_NONAME, f"cannot encode {host!r}") from None
    return [Answer(family, kind, proto, tuple(sockaddr))
            for family, kind, proto, _, sockaddr in infos]


def checked(answers: list[Answer], host: str, *, allow_private: bool) -> list[Answer]:
    """``answers`` if every one of them is public (or ``allow_private``), else NotPublic: a
    name with one private answer among public ones is refused whole, as a connection could
    fall back to that one."""
    if not allow_private:
        for answer in answers:
            if not is_public(answer.address):
                raise NotPublic(host, answer.address)
    return answers


def check_host(host: str, port: int, *, allow_private: bool) -> None:
    """NotPublic unless ``host`` resolves, and only to public addresses (or ``allow_private``):
    the early check of an address a user gives, before it is stored. The connection checks
    again when it is made."""
    try:
        answers = resolve(host, port)
    except OSError:
        raise NotPublic(host, None) from None
    checked(answers, host, allow_private=allow_private)


# ------------------------------------------------------------------ the connections


class _CheckedConnect(HTTPConnection):
    """Opens its socket only to its host's checked answers (mixed into urllib3's HTTP and
    HTTPS connections: TLS still verifies the certificate against the host's name)."""

    allow_private: ClassVar[bool] = False

    def _new_conn(self) -> socket.socket:
        try:
            answers = resolve(self._dns_host, self.port)
        except socket.gaierror as exc:
            raise NameResolutionError(self.host, self, exc) from exc
        checked(answers, self.host, allow_private=self.allow_private)
        try:
            return self._connect_first(answers)
        except TimeoutError as exc:
            raise ConnectTimeoutError(self, f"Connection to {self.host} timed out. "
                                            f"(connect timeout={self.timeout})") from exc
        except OSError as exc:
            raise NewConnectionError(self, f"Failed to establish a new connection: {exc}") \
                from exc

    def _connect_first(self, answers: list[Answer]) -> socket.socket:
        """A socket connected to the first of ``answers`` that takes it (the last one's
        error when none does)."""
        failure: OSError = OSError(f"{self.host} has no address")
        for answer in answers:
            sock = socket.socket(answer.family, answer.kind, answer.proto)
            try:
                for option in self.socket_options or ():
                    sock.setsockopt(*option)
                if isinstance(self.timeout, int | float) or self.timeout is None:
                    sock.settimeout(self.timeout)
                if self.source_address:
                    sock.bind(self.source_address)
                sock.connect(answer.sockaddr)
                return sock
            except OSError as exc:
                sock.close()
                failure = exc
        raise failure


@cache
def _pool_classes(private: bool) -> dict[str, type[HTTPConnectionPool]]:
    """urllib3's connection pools, making :class:`_CheckedConnect` connections that let
    non-public addresses through when ``private``."""

    class Connection(_CheckedConnect):
        allow_private = private

    class SecureConnection(_CheckedConnect, HTTPSConnection):
        allow_private = private

    class Pool(HTTPConnectionPool):
        ConnectionCls = Connection

    class SecurePool(HTTPSConnectionPool):
        ConnectionCls = SecureConnection

    return {"http": Pool, "https": SecurePool}


class CheckedAdapter(HTTPAdapter):
    """A ``requests`` transport whose every connection is checked (:class:`_CheckedConnect`)."""

    def __init__(self, *, allow_private: bool) -> None:
        self.allow_private = allow_private
        super().__init__()

    def init_poolmanager(self, connections: int, maxsize: int, block: bool = False,
                         **pool_kwargs: Any) -> None:
        super().init_poolmanager(connections, maxsize, block, **pool_kwargs)
        self.poolmanager.pool_classes_by_scheme = _pool_classes(self.allow_private)


class NoRedirects(requests.Session):
    """A session that hands a redirect back as the answer it is, never following it."""

    def get_redirect_target(self, resp: requests.Response) -> str | None:
        return None


def outbound_session(*, allow_private: bool) -> requests.Session:
    """The session for requests made on a user's behalf: every connection checked, no
    redirect followed, no proxy or ``.netrc`` read from the environment.

    Why no redirects, rather than checking each hop: neither kind of request has a use for
    them. A push service answers a notification itself (201, or 404/410 for a subscription that
    is gone: RFC 8030); a redirect could only come from an endpoint that is no push service.
    A webhook's receiver (Discord, Slack, a Matrix hookshot, ntfy, a bot) takes the post where
    it was registered; a redirect would hand a signed post, and the secret that a Discord or
    Slack address holds in its path, to an address that its owner never gave, and could turn
    the POST into a GET of a page inside our network. So a 3xx is an answer like any other
    refusal: the row is given up, and it says so. The connection check still runs on every
    connection, so a redirect followed by mistake would be checked too."""
    session = NoRedirects()
    session.trust_env = False
    adapter = CheckedAdapter(allow_private=allow_private)
    session.mount("http://", adapter)
    session.mount("https://", adapter)
    return session
