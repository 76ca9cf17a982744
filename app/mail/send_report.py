"""What one round of the sender did (:class:`SendReport`): counted by :mod:`app.mail.send`,
printed by ``titanpost mail send`` and summed over rounds there."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class SendReport:
    claimed: int = 0
    sent: int = 0
    skipped: int = 0
    failed: int = 0
    gave_up: int = 0
    lost_lease: int = 0
    """Claimed rows not sent because their lease ran out and another sender took them."""
    unconfirmed: int = 0
    """Rows settled as sent without the relay's answer (see the module documentation)."""
    held: int = 0
    """Rows held back because their player has the game open on a page."""
    disabled: bool = False
    errors: list[str] = field(default_factory=list)

    def __str__(self) -> str:
        if self.disabled:
            return "no TITANPOST_SMTP_URL: nothing sent (mail stays in the outbox)"
        text = (f"claimed {self.claimed}, sent {self.sent}, skipped {self.skipped}, "
                f"failed {self.failed}, gave up {self.gave_up}")
        if self.lost_lease:
            text += f", {self.lost_lease} left to another sender"
        if self.unconfirmed:
            text += f", {self.unconfirmed} handed over unconfirmed (not sent again)"
        if self.held:
            text += f", {self.held} held while their player has the game open"
        return text + (f" (last error: {self.errors[-1]})" if self.errors else "")
