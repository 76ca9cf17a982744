"""Signing in by mail: one player on every device (:mod:`.signins`: the sign-in links and codes,
the account of an address; :mod:`.api`: the API's sign-in and account routes; :mod:`.pages`:
the sign-in page, the link's confirm page, signing out)."""
