"""Slow request bodies: does the production web server still answer while clients dribble?

    python3 bench/slow_bodies.py [--setups nginx,gthread,gevent] [--connections 50]
                                 [--announce 1000] [--send 10] [--hold 5] [--probes 20]
                                 [--workers 2] [--threads 4] [--database-url URL | --url URL]

For each set-up of ``--setups`` it starts ``gunicorn -c deploy/gunicorn.conf.py app.wsgi:app``
in production mode on a free loopback port (``--workers`` processes), on a fresh SQLite
database in a temporary folder (``--database-url`` for another, already migrated):

- ``nginx``: the file's thread worker (``--threads`` threads) behind nginx running the deploy's
  ``deploy/nginx/titanpost-proxy.conf`` (production; Debian's nginx must be installed);
- ``gthread``: the thread worker alone, as clients reaching gunicorn directly would meet it;
- ``gevent``: ``GUNICORN_WORKER_CLASS=gevent`` alone (``pip install 'titanpost[gevent]'``).

``--url`` measures a server already running instead. Each measure first times ``--probes``
plain ``GET /healthz``; then opens ``--connections`` slow connections, each sending a
``POST /api/games`` whose headers announce a body of ``--announce`` bytes, ``--send`` of them,
and holding on; and, while they are held, times ``--probes`` more ``GET /healthz``, each given
up after 5 seconds. It prints the latencies (median and worst) and how many probes got no
answer, and, ``--hold`` seconds later, how many slow connections are still held (neither
answered nor closed).
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parent.parent
PROBE_TIMEOUT = 5.0


@dataclass
class Probes:
    """The ``/healthz`` timings of one phase."""

    latencies_ms: list[float] = field(default_factory=list)
    failed: int = 0

    def line(self) -> str:
        if not self.latencies_ms:
            return f"no answer ({self.failed} of {self.failed} probes failed)"
        ordered = sorted(self.latencies_ms)
        return (f"median {statistics.median(ordered):.1f} ms, worst {ordered[-1]:.1f} ms, "
                f"{self.failed} of {len(ordered) + self.failed} without an answer")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def slow_connection(host: str, port: int, announce: int, send: int) -> socket.socket:
    """A connection that announced a body of ``announce`` bytes and sent ``send`` of them."""
    sock = socket.create_connection((host, port), timeout=10)
    head = (f"POST /api/games HTTP/1.1\r\nHost: {host}:{port}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {announce}\r\n\r\n")
    sock.sendall(head.encode("ascii") + b"{" * send)
    return sock


def probe(url: str, times: int) -> Probes:
    """Time ``times`` GETs of ``url``, each given up after PROBE_TIMEOUT seconds."""
    found = Probes()
    for _ in range(times):
        started = time.perf_counter()
        try:
            with urllib.request.urlopen(url, timeout=PROBE_TIMEOUT) as answer:
                answer.read()
            found.latencies_ms.append((time.perf_counter() - started) * 1000)
        except (urllib.error.URLError, OSError):
            found.failed += 1
    return found


def still_open(sock: socket.socket) -> bool:
    """Whether the server has neither answered nor closed ``sock``."""
    sock.setblocking(False)
    try:
        sock.recv(1, socket.MSG_PEEK)  # an answer, or b"" once closed
        return False
    except BlockingIOError:
        return True
    except OSError:
        return False
    finally:
        sock.setblocking(True)


def wait_until_up(url: str, server: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if server.poll() is not None:
            sys.exit(f"{url}: the server exited:\n{log.read_text()}")
        try:
            with urllib.request.urlopen(url, timeout=2):
                return
        except (urllib.error.URLError, OSError):
            time.sleep(0.2)
    sys.exit(f"{url} did not answer:\n{log.read_text()}")


@contextmanager
def gunicorn(args: argparse.Namespace, database: str, folder: Path,
             worker_class: str | None) -> Iterator[int]:
    """A production gunicorn as deploy/gunicorn.conf.py sets it up; yields its port."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TITANPOST_", "GUNICORN_"))}
    port = free_port()
    env |= {"TITANPOST_ENV": "production", "TITANPOST_DATABASE_URL": database,
            "TITANPOST_SECRET_KEY": os.urandom(32).hex(), "TITANPOST_LOG_LEVEL": "warning",
            "GUNICORN_BIND": f"127.0.0.1:{port}", "GUNICORN_WORKERS": str(args.workers),
            "GUNICORN_THREADS": str(args.threads), "GUNICORN_LOG_LEVEL": "warning"}
    if worker_class:
        env["GUNICORN_WORKER_CLASS"] = worker_class
    log = folder / f"gunicorn-{worker_class or 'default'}.log"
    with log.open("wb") as out:
        server = subprocess.Popen([sys.executable, "-m", "gunicorn", "-c",
                                   "deploy/gunicorn.conf.py", "app.wsgi:app"], cwd=ROOT,
                                  env=env, stdout=out, stderr=subprocess.STDOUT)
    try:
        wait_until_up(f"http://127.0.0.1:{port}/healthz", server, log)
        yield port
    finally:
        stop(server)


@contextmanager
def nginx(upstream: int, folder: Path) -> Iterator[int]:
    """nginx passing requests to 127.0.0.1:``upstream`` with the deploy's proxy settings."""
    binary = shutil.which("nginx") or "/usr/sbin/nginx"
    if not os.access(binary, os.X_OK):
        sys.exit("nginx is not installed (apt-get install nginx)")
    port, prefix = free_port(), folder / "nginx"
    prefix.mkdir()
    temp = "\n".join(f"    {kind}_temp_path {prefix / kind};"
                     for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"))
    (prefix / "nginx.conf").write_text(
        f"daemon off;\nworker_processes 1;\npid {prefix / 'nginx.pid'};\n"
        f"error_log {prefix / 'error.log'} warn;\nevents {{ worker_connections 512; }}\n"
        f"http {{\n    access_log off;\n{temp}\n"
        f"    upstream titanpost {{ server 127.0.0.1:{upstream}; keepalive 8; }}\n"
        f"    server {{ listen 127.0.0.1:{port}; location / {{ proxy_pass http://titanpost;\n"
        f"        include {ROOT / 'deploy' / 'nginx' / 'titanpost-proxy.conf'}; }} }}\n}}\n")
    front = subprocess.Popen([binary, "-p", str(prefix), "-c", str(prefix / "nginx.conf")],
                             stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    try:
        wait_until_up(f"http://127.0.0.1:{port}/healthz", front, prefix / "error.log")
        yield port
    finally:
        stop(front)


def stop(process: subprocess.Popen[bytes]) -> None:
    process.terminate()
    try:
        process.wait(20)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


SETUPS = {
    "nginx": "the thread worker behind nginx (production)",
    "gthread": "the thread worker alone",
    "gevent": "the gevent worker alone",
}


def run_setup(name: str, args: argparse.Namespace, database: str, folder: Path) -> None:
    print(f"{name}: {SETUPS[name]}, {args.workers} processes"
          + (f" of {args.threads} threads" if name != "gevent" else ""))
    with gunicorn(args, database, folder, "gevent" if name == "gevent" else "gthread") as port:
        if name == "nginx":
            with nginx(port, folder) as front:
                measure(f"http://127.0.0.1:{front}", args)
        else:
            measure(f"http://127.0.0.1:{port}", args)


def measure(base: str, args: argparse.Namespace) -> None:
    parts = urlsplit(base)
    host, port = parts.hostname or "127.0.0.1", parts.port or 80
    healthz = f"{base}/healthz"
    print(f"/healthz alone:         {probe(healthz, args.probes).line()}")
    with ExitStack() as held:
        opened = time.monotonic()
        sockets = [held.enter_context(slow_connection(host, port, args.announce, args.send))
                   for _ in range(args.connections)]
        time.sleep(0.5)  # the slow requests reach the server before the probes do
        during = probe(healthz, args.probes)
        print(f"with {args.connections} slow bodies: {during.line()}")
        time.sleep(args.hold)
        open_now = sum(still_open(sock) for sock in sockets)
        print(f"slow connections still held by the server after "
              f"{time.monotonic() - opened:.1f} s: {open_now} of {len(sockets)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--connections", type=int, default=50)
    parser.add_argument("--announce", type=int, default=1000,
                        help="the body size each slow request announces")
    parser.add_argument("--send", type=int, default=10, help="the bytes of it sent")
    parser.add_argument("--hold", type=float, default=5.0,
                        help="seconds the slow connections are held after the probes")
    parser.add_argument("--probes", type=int, default=20)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--setups", default="nginx,gthread,gevent",
                        help=f"comma-separated, of: {', '.join(SETUPS)}")
    target = parser.add_mutually_exclusive_group()
    target.add_argument("--database-url", default=None,
                        help="an already migrated database (default: a new SQLite file)")
    target.add_argument("--url", default=None, help="measure a server already running here")
    args = parser.parse_args()
    if args.url:
        measure(args.url.rstrip("/"), args)
        return
    setups = [name.strip() for name in args.setups.split(",") if name.strip()]
    unknown = set(setups) - set(SETUPS)
    if unknown:
        parser.error(f"unknown set-up(s): {', '.join(sorted(unknown))}")
    with tempfile.TemporaryDirectory(prefix="titanpost-slow-") as folder:
        database = args.database_url or f"sqlite:///{Path(folder) / 'titanpost.db'}"
        if not args.database_url:
            env = {k: v for k, v in os.environ.items() if not k.startswith("TITANPOST_")}
            subprocess.run([str(Path(sys.executable).parent / "titanpost"), "db", "upgrade"],
                           cwd=ROOT, check=True, capture_output=True,
                           env=env | {"TITANPOST_DATABASE_URL": database})
        for name in setups:
            run_setup(name, args, database, Path(folder))


if __name__ == "__main__":
    main()
