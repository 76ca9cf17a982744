"""JSON error responses: every refusal is ``{"error": message, ...}`` with a fitting status."""

from __future__ import annotations

import logging
from typing import Any

from apiflask import APIFlask
from apiflask.exceptions import HTTPError
from flask import Response, make_response, render_template, request
from sqlalchemy.exc import InterfaceError, OperationalError
from werkzeug.exceptions import HTTPException

from .service import ServiceError

DATABASE_AWAY = ("the server cannot reach its database right now; nothing was changed: "
                 "try again in a minute")
RETRY_AFTER_SECONDS = 30

log = logging.getLogger("titanpost.errors")


def register_json_errors(app: APIFlask) -> None:
    @app.errorhandler(OperationalError)
    @app.errorhandler(InterfaceError)
    def database_away(exc: Exception) -> Response:
        """The database went away (restart, network): 503 with Retry-After. The connection
        pool drops broken connections, so requests recover by themselves once it is back."""
        log.warning("database unavailable: %s", type(exc).__name__)
        if request.path.startswith("/api/") or request.accept_mimetypes.best == "application/json":
            response = make_response({"error": DATABASE_AWAY}, 503)
        else:
            response = make_response(render_template(
                "pages/error.html", status=503, title="The server is catching its breath",
                message=DATABASE_AWAY[0].upper() + DATABASE_AWAY[1:] + ".", back=None), 503)
        response.headers["Retry-After"] = str(RETRY_AFTER_SECONDS)
        return response

    @app.errorhandler(ServiceError)
    def service_error(exc: ServiceError) -> tuple[dict[str, Any], int]:
        return {"error": exc.message, **exc.extra}, exc.status

    @app.error_processor
    def http_error(exc: HTTPError) -> tuple[dict[str, Any], int, Any]:
        body: dict[str, Any] = {"error": _message(exc)}
        if exc.detail:
            body["detail"] = exc.detail
        return body, exc.status_code, exc.headers

    @app.errorhandler(HTTPException)
    def werkzeug_error(exc: HTTPException) -> tuple[dict[str, Any], int]:
        code = exc.code or 500
        if code == 400 and request.mimetype == "application/json":
            return {"error": "the request body is not valid JSON: send one JSON object"}, code
        if code == 413:
            limit = app.config.get("MAX_CONTENT_LENGTH")
            return {"error": f"the request body is too large (the limit is {limit} bytes)"}, code
        return {"error": exc.description or exc.name}, code


def _message(exc: HTTPError) -> str:
    if exc.status_code == 400 and exc.detail:
        return "the request is not valid: see detail for each field"
    if exc.status_code == 400 and request.mimetype == "application/json":
        return "the request body is not valid JSON: send one JSON object"
    if exc.status_code == 413:
        return "the request body is too large"
    if exc.status_code == 401:
        return "authentication needed: send 'Authorization: Bearer <API token>'"
    return str(exc.message)
