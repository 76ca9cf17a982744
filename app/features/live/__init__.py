"""Pages that follow their game: a live connection per open page (:mod:`.pages`), told by the
feed of changed games (:mod:`.feed`), and the seats that have their game open (:mod:`.presence`),
for whom mail and push wait."""
