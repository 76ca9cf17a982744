"""Mail: notifications out (outbox, rendering, sending) and replies in."""
