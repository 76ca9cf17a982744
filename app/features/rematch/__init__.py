"""The rematch of a finished game (:mod:`.rematches`: making it, seating each player in their own
seat; :mod:`.pages`: the game page's and the game-over mail's rematch, a player taking their
seat; :mod:`.api`: the same in the JSON API)."""
