"""A seat's deadlines as a calendar feed (:mod:`.feed`: the signed .ics address and its events)."""
