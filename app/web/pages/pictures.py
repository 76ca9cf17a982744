"""The board pictures mails show by address: ``GET /board/<token>.png``.

A mail names its board picture by a signed address (see :mod:`app.mail.images`); this page
draws the picture on its first request, keeps it in memory and serves it as immutable (a
state of the append-only log never changes), with an ETag. An address this server did not sign,
or one altered, is refused (403) with a line saying so, and draws nothing; an address of a game
or moment that does not exist gets 404. Nothing is changed by any request.
"""

from __future__ import annotations

from flask import Blueprint, Response, current_app, request
from flask.typing import ResponseReturnValue

from app.mail.images import PICTURE_MAX_AGE, PictureError, etag_of, read_picture_token
from app.web.browser_seats import mail_renderer

bp = Blueprint("pictures", __name__)


def _refused(status: int, message: str) -> Response:
    response = Response(message + "\n", status=status, mimetype="text/plain")
    response.headers["Cache-Control"] = "no-store"
    return response


@bp.get("/board/<token>.png")
def board(token: str) -> ResponseReturnValue:
    settings = current_app.extensions["titanpost.settings"]
    try:
        picture = read_picture_token(settings.secret_key, token)
    except PictureError as exc:
        return _refused(403, f"Refused: {exc}.")
    try:
        png = mail_renderer().picture_png(picture)
    except PictureError as exc:
        return _refused(404, f"Not found: {exc}.")
    response = Response(png, mimetype="image/png")
    response.headers["Cache-Control"] = f"public, max-age={PICTURE_MAX_AGE}, immutable"
    response.set_etag(etag_of(png))
    return response.make_conditional(request)
