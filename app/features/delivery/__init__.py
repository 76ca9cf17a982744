"""Mail that arrives, and a player who cannot be reached is seen: each mail's envelope sender
names it (:mod:`.verp`), the delivery status notifications that come back are read (:mod:`.dsn`)
and the state of each address is kept (:mod:`.standing`): delivered, bouncing, undeliverable."""
