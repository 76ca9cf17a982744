"""The server's features, one folder each: what a feature decides (its commands and the listener
that writes its rows in a move's transaction), its pages and API routes, beside each other.

A feature builds on the game service (:mod:`app.service`), the mail (:mod:`app.mail`) and the
core (:mod:`app.core`); the web application (:mod:`app.web`) registers its routes. Two are part
of every move and the service reads them itself: the clock's arithmetic, rows and pause words
(a decision's deadline) and fair dealing (a game's deal and its record)."""
