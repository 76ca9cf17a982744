"""A game's chat: the players' words to each other, on the page, by the command line and in replies
to mail (:mod:`.messages`: posting, reading and the checks on a message; :mod:`.api`: its routes
in the JSON API)."""
