"""The web application: what a browser and an API client meet. :mod:`.browser_seats` keeps
which seats a browser plays in its signed session cookie."""
