"""Leaving a game's mail with one click (:mod:`.links`: the List-Unsubscribe address, its
confirm page and the one-click POST a mail provider sends)."""
