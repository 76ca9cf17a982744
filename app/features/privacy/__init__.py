"""A player's own data and leaving (issue 41): "My data" downloads everything the server holds
about a signed-in address (:mod:`.mydata`); "Forget me" removes the address and keeps the games
it played whole and verifiable for the others (:mod:`.forget`). The page (:mod:`.pages`) and the
JSON API (:mod:`.api`) serve both; docs/privacy.md says what is kept and for how long."""
