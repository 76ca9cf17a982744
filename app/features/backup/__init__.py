"""The whole database to a file and back (:mod:`.backups`: ``admin backup`` and ``admin
restore``)."""
