"""The two UPDATEs the sender runs for every mail, compiled once (:mod:`app.core.statements`).

Built anew for each mail through SQLAlchemy they cost about as much as the database takes to
run them; a sender delivering a hundred mails a second runs two hundred. Both are conditional
on the claim still being the sender's (its lease, ``next_attempt_at``, unchanged) as
:mod:`app.mail.send` explains.
"""

from __future__ import annotations

from typing import Final

from sqlalchemy import bindparam, update

from app.core.models import OutboxMail, table_of
from app.core.statements import Prepared

_OUTBOX: Final = table_of(OutboxMail)
_C: Final = _OUTBOX.c

HAND_OVER: Final = Prepared(
    update(_OUTBOX)
    .where(_C.id == bindparam("row_id"), _C.sent_at.is_(None), _C.handed_at.is_(None),
           _C.next_attempt_at == bindparam("lease"))
    .values(next_attempt_at=bindparam("until"), handed_at=bindparam("now"),
            bounce_token=bindparam("token"), relay=bindparam("via"))
    .returning(_C.id))
"""Mark a claimed row handed to the relay (and renew its lease): returns its id, or nothing
when the lease was lost. Parameters: row_id, lease, until, now, token, via."""

DELIVERED: Final = Prepared(
    update(_OUTBOX)
    .where(_C.id == bindparam("row_id"), _C.sent_at.is_(None),
           _C.next_attempt_at == bindparam("lease"))
    .values(sent_at=bindparam("at"), attempts=bindparam("tries"), next_attempt_at=None,
            last_error=None))
"""Record rows the relay took (run for many at once). Parameters: row_id, lease, at, tries."""
