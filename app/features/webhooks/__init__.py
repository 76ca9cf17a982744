"""Webhooks: a game's news posted to a chat service or any address its creator gives
(:mod:`.hooks`: adding and listing them, the rows written with a move, their shapes and
signatures, the sender; :mod:`.pages`: adding and removing them on the game's set-up page;
:mod:`.api`: the same in the JSON API)."""
