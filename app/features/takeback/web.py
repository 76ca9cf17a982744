"""Takebacks on the web: the signed link from the mail, the game page's forms and the API.

``/t/<token>``: a GET shows the request and changes nothing (mail scanners open every link);
its POST form (with a CSRF token) answers it. The link is signed with the answering seat's own
secret: it answers for that seat only, and a browser that plays another seat of the game cannot
use it. Once answered, the link is used: the same link again is refused as already answered.
See :mod:`app.features.takeback.takebacks` for the rules.
"""

from __future__ import annotations

from typing import Any

from apiflask import APIBlueprint
from flask import (
    Blueprint,
    Flask,
    current_app,
    flash,
    g,
    redirect,
    render_template,
    request,
    url_for,
)
from flask.typing import ResponseReturnValue

from app.core.i18n import N_
from app.features.takeback.takebacks import Takebacks, install, read_token
from app.service import BadRequest, Forbidden, NotFound, ServiceError
from app.web.api.access import optional_seat, seat_auth
from app.web.api.access import seat_in as token_seat_in
from app.web.api.schemas import answers
from app.web.browser_seats import remember_seat, seat_in, service
from app.web.errors import asked_language
from app.web.inputcheck import whole_number
from app.web.linktokens import LinkError, peek
from app.web.pages.language import lang, pick_lang, tr

pages = Blueprint("takeback", __name__)
api = APIBlueprint("takeback_api", __name__, url_prefix="/api", tag="Takeback")

LINK_REFUSED = {
    "malformed": N_("This link is damaged: perhaps the mail program cut it in two or changed it. "
                    "Nothing was changed. Copy the whole link from the mail, or open the game."),
    "forged": N_("This link is forged: its signature does not match, so this server did not "
                 "make it for this seat. Nothing was changed."),
    "expired": N_("This link has expired. Nothing was changed; open the game to see what is "
                  "pending now."),
    "other-seat": N_("This link belongs to another player's seat, but this browser plays "
                     "another seat in this game. A link cannot act for someone else, so nothing "
                     "was changed."),
}


def takebacks() -> Takebacks:
    return install(service())


def install_page_context(app: Flask) -> None:
    """Give the game page's template the pending request of a game (``takeback_of``) and why
    a seat cannot ask for one now (``takeback_refusal``)."""
    app.context_processor(lambda: {"takeback_of": _pending_of,
                                   "takeback_refusal": _refusal_of})


def _refusal_of(uid: str, position: int) -> str | None:
    """Why seat ``position`` cannot ask to take back its last move, in the page's language
    (the button is then shown disabled with it), or None."""
    try:
        refused = takebacks().refusal(uid, position)
    except ServiceError:
        return None
    return None if refused is None else refused.say(g.get("lang"))


def _pending_of(uid: str) -> dict[str, Any] | None:
    """The request waiting in game ``uid`` (for the game page's template), or None."""
    try:
        return takebacks().pending(uid)
    except ServiceError:
        return None


# ------------------------------------------------------------------ the signed link


class _LinkRefused(Exception):
    def __init__(self, message: str, uid: str | None = None, status: int = 403) -> None:
        super().__init__(message)
        self.message, self.uid, self.status = message, uid, status


def _verified(token: str) -> tuple[str, int, int, str]:
    """The game, seat, request and the seat's language a link names, checked."""
    try:
        payload = peek(token)
    except LinkError:
        raise _LinkRefused(tr(LINK_REFUSED["malformed"]), status=400) from None
    uid, position = payload.get("g"), payload.get("s")
    if not isinstance(uid, str) or type(position) is not int:
        raise _LinkRefused(tr(LINK_REFUSED["malformed"]), status=400)
    try:
        seat = service().link_seat(uid, position)
    except NotFound:
        raise _LinkRefused(tr(LINK_REFUSED["forged"]), status=404) from None
    g.lang = pick_lang(seat.language)
    try:
        link = read_token(token, current_app.config["SECRET_KEY"], seat.secret)
    except ValueError as exc:
        raise _LinkRefused(tr(LINK_REFUSED[str(exc)]), uid, 400 if str(exc) == "malformed"
                           else 403) from None
    if link.game != uid or link.seat != position:
        raise _LinkRefused(tr(LINK_REFUSED["forged"]), uid)
    mine = seat_in(uid)
    if mine is not None and mine != position:
        raise _LinkRefused(tr(LINK_REFUSED["other-seat"]), uid)
    return uid, position, link.takeback, seat.language


def _refused_page(refusal: _LinkRefused) -> ResponseReturnValue:
    page = render_template("links/refused.html", reason="takeback", title=tr("Takeback"),
                           message=refusal.message, notes=[], t={"open_game": tr("Open the game")},
                           game_url=url_for("play.game", uid=refusal.uid) if refusal.uid else None,
                           lang=lang())
    return page, refusal.status


@pages.after_request
def _private(response: Any) -> Any:
    """The link's address is a credential: out of caches, indexes and Referer headers."""
    if request.path.startswith("/t/"):
        response.headers["Cache-Control"] = "no-store"
        response.headers["Referrer-Policy"] = "no-referrer"
        response.headers["X-Robots-Tag"] = "noindex, nofollow"
    return response


@pages.get("/t/<token>")
def link_page(token: str) -> ResponseReturnValue:
    """The request the link answers, with a form to agree or refuse. Changes nothing."""
    try:
        uid, position, takeback_id, _ = _verified(token)
    except _LinkRefused as refusal:
        return _refused_page(refusal)
    pending = takebacks().pending(uid)
    if pending is None or pending["id"] != takeback_id:
        return _refused_page(_LinkRefused(tr("This takeback is no longer waiting for an "
                                             "answer: nothing was changed."), uid, 409))
    if str(position) in {str(k) for k in pending["answers"]}:
        return _refused_page(_LinkRefused(tr("You have already answered this takeback."),
                                          uid, 409))
    return render_template("links/takeback.html", takeback=pending, uid=uid,
                           action=url_for("takeback.link_answer", token=token), lang=lang())


@pages.post("/t/<token>")
def link_answer(token: str) -> ResponseReturnValue:
    """Answer the request as the link's seat (every check again), then go to the game."""
    try:
        uid, position, takeback_id, _ = _verified(token)
    except _LinkRefused as refusal:
        return _refused_page(refusal)
    agree = request.form.get("answer") == "agree"
    try:
        takebacks().answer(uid, position, takeback_id, agree)
    except ServiceError as exc:
        return _refused_page(_LinkRefused(exc.say(g.get("lang")), uid, exc.status))
    remember_seat(uid, position)
    flash(tr("You agreed to the takeback.") if agree else tr("You refused the takeback."),
          "ok")
    return redirect(url_for("play.game", uid=uid), 303)


# ------------------------------------------------------------------ the game page


def _page_seat(uid: str) -> int:
    position = seat_in(uid)
    if position is None:
        service().ensure_exists(uid)
        raise Forbidden(tr("this browser has no seat in this game"))
    return position


@pages.post("/games/<uid>/takeback")
def page_ask(uid: str) -> ResponseReturnValue:
    """Ask to take back this browser's seat's last move."""
    position = _page_seat(uid)
    try:
        result = takebacks().ask(uid, position)
    except ServiceError as exc:
        flash(exc.say(g.get("lang")), "error")
        return redirect(url_for("play.game", uid=uid), 303)
    if result["takeback"]["status"] == "agreed":
        flash(tr("Your last move was taken back."), "ok")
    else:
        flash(tr("The other players have been asked to agree to your takeback."), "ok")
    return redirect(url_for("play.game", uid=uid), 303)


@pages.post("/games/<uid>/takeback/answer")
def page_answer(uid: str) -> ResponseReturnValue:
    """Agree to or refuse the pending request as this browser's seat."""
    position = _page_seat(uid)
    agree = request.form.get("answer") == "agree"
    raw = request.form.get("takeback", "")
    try:
        takeback_id = whole_number(raw, "takeback") if raw else None
        takebacks().answer(uid, position, takeback_id, agree)
    except ServiceError as exc:
        flash(exc.say(g.get("lang")), "error")
        return redirect(url_for("play.game", uid=uid), 303)
    flash(tr("You agreed to the takeback.") if agree else tr("You refused the takeback."),
          "ok")
    return redirect(url_for("play.game", uid=uid), 303)


# ------------------------------------------------------------------ the API


@api.get("/games/<uid>/takeback")
@api.doc(summary="The pending takeback", description="The request waiting for answers, or "
         "null. With a seat token also ``can_ask``, whether the seat may ask to take back its "
         "last move now, and when it may not, ``refusal``: the refusal asking would get "
         "(``error`` in English, ``message`` in the asked language), found without asking "
         "anyone.", security=[{}, {"SeatToken": []}], responses=answers(200, 401, 403, 404))
def api_pending(uid: str) -> dict[str, Any]:
    seat = optional_seat(uid)
    service().state(uid, seat)  # (a game without spectators: its seats only)
    body: dict[str, Any] = {"takeback": takebacks().pending(uid)}
    if seat is not None:
        refused = takebacks().refusal(uid, seat)
        body["can_ask"] = refused is None
        body["refusal"] = None if refused is None else {
            "error": refused.message, "message": refused.say(asked_language())}
    return body


@api.post("/games/<uid>/takeback")
@api.auth_required(seat_auth)
@api.doc(summary="Ask to take back your last move", description="Refused (400) when chance "
         "or hidden information came out since, when your last move is no longer the last, "
         "when there is nothing to take back or a request is already pending.",
         responses=answers(200, 400, 401, 403, 404, 409))
def api_ask(uid: str) -> dict[str, Any]:
    return takebacks().ask(uid, token_seat_in(uid))


@api.post("/games/<uid>/takeback/answer")
@api.auth_required(seat_auth)
@api.doc(summary="Agree to or refuse the pending takeback",
         description='Body: {"agree": true|false, "takeback": id (optional)}. A seat answers '
         "once, for itself.", responses=answers(200, 400, 401, 403, 404, 409))
def api_answer(uid: str) -> dict[str, Any]:
    body = request.get_json(silent=True)
    if not isinstance(body, dict) or type(body.get("agree")) is not bool:
        raise BadRequest('the body is {"agree": true} or {"agree": false}')
    takeback_id = body.get("takeback")
    if takeback_id is not None:
        takeback_id = whole_number(takeback_id, "takeback")
    return takebacks().answer(uid, token_seat_in(uid), takeback_id, body["agree"])
