"""The JSON API of a seat's own address: its state and a test mail (see
app/features/delivery/table.py)."""

from __future__ import annotations

from typing import Any

from apiflask import APIBlueprint

from app.features.delivery.table import TEST_MAIL_EVERY, address_state, ask_test_mail
from app.web.api.access import seat_auth, seat_in, service
from app.web.api.schemas import answers

bp = APIBlueprint("delivery_api", __name__, url_prefix="/api", tag="Mail")

STATE_DOC = ("The token's seat's address and what is known of mail to it: last_delivered_at "
             "(when a mail relay last took a mail for it), last_bounce_at and bounce_reason "
             "(its last bounce and the receiving server's words), undeliverable_since (set: "
             "mail to it stopped; a test mail tries it again) and test_mail_at (the last test "
             "mail asked for within a day). Times in UTC, ISO 8601; null when nothing is known.")


@bp.get("/games/<uid>/me/mail")
@bp.auth_required(seat_auth)
@bp.doc(summary="My address's mail state", description=STATE_DOC,
        responses=answers(200, 401, 403, 404))
def mail_state(uid: str) -> dict[str, Any]:
    return address_state(service(), uid, seat_in(uid))


@bp.post("/games/<uid>/me/mail/test")
@bp.auth_required(seat_auth)
@bp.doc(summary="Send me a test mail", description="Mail to the token's seat's address is "
        "tried again (an undeliverable mark is cleared) and a test mail is written to it. "
        f"At most one every {int(TEST_MAIL_EVERY.total_seconds() // 60)} minutes per address: "
        "sooner is refused with 429. Answers the address's state, with cleared (whether it "
        "was undeliverable).",
        responses={**answers(200, 401, 403, 404),
                   429: "A test mail went to the address less than ten minutes ago"})
def test_mail(uid: str) -> dict[str, Any]:
    return ask_test_mail(service(), uid, seat_in(uid))
