"""Retention: what the server forgets by itself, and when (docs/privacy.md).

- A game never started (still open, or abandoned before its start) is purged, with every row
  that is its own, ``TITANPOST_RETENTION_DAYS`` (30) after the last thing that happened to it
  (made, a seat invited or taken, abandoned). Its mails' rows stay, emptied and unlinked.
- An invitation never accepted stops working the same time after it was made.
- A mail's body is emptied from the outbox ``TITANPOST_MAIL_BODY_DAYS`` (90) after it was
  written, once the mail is settled (sent, skipped or given up); the row stays for the audit.

``titanpost admin purge --dry-run`` lists what would go; the scheduler runs the purge every
night (:mod:`app.features.clock.scheduler`). Running it twice, or in two processes at once,
does no harm: each step acts only on what is still there.
"""
