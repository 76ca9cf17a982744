"""Webhooks: a game's news posted to a chat service or any address its creator gives
(:mod:`.hooks`: adding and listing them, the rows written with a move, their shapes and
signatures, the sender)."""
