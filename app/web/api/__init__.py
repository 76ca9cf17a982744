"""The JSON API under ``/api/`` (OpenAPI document at ``/api/openapi.json``).

Seats authenticate with their API token (``Authorization: Bearer ...``); a game's creator with
``X-Creator-Token``; the server's admin with the ``TITANPOST_ADMIN_TOKEN`` bearer token. Errors are
JSON objects ``{"error": "...", ...}`` whose message says what to do. Every POST takes an
``Idempotency-Key`` header (see app/web/idempotency.py).

- :mod:`.access`: what every route shares (credentials, the service, safe retries);
- :mod:`.games`: the games' routes; :mod:`.admin`: the admin's;
- :mod:`.schemas`: what the OpenAPI document says of the requests and answers.

A feature's own routes (chat, rematch, webhooks, the clock, takeback, sign-in) stand in its
folder under app/features/; :func:`app.web.create_app` registers every blueprint.
"""

from __future__ import annotations

from apiflask import APIFlask

from app.web.api.access import SECURITY_SCHEMES
from app.web.api.schemas import DESCRIPTION, ErrorOut, document_refusals


def install_api(app: APIFlask) -> None:
    """What the API's OpenAPI document needs: the error schema the error handlers answer with,
    the creator token's scheme, the API's description and the refusals of every operation."""
    app.config.update(HTTP_ERROR_SCHEMA=ErrorOut, VALIDATION_ERROR_SCHEMA=ErrorOut,
                      SECURITY_SCHEMES=SECURITY_SCHEMES, DESCRIPTION=DESCRIPTION)
    app.spec_processor(document_refusals)
