"""Private Dovecot and Postfix instances for the tests that talk to real mail servers.

Each fixture starts an instance of its own: configuration, mail, queue and log in a new
temporary folder, listening on free loopback ports only, with nothing of the machine's own mail
set-up read or changed. At the end it is stopped, whatever is left of its processes is killed,
its log is copied into the test's ``tmp_path`` and its folder removed.

They need Debian's packages (``apt-get install dovecot-imapd dovecot-lmtpd postfix``; postfix
also needs root, which its master process starts as). Where these are missing the tests are
skipped with the reason; with ``TITANPOST_TEST_MAILSERVERS=required`` (set by ``.ci/run``, which
installs the packages) they fail instead, so that CI cannot pass without having run them.

- :func:`dovecot`: IMAP for one user (a passwd-file) and LMTP delivery into a maildir,
  plaintext login allowed (loopback only, ``ssl = no``); its log's logout line counts the bytes
  it sent (``out=``) and the message bodies it fetched.
- :func:`postfix_factory`: ``make(routes)`` starts a Postfix relaying each domain (or address)
  of ``routes`` to its next hop (``transport_maps``, e.g. ``smtp:[127.0.0.1]:2525`` for
  ``titanpost mail listen`` or ``lmtp:inet:127.0.0.1:24`` for Dovecot; ``nosize:`` instead of
  ``smtp:`` is a relay that ignores the SIZE limit its next hop announces) and everything
  else, bounces included, to the instance's ``outside`` SMTP sink.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import re
import shutil
import signal
import smtplib
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from aiosmtpd.controller import Controller

from tests.netutil import free_port
from tests.test_mail_out import Inbox

REQUIRED = os.environ.get("TITANPOST_TEST_MAILSERVERS", "") == "required"
WAIT_SECONDS = 60.0
"""How long a fixture waits for a server to start or a log line to appear, at most (a bound
on the loops, not a measure: every wait ends as soon as what it waits for is there)."""


def _missing(reason: str) -> None:
    """Skip the test for a missing mail server, or fail it where they are required (CI)."""
    if REQUIRED:
        pytest.fail(f"{reason} (TITANPOST_TEST_MAILSERVERS=required)")
    pytest.skip(reason)


def _private_folder(name: str) -> Path:
    """A new temporary folder that the servers' unprivileged users can pass through (pytest's
    own ``tmp_path`` is readable by the test user alone)."""
    folder = Path(tempfile.mkdtemp(prefix=f"titanpost-{name}-"))
    folder.chmod(0o711)
    return folder


def wait_for_port(port: int, what: str, log: Path) -> None:
    deadline = time.monotonic() + WAIT_SECONDS
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            if time.monotonic() > deadline:
                pytest.fail(f"{what} did not listen on port {port}:\n{read(log)}")
            time.sleep(0.1)


def read(log: Path) -> str:
    return log.read_text(errors="replace") if log.exists() else "(no log)"


def wait_for_line(log: Path, pattern: str, what: str) -> re.Match[str]:
    """The first line of ``log`` matching ``pattern``, once it is there."""
    deadline = time.monotonic() + WAIT_SECONDS
    expression = re.compile(pattern)
    while True:
        for line in read(log).splitlines():
            found = expression.search(line)
            if found is not None:
                return found
        if time.monotonic() > deadline:
            pytest.fail(f"no {what} in the log ({pattern}):\n{read(log)}")
        time.sleep(0.1)


def _run_to_log(command: list[str], output: Path, log: Path) -> None:
    """Run a daemon's start command, its output into a file: the daemon it leaves running
    keeps its standard output open, so a pipe would never reach its end."""
    with output.open("w") as out:
        code = subprocess.run(command, stdin=subprocess.DEVNULL, stdout=out, stderr=out,
                              timeout=WAIT_SECONDS, check=False).returncode
    assert code == 0, f"{' '.join(command)}: exit {code}\n{read(output)}\n{read(log)}"


def _master_pid(pid_file: Path) -> int | None:
    try:
        return int(pid_file.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def _running(pid: int) -> bool:
    """Whether process ``pid`` is there and not a zombie (the master's children that it did
    not reap before it went are zombies until the system reaps them: they count as gone)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[0] not in ("Z", "X")


def stop_daemon(pid: int | None) -> None:
    """Stop a daemon by its master process: SIGTERM (what both daemons' stop commands send),
    then, once the master is gone or after a while, SIGKILL for whatever is left of its
    process group (both daemons make their master a process group leader)."""
    if pid is None:
        return
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + 10
    while _running(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, signal.SIGKILL)


def _keep_log(log: Path, tmp_path: Path) -> None:
    if log.exists():
        shutil.copy(log, tmp_path / log.name)


# ------------------------------------------------------------------------------------ Dovecot


@dataclass
class Dovecot:
    folder: Path
    imap_port: int
    lmtp_port: int
    user: str = "play"
    password: str = "p@ss word"

    @property
    def log(self) -> Path:
        return self.folder / "dovecot.log"

    @property
    def config(self) -> Path:
        return self.folder / "dovecot.conf"

    @property
    def maildir(self) -> Path:
        return self.folder / "mail" / self.user

    def imap_url(self) -> str:
        return f"imap://{self.user}:p%40ss%20word@127.0.0.1:{self.imap_port}/INBOX"

    def deliver(self, sender: str, recipient: str, raw: bytes) -> None:
        """Deliver a message by LMTP, as an MTA does (Dovecot adds Delivered-To)."""
        with smtplib.LMTP("127.0.0.1", self.lmtp_port, timeout=30) as lmtp:
            lmtp.sendmail(sender, [recipient], raw)

    def messages(self) -> list[tuple[int, str]]:
        """The maildir's messages, smallest first: their size in bytes (as Dovecot wrote it
        into the file name) and their flags (maildir letters: "S" seen, "F" flagged)."""
        found = []
        for sub in ("new", "cur"):
            for path in (self.maildir / sub).glob("*"):
                name, _, flags = path.name.partition(":2,")
                size = re.search(r",S=(\d+)", name)
                assert size is not None, name
                found.append((int(size[1]), flags))
        return sorted(found)

    def logouts(self) -> list[dict[str, int]]:
        """Each IMAP session's counts from its logout line: bytes in and out, bodies fetched."""
        line = re.compile(r"Logged out in=(\d+) out=(\d+) fetch_body_count=(\d+) "
                          r"fetch_body_bytes=(\d+)")
        return [
            {"in": int(m[1]), "out": int(m[2]), "bodies": int(m[3]), "body_bytes": int(m[4])}
            for m in line.finditer(read(self.log))
        ]


def _dovecot_users() -> tuple[str, pwd.struct_passwd]:
    """The settings of the processes' users, and the user the mail belongs to: as root the
    package's own users (Dovecot refuses root for mail), else the test user for everything
    (Dovecot's rootless set-up)."""
    if os.geteuid() == 0:
        mail = pwd.getpwnam("dovecot")
        return f"first_valid_uid = {mail.pw_uid}\n", mail
    mail = pwd.getpwuid(os.getuid())
    group = f"#{mail.pw_gid}"
    rootless = (
        f"default_internal_user = {mail.pw_name}\ndefault_login_user = {mail.pw_name}\n"
        f"default_internal_group = {group}\nfirst_valid_uid = {mail.pw_uid}\n"
        "service imap-login {\n  chroot =\n}\nservice anvil {\n  chroot =\n}\n"
    )
    return rootless, mail


LOGOUT_FORMAT = ("in=%i out=%o fetch_body_count=%{fetch_body_count} "
                 "fetch_body_bytes=%{fetch_body_bytes}")
"""What the log says of each IMAP session as it ends: bytes in and out, bodies fetched."""


def dovecot_config(box: Dovecot, users: str, mail: pwd.struct_passwd) -> str:
    folder = box.folder
    return f"""# A private Dovecot for one test: IMAP and LMTP on loopback ports, mail in {folder}.
base_dir = {folder}/run
state_dir = {folder}/state
log_path = {box.log}
protocols = imap lmtp
listen = 127.0.0.1
ssl = no
disable_plaintext_auth = no
auth_mechanisms = plain login
mail_location = maildir:{folder}/mail/%n
recipient_delimiter = +
lmtp_save_to_detail_mailbox = no
imap_logout_format = {LOGOUT_FORMAT}
{users}
passdb {{
  driver = passwd-file
  args = scheme=PLAIN username_format=%n {folder}/passwd
}}
userdb {{
  driver = static
  args = uid={mail.pw_uid} gid={mail.pw_gid} home={folder}/home/%n
}}
service imap-login {{
  inet_listener imap {{
    address = 127.0.0.1
    port = {box.imap_port}
  }}
  inet_listener imaps {{
    port = 0
  }}
}}
service lmtp {{
  inet_listener lmtp {{
    address = 127.0.0.1
    port = {box.lmtp_port}
  }}
}}
"""


@pytest.fixture
def dovecot(tmp_path: Path) -> Iterator[Dovecot]:
    """A private Dovecot (see the module's docstring), stopped afterwards."""
    if shutil.which("dovecot") is None or not Path("/usr/lib/dovecot/lmtp").exists():
        _missing("Dovecot is not installed (apt-get install dovecot-imapd dovecot-lmtpd): "
                 "the tests against a real IMAP server are skipped")
    folder = _private_folder("dovecot")
    box = Dovecot(folder, free_port(), free_port())
    users, mail = _dovecot_users()
    box.config.write_text(dovecot_config(box, users, mail))
    (folder / "passwd").write_text(f"{box.user}:{{PLAIN}}{box.password}\n")
    (folder / "passwd").chmod(0o644)
    for sub in ("mail", "home"):
        (folder / sub).mkdir()
        os.chown(folder / sub, mail.pw_uid, mail.pw_gid)
    try:
        _run_to_log(["dovecot", "-c", str(box.config)], folder / "start.log", box.log)
        wait_for_port(box.imap_port, "Dovecot", box.log)
        yield box
    finally:
        stop_daemon(_master_pid(folder / "run" / "master.pid"))
        _keep_log(box.log, tmp_path)
        shutil.rmtree(folder, ignore_errors=True)


# ------------------------------------------------------------------------------------ Postfix


@dataclass
class Postfix:
    folder: Path
    port: int
    outside: Inbox
    """Mail for any other domain (the players', so the bounces too) arrives here."""

    @property
    def log(self) -> Path:
        return self.folder / "postfix.log"

    def send(self, sender: str, recipients: list[str], raw: bytes) -> None:
        with smtplib.SMTP("127.0.0.1", self.port, timeout=30) as smtp:
            smtp.sendmail(sender, recipients, raw)

    def wait_for(self, pattern: str, what: str) -> re.Match[str]:
        return wait_for_line(self.log, pattern, what)


def postfix_main_cf(folder: Path, routes: dict[str, str], outside_port: int) -> str:
    transports = ", ".join(f"{domain}={hop}" for domain, hop in routes.items())
    domains = sorted({key.rpartition("@")[2] for key in routes})
    return f"""# A private Postfix for one test: SMTP on a loopback port, queue and log in {folder}.
compatibility_level = 3.6
meta_directory = /etc/postfix
queue_directory = {folder}/queue
data_directory = {folder}/data
maillog_file_prefixes = {folder}
maillog_file = {folder}/postfix.log
mail_owner = postfix
myhostname = relay.titanpost.test
mydomain = relay.titanpost.test
myorigin = $myhostname
mydestination =
local_recipient_maps =
alias_maps =
alias_database =
inet_interfaces = loopback-only
inet_protocols = ipv4
mynetworks = 127.0.0.0/8
relay_domains = {", ".join(domains)}
smtpd_relay_restrictions = permit_mynetworks, reject_unauth_destination
transport_maps = inline:{{ {transports} }}
relayhost = [127.0.0.1]:{outside_port}
smtp_dns_support_level = disabled
message_size_limit = 50000000
queue_run_delay = 1s
minimal_backoff_time = 1s
maximal_backoff_time = 2s
biff = no
"""


POSTFIX_SERVICES = """\
pickup    unix  n       -       n       60      1       pickup
cleanup   unix  n       -       n       -       0       cleanup
qmgr      unix  n       -       n       300     1       qmgr
rewrite   unix  -       -       n       -       -       trivial-rewrite
bounce    unix  -       -       n       -       0       bounce
defer     unix  -       -       n       -       0       bounce
trace     unix  -       -       n       -       0       bounce
verify    unix  -       -       n       -       1       verify
flush     unix  n       -       n       1000?   0       flush
proxymap  unix  -       -       n       -       -       proxymap
smtp      unix  -       -       n       -       -       smtp
relay     unix  -       -       n       -       -       smtp
nosize    unix  -       -       n       -       -       smtp
  -o smtp_discard_ehlo_keywords=size
showq     unix  n       -       n       -       -       showq
error     unix  -       -       n       -       -       error
retry     unix  -       -       n       -       -       error
discard   unix  -       -       n       -       -       discard
lmtp      unix  -       -       n       -       -       lmtp
anvil     unix  -       -       n       -       1       anvil
scache    unix  -       -       n       -       1       scache
postlog   unix-dgram n  -       n       -       1       postlogd
"""


def _start_postfix(folder: Path, routes: dict[str, str], tmp_path: Path,
                   stops: list[Callable[[], None]]) -> Postfix:
    outside = Inbox()
    sink = Controller(outside, hostname="127.0.0.1", port=free_port())
    sink.start()
    stops.append(sink.stop)
    relay = Postfix(folder, free_port(), outside)
    (folder / "main.cf").write_text(postfix_main_cf(folder, routes, sink.port))
    (folder / "master.cf").write_text(
        f"127.0.0.1:{relay.port} inet n - n - - smtpd\n" + POSTFIX_SERVICES)
    (folder / "queue").mkdir()
    (folder / "data").mkdir()
    owner = pwd.getpwnam("postfix")
    os.chown(folder / "data", owner.pw_uid, owner.pw_gid)

    def stop() -> None:
        stop_daemon(_master_pid(folder / "queue" / "pid" / "master.pid"))
        _keep_log(relay.log, tmp_path)
        shutil.rmtree(folder, ignore_errors=True)

    stops.append(stop)
    _run_to_log(["postfix", "-c", str(folder), "start"], folder / "start.log", relay.log)
    wait_for_port(relay.port, "Postfix", relay.log)
    return relay


PostfixFactory = Callable[[dict[str, str]], Postfix]


@pytest.fixture
def postfix_factory(tmp_path: Path) -> Iterator[PostfixFactory]:
    """``make(routes)``: a private Postfix (see the module's docstring), stopped afterwards."""
    if shutil.which("postfix") is None:
        _missing("Postfix is not installed (apt-get install postfix): "
                 "the tests behind a real MTA are skipped")
    if os.geteuid() != 0:
        _missing("Postfix's master process starts as root only: "
                 "the tests behind a real MTA are skipped for a test user that is not root")
    stops: list[Callable[[], None]] = []

    def make(routes: dict[str, str]) -> Postfix:
        return _start_postfix(_private_folder("postfix"), routes, tmp_path, stops)

    try:
        yield make
    finally:
        for stop in reversed(stops):
            stop()
