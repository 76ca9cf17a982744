"""Web Push and the installable site: the phone app (:mod:`.pages`: the manifest, the service
worker, the icons and a browser's push subscription) and the "your turn" notifications
(:mod:`.notifications`: the VAPID key, the rows written with a move, their sender)."""
