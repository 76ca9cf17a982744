"""A bouncing address seen in a real browser (Playwright and chromium; issue 39): the player's
settings page warns and its "Send me a test mail" button tries the address again; the other
players' game page says whose mail bounces since when."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import pytest
from sqlmodel import select

from app.core.models import Game, OutboxMail, Seat
from app.features.delivery import standing
from app.mail.notify import ADDRESS_TEST

if TYPE_CHECKING:
    from tests.browser import LiveServer

pytest_plugins = ["tests.browser"]

BOUNCED = datetime(2026, 3, 2, 14, 5, tzinfo=UTC)


@pytest.fixture
def context(browser: Any) -> Iterator[Any]:
    made = browser.new_context()
    made.set_default_timeout(15_000)
    try:
        yield made
    finally:
        made.close()


def _open_seat(context: Any, live_server: LiveServer, uid: str, position: int) -> Any:
    """A page playing seat ``position``, opened from its mail's game link."""
    from app.web.linktokens import make_game_token

    service = live_server.service
    with service.session() as s:
        seat = s.exec(select(Seat).join(Game).where(Game.uid == uid,
                                                    Seat.position == position)).one()
    page = context.new_page()
    token = make_game_token(service.settings.secret_key, seat.secret, uid, position)
    page.goto(f"{live_server.url}/g/{token}")
    page.locator("form button[type=submit]").click()
    page.wait_for_url(f"{live_server.url}/games/{uid}")
    return page


def test_the_warning_the_test_mail_button_and_the_banner(browser: Any, context: Any,
                                                         live_server: LiveServer) -> None:
    service = live_server.service
    tag = uuid.uuid4().hex[:8]
    emails = [f"{who}-{tag}@example.com" for who in ("ann", "bob", "cy")]
    created = service.create_game(seats=[{"email": email, "name": name} for email, name
                                         in zip(emails, ("Ann", "Bob", "Cy"), strict=True)])
    for invitation in created["invitations"]:
        service.accept(invitation["invite_token"])
    service.start(created["game"], created["creator_token"])
    uid = created["game"]
    with service.session(write=True) as s:
        standing.record_bounce(s, emails[1], "550 5.1.1 user unknown", BOUNCED, permanent=True)
        s.commit()
    # Ann sees whose mail bounces; a spectator too
    ann = _open_seat(context, live_server, uid, 0)
    assert "Bob's mail is bouncing since 2026-03-02 14:05 UTC." in ann.locator(
        "#bouncing").inner_text()
    watcher = browser.new_context()
    try:
        spectator = watcher.new_page()
        spectator.goto(f"{live_server.url}/games/{uid}")
        assert "Bob's mail is bouncing" in spectator.locator("#bouncing").inner_text()
    finally:
        watcher.close()
    # Bob sees his own warning, which leads to his settings
    bob = _open_seat(context.browser.new_context(), live_server, uid, 1)
    try:
        mine = bob.locator("#bouncing .bouncing-mine")
        assert "Mail to you is bouncing since 2026-03-02 14:05 UTC" in mine.inner_text()
        mine.locator("a").click()
        bob.wait_for_url(f"{live_server.url}/games/{uid}/me#mail-state")
        warning = bob.locator("#mail-bounced")
        assert warning.inner_text() == (f"Mail to {emails[1]} bounced on 2026-03-02 14:05 UTC: "
                                        "550 5.1.1 user unknown. We stopped mailing you.")
        bob.locator("#test-mail").click()
        bob.locator(".flash.ok").filter(has_text="A test mail is on its way").wait_for()
        assert bob.locator("#mail-bounced").count() == 0
        with service.session() as s:
            row = standing.state_of(s, emails[1])
            assert row is not None and row.undeliverable_since is None
            written = s.exec(select(OutboxMail).where(OutboxMail.kind == ADDRESS_TEST,
                                                      OutboxMail.recipient == emails[1])).all()
        assert len(written) == 1
        # Ann's page no longer names Bob
        ann.reload()
        assert ann.locator("#bouncing").count() == 0
    finally:
        bob.context.close()
