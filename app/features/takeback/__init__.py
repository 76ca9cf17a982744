"""Takebacks: a player asks to take back their own last move and the other players agree
(:mod:`.takebacks`: the rules and commands; :mod:`.web`: the signed link, the game page's form
and the API)."""
