"""Make the README's pictures: ``docs/images/game-page.png`` and ``docs/images/turn-mail.png``.

    python3 docs/screenshots.py [--out docs/images]

It starts ``titanpost serve`` on a temporary SQLite database (on a free loopback port, without
the scheduler and without SMTP, so mail stays in the outbox), creates a game of two players and
the computer through the JSON API, lets Ann take her seat in a headless chromium (Playwright;
Debian's ``/usr/bin/chromium`` when present) and Bob his over the API, starts the game and plays
a few turns until it is Ann's turn, and takes the game page as Ann sees it. Then it renders the
mail asking Ann for that decision, as the outbox would send it (``MailRenderer`` and
``build_message``), with its inline board picture (a ``cid:`` part) turned into a ``data:``
URI, and takes that too. The dice are seeded, so the pictures come out the same each time.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from email.message import EmailMessage
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # the app, also when it is not installed

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run"]
SEED = 20261121
PAGE_SIZE = {"width": 1180, "height": 1180}
MAIL_WIDTH = 680
MAX_BYTES = 300 * 1024


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def call(base: str, method: str, path: str, body: dict[str, Any] | None = None,
         headers: dict[str, str] | None = None) -> Any:
    request = urllib.request.Request(
        base + path, method=method, data=json.dumps(body).encode() if body is not None else None,
        headers={"Content-Type": "application/json", **(headers or {})})
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read())


def wait_for(base: str, server: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise SystemExit(f"titanpost serve stopped (exit {server.returncode})")
        try:
            with urllib.request.urlopen(base + "/healthz", timeout=2):
                return
        except (urllib.error.URLError, OSError):
            time.sleep(0.3)
    raise SystemExit("titanpost serve did not answer within a minute")


def serve_command() -> list[str]:
    installed = shutil.which("titanpost")
    return [installed] if installed else [sys.executable, "-m", "cli.main"]


def choose(options: list[str]) -> str:
    """A move when there is one (so the Titans travel), else the first option."""
    return next((o for o in options if o.startswith("move ")), options[0])


def play_until_ann(service: Any, uid: str, turns: int) -> None:
    """Answer decisions (Bob's, and Ann's for the first ``turns`` ones) until Ann is to choose
    between at least three options."""
    for answered in range(400):
        summary = service.state(uid, None)["game"]
        if summary["status"] != "active" or not summary["to_act"]:
            raise SystemExit("the game ended before it was Ann's turn: change SEED")
        position = summary["to_act"][0]
        options = service.options(uid, position)
        if position == 0 and answered >= turns and len(options["options"]) >= 3:
            return
        service.submit(uid, position, options["seq"], choose(options["options"]))
    raise SystemExit("it never became Ann's turn")


def mail_html(message: EmailMessage) -> str:
    """The HTML part of ``message`` with its cid: pictures inlined as data: URIs, under the
    headers a mail program shows."""
    body = message.get_body(preferencelist=("html",))
    assert body is not None
    html = str(body.get_content())
    for part in message.walk():
        cid = part.get("Content-ID")
        if cid and part.get_content_type().startswith("image/"):
            data = base64.b64encode(part.get_payload(decode=True)).decode("ascii")
            html = html.replace(f"cid:{cid.strip('<>')}",
                                f"data:{part.get_content_type()};base64,{data}")
    rows = "".join(
        f"<div><b style='display:inline-block;width:4.5em;color:#555'>{name}</b>"
        f"{_escape(str(message[name]))}</div>" for name in ("From", "To", "Subject"))
    bar = ("<div style='font:14px/1.5 system-ui,sans-serif;padding:10px 16px;"
           f"background:#f1f3f4;border-bottom:1px solid #ddd'>{rows}</div>")
    if "<body" not in html:
        return bar + html
    start = html.index("<body")
    end = html.index(">", start) + 1
    return html[:end] + bar + html[end:]


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def pending_mail(service: Any, uid: str) -> tuple[EmailMessage, str]:
    """The mail asking Ann (seat 0) for the decision pending now, as it would be sent."""
    from sqlmodel import col, select

    from app.core.models import Game, OutboxMail, Seat
    from app.mail.notify import decision_kinds
    from app.mail.render import MailRenderer, build_message

    renderer = MailRenderer(service)
    with service.session() as s:
        game = s.exec(select(Game).where(Game.uid == uid)).one()
        ann = s.exec(select(Seat).where(Seat.game_id == game.id, Seat.position == 0)).one()
        rows = s.exec(select(OutboxMail).where(
            OutboxMail.game_id == game.id, OutboxMail.seat_id == ann.id,
            col(OutboxMail.kind).in_(decision_kinds())).order_by(col(OutboxMail.id).desc())).all()
    for row in rows:
        rendered = renderer.render(row)
        if rendered.skip is None:
            return build_message(service.settings, row, rendered), rendered.subject
    raise SystemExit("no mail asks Ann for the pending decision")


def shoot(page: Any, path: Path, *, full_page: bool) -> None:
    page.screenshot(path=str(path), full_page=full_page)
    size = path.stat().st_size
    print(f"{path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}: "
          f"{size // 1024} KB")
    if size > MAX_BYTES:
        raise SystemExit(f"{path} is larger than {MAX_BYTES // 1024} KB")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "images")
    parser.add_argument("--turns", type=int, default=6,
                        help="Decisions of Ann's played before the picture (default 6).")
    args = parser.parse_args()
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)

    from playwright.sync_api import sync_playwright

    from app.core.config import Settings
    from app.core.migrate import upgrade
    from app.listeners import build_service

    with tempfile.TemporaryDirectory(prefix="titanpost-shots-") as folder:
        port = free_port()
        base = f"http://127.0.0.1:{port}"
        database = f"sqlite:///{Path(folder) / 'titanpost.db'}"
        env = {k: v for k, v in os.environ.items() if not k.startswith("TITANPOST_")} | {
            "TITANPOST_DATABASE_URL": database, "TITANPOST_BASE_URL": base,
            "TITANPOST_ENV": "development", "TITANPOST_MAIL_DOMAIN": "titanpost.example.org",
            "TITANPOST_MAIL_FROM": "Titan Post <titanpost@titanpost.example.org>",
        }
        upgrade(database)
        server = subprocess.Popen([*serve_command(), "serve", "--port", str(port),
                                   "--no-scheduler"], cwd=ROOT, env=env,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            wait_for(base, server)
            settings = Settings.from_env({k: v for k, v in env.items()
                                          if k.startswith("TITANPOST_")})
            service = build_service(settings)
            created = call(base, "POST", "/api/games", {
                "name": "Sunday race", "seed": SEED, "variant": "standard",
                "circuits": ["kaldheira"],
                "seats": [{"email": "ann@example.org", "titans": ["craken"]},
                          {"email": "bob@example.org", "titans": ["grinder"]},
                          {"bot": True, "titans": ["slaugg"]}]})
            uid, creator = created["game"], created["creator_token"]
            invites = {i["position"]: i["invite_token"] for i in created["invitations"]}
            call(base, "POST", "/api/invitations/accept",
                 {"invite_token": invites[1], "name": "Bob"})

            executable = str(CHROMIUM) if CHROMIUM.exists() else None
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path=executable,
                                                     args=CHROMIUM_ARGS, headless=True)
                context = browser.new_context(viewport=PAGE_SIZE, device_scale_factor=1)
                page = context.new_page()
                page.goto(f"{base}/join/{invites[0]}")
                page.fill("input[name=name]", "Ann")
                page.click("#accept-button")
                page.wait_for_url(f"**/games/{uid}")
                call(base, "POST", f"/api/games/{uid}/start", {},
                     {"X-Creator-Token": creator})
                play_until_ann(service, uid, args.turns)
                page.goto(f"{base}/games/{uid}")
                page.wait_for_selector("#board svg")
                shoot(page, out / "game-page.png", full_page=False)

                message, subject = pending_mail(service, uid)
                mail = browser.new_page(viewport={"width": MAIL_WIDTH, "height": 900},
                                        device_scale_factor=1)
                mail.set_content(mail_html(message), wait_until="load")
                shoot(mail, out / "turn-mail.png", full_page=True)
                print(f"the mail: {subject}")
                browser.close()
            service.engine.dispose()
        finally:
            server.terminate()
            server.wait(timeout=30)


if __name__ == "__main__":
    main()
