"""JSON error responses: every refusal is ``{"error": message, ...}`` with a fitting status."""

from __future__ import annotations

import io
import logging
from typing import Any

from apiflask import APIFlask
from apiflask.exceptions import HTTPError
from flask import Response, current_app, g, make_response, render_template, request
from sqlalchemy.exc import InterfaceError, OperationalError
from werkzeug.exceptions import HTTPException, RequestEntityTooLarge

from app.core.i18n import LANGUAGES, N_, translate
from app.service import ServiceError, Unauthorized, WrongCreatorToken
from app.web.browser_seats import browser_language
from app.web.inputcheck import UnusableInput, refuse_unusable_input

DATABASE_AWAY = ("the server cannot reach its database right now; nothing was changed: "
                 "try again in a minute")
RETRY_AFTER_SECONDS = 30
UNKNOWN_FIELD = "Unknown field."  # marshmallow's word for a key its schema does not know

log = logging.getLogger("titanpost.errors")


TOO_LARGE = N_("The request body is too large: the limit is {limit} bytes, so nothing was "
                "read and nothing was changed.")
TOO_LARGE_TITLE = N_("Too much data")
BODY_UNREADABLE = N_("This request's body could not be read whole: it was cut short, or its "
                     "chunks are malformed. Nothing was changed: send it again.")
DATABASE_AWAY_TITLE = N_("The server is catching its breath")
DATABASE_AWAY_PAGE = N_("The server cannot reach its database right now; nothing was changed: "
                        "try again in a minute.")


def too_large(limit: int | None, lang: str | None = None) -> str:
    """What a request whose body is over TITANPOST_MAX_BODY_BYTES is told (in ``lang``: a
    page's; the API's refusal is English)."""
    return translate(lang, TOO_LARGE, limit=limit)


def refuse_large_bodies() -> None:
    """A request whose body is over the limit is refused (413) before anything else looks at
    it: its credentials, its form's CSRF token, the rate limits.

    The body is read here, whole, before anything else reads it, and handed on to the request
    from memory. A body sent in chunks has no Content-Length; werkzeug would read it up to the
    limit and silently stop there, so that a form cut short could still be acted on: it is
    read up to one byte past the limit, and refused when it goes on. A body that cannot be read
    whole (its chunks malformed, or the client gone before its end: gunicorn would hand on what
    came as if it were all) is refused with 400 (:data:`BODY_UNREADABLE`)."""
    limit = current_app.config.get("MAX_CONTENT_LENGTH")
    if limit is None:
        return
    declared = request.content_length
    if declared is not None and declared > limit:
        raise RequestEntityTooLarge(too_large(limit))
    chunked = declared is None and request.environ.get("wsgi.input_terminated")
    if (declared or chunked) and _read_body(limit, declared) > limit:
        raise RequestEntityTooLarge(too_large(limit))


def _read_body(limit: int, declared: int | None) -> int:
    """Read the body (the ``declared`` bytes, or with no length up to ``limit`` + 1) and hand it
    on to the request as one of known length; its length, or ``limit`` + 1 when it is longer.
    Raise :class:`UnusableInput` when it cannot be read whole."""
    environ = request.environ
    stream = environ["wsgi.input"]
    wanted = limit + 1 if declared is None else declared
    parts: list[bytes] = []
    size = 0
    try:
        while size < wanted:
            part = stream.read(wanted - size)
            if not part:
                break
            parts.append(part)
            size += len(part)
    except Exception as exc:  # (each server its own: werkzeug's OSError and ClientDisconnected,
        raise _unreadable() from exc  # gunicorn's InvalidChunkSize, NoMoreData...)
    if declared is not None and size < declared:
        raise _unreadable()
    if size <= limit:
        environ["wsgi.input"] = io.BytesIO(b"".join(parts))
        environ["CONTENT_LENGTH"] = str(size)
    return size


def _unreadable() -> UnusableInput:
    return UnusableInput("the request body could not be read whole: it ended before its "
                         "length, or its chunked encoding is malformed: nothing was changed",
                         words=(BODY_UNREADABLE, {}))


def _wants_json() -> bool:
    return request.path.startswith("/api/") or request.accept_mimetypes.best == "application/json"


def _wants_page() -> bool:
    """A browser's request for a page (it prefers HTML to JSON), not one of the API."""
    return (not request.path.startswith("/api/") and request.accept_mimetypes.best_match(
        ("application/json", "text/html")) == "text/html")


def asked_language() -> str:
    """The language of an error page no view chose one for: ``?lang=``, else the browser's
    ``Accept-Language``, else English."""
    asked = request.args.get("lang")
    return asked if asked in LANGUAGES else browser_language() or "en"


NO_PAGE_TITLE = N_("Not found")
NO_PAGE = N_("There is no page at this address: check the link, or start from the home page.")


OTHER_TITLE = N_("Something went wrong")
NOT_ANSWERED = N_("This address cannot answer this request: check the link, or go back and "
                  "use the page's buttons and forms.")
SERVER_FAILED = N_("Something went wrong on the server, and this request could not be "
                   "answered. Try again in a minute; if it keeps happening, tell the server's "
                   "administrator.")


def _no_page(code: int = 404) -> tuple[str, int]:
    """The page a browser gets for an address that names nothing, or for a request no view
    answered (a method the address does not take, a failure): the API keeps JSON."""
    lang = g.lang = asked_language()
    title, message = ((NO_PAGE_TITLE, NO_PAGE) if code == 404 else
                      (OTHER_TITLE, SERVER_FAILED if code >= 500 else NOT_ANSWERED))
    return render_template("pages/error.html", status=code, back=None, lang=lang,
                           title=translate(lang, title),
                           message=translate(lang, message)), code


def register_json_errors(app: APIFlask) -> None:
    checks = app.before_request_funcs.setdefault(None, [])
    checks[:0] = [refuse_large_bodies, refuse_unusable_input]

    @app.errorhandler(OperationalError)
    @app.errorhandler(InterfaceError)
    def database_away(exc: Exception) -> Response:
        """The database went away (restart, network): 503 with Retry-After. The connection
        pool drops broken connections, so requests recover by themselves once it is back."""
        log.warning("database unavailable: %s", type(exc).__name__)
        if _wants_json():
            response = make_response({"error": DATABASE_AWAY}, 503)
        else:
            lang = g.lang = asked_language()
            response = make_response(render_template(
                "pages/error.html", status=503, title=translate(lang, DATABASE_AWAY_TITLE),
                message=translate(lang, DATABASE_AWAY_PAGE), back=None, lang=lang), 503)
        response.headers["Retry-After"] = str(RETRY_AFTER_SECONDS)
        return response

    @app.errorhandler(UnusableInput)
    def unusable_input(exc: UnusableInput) -> tuple[dict[str, Any] | str, int]:
        """The input check's refusal where no blueprint words it (the API: JSON; a signed
        link's or an unsubscribe page: the error page, in the asked language)."""
        if _wants_json():  # (said in the asked language too, as a player's refusal is)
            return {"error": exc.message, "message": exc.say(asked_language())}, exc.status
        lang = asked_language()
        return render_template("pages/error.html", status=exc.status, back=None, lang=lang,
                               title=translate(lang, "This request cannot be used"),
                               message=exc.say(lang)), exc.status

    @app.errorhandler(ServiceError)
    def service_error(exc: ServiceError) -> tuple[dict[str, Any], int, dict[str, str]]:
        if isinstance(exc, Unauthorized | WrongCreatorToken):
            g.refused_credential = True  # counted by the login rate limit (app/web/limits.py)
        body = {"error": exc.message, **exc.extra}
        if exc.words is not None:  # (a player's refusal: said in the asked language too)
            body["message"] = exc.say(asked_language())
        wait = exc.extra.get("retry_after")
        return body, exc.status, {"Retry-After": str(wait)} if wait else {}

    @app.error_processor
    def http_error(exc: HTTPError) -> tuple[dict[str, Any], int, Any]:
        body: dict[str, Any] = {"error": _message(exc)}
        if exc.detail:
            body["detail"] = exc.detail
        return body, exc.status_code, exc.headers

    @app.errorhandler(HTTPException)
    def werkzeug_error(exc: HTTPException) -> tuple[dict[str, Any] | str, int]:
        code = exc.code or 500
        if (code == 404 or code == 405 or code >= 500) and _wants_page():
            return _no_page(code)
        if code == 400 and request.mimetype == "application/json":
            return {"error": "the request body is not valid JSON: send one JSON object"}, code
        if code == 413:
            limit = app.config.get("MAX_CONTENT_LENGTH")
            if not _wants_json():  # a form of a link page or a web page
                lang = g.lang = asked_language()
                return render_template("pages/error.html", status=413, back=None, lang=lang,
                                       title=translate(lang, TOO_LARGE_TITLE),
                                       message=too_large(limit, lang)), code
            return {"error": too_large(limit)}, code
        return {"error": exc.description or exc.name}, code


def _problems(detail: Any, path: str = "") -> list[tuple[str, list[str]]]:
    """Each field a validation detail refuses, as a path such as 'seats[0].emial', with its
    messages (marshmallow's: "Unknown field." for a key its schema does not know)."""
    if isinstance(detail, list):
        messages = [message for message in detail if isinstance(message, str)]
        return [(path, messages)] if path and messages else []
    if not isinstance(detail, dict):
        return []
    found: list[tuple[str, list[str]]] = []
    for key, inner in detail.items():
        if not path and key in ("json", "form", "query"):
            step = ""
        elif isinstance(key, int) or str(key).isdigit():
            step = f"{path}[{key}]"
        else:
            step = f"{path}.{key}" if path else str(key)
        found += _problems(inner, step)
    return found


def _message(exc: HTTPError) -> str:
    if exc.status_code == 400 and exc.detail:
        problems = _problems(exc.detail)
        unknown = [f"'{path}'" for path, messages in problems if UNKNOWN_FIELD in messages]
        if unknown:
            return (f"the request is not valid: unknown key {', '.join(unknown)} "
                    "(see detail for each field)")
        if problems:  # (the first named; a field's words as marshmallow's, in a clause)
            path, messages = problems[0]
            said = messages[0].rstrip(".")
            return (f"the request is not valid: '{path}': {said[:1].lower()}{said[1:]} "
                    "(see detail for each field)")
        return "the request is not valid: see detail for each field"
    if exc.status_code == 400 and request.mimetype == "application/json":
        return "the request body is not valid JSON: send one JSON object"
    if exc.status_code == 413:
        return "the request body is too large"
    if exc.status_code == 401:
        return "authentication needed: send 'Authorization: Bearer <API token>'"
    return str(exc.message)
