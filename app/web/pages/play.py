"""The game page with its turn composer, a move, an option's preview, the log, resigning."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from flask import (
    Response,
    current_app,
    flash,
    g,
    redirect,
    render_template,
    request,
    url_for,
)
from flask.typing import ResponseReturnValue
from markupsafe import Markup

from app.core.models import ACTIVE, OPEN, Game, Seat
from app.core.readertime import zone_of
from app.features.chat import messages as chat
from app.features.clock.arithmetic import (
    ClockSettings,
)
from app.features.clock.rows import QUICK_TIMEOUT_KIND, TIMEOUT_KINDS
from app.features.delivery.table import bouncing_since
from app.features.live.marks import marks_of
from app.games.base import ChainStop
from app.games.placings import result_rows, your_place
from app.service import (
    Forbidden,
    GameMovedOn,
    NotFound,
    ServiceError,
    pause_reason_timeout,
)
from app.web.api.access import keeper
from app.web.browser_seats import seat_in, service
from app.web.inputcheck import whole_number
from app.web.pages.common import (
    TIMEOUT_ACTION_WORDS,
    FormProblem,
    boards_of,
    creator_token,
    duration,
    game_rows,
    local_time,
    page_blueprint,
    pause_words,
    seat_rows,
    utc_time,
)
from app.web.pages.gamewords import (
    card_info,
    decision_heading,
    describe_input,
    grouped,
    option_entries,
    ui,
    waiting_for,
)
from app.web.pages.language import (
    lang,
    pick_lang,
    tr,
)
from app.web.pages.log import log_rows

bp = page_blueprint("play")
LOG_ON_GAME_PAGE = 12
CHAT_ON_GAME_PAGE = 30


# ---------------------------------------------------------------------------- the game page


def _game_context(uid: str) -> dict[str, Any]:
    game, seat_list = game_rows(uid)
    position = seat_in(uid)
    if position is not None and position not in {s.position for s in seat_list}:
        position = None
    language = next((s.language for s in seat_list if s.position == position), None)
    g.lang = pick_lang(language)
    zone = reader_zone(seat_list, position)
    svc = service()
    state = svc.state(uid, position)
    summary = state["game"]
    seats = seat_rows(game, seat_list, summary)
    view: dict[str, Any] | None = state.get("view")
    boards = boards_of(game)
    to_act = summary["to_act"] if summary["status"] == ACTIVE else []
    context: dict[str, Any] = {
        "game": game,
        "summary": summary,
        "seats": seats,
        "position": position,
        "view": view,
        "to_act": to_act,
        "creator": creator_token(uid) is not None,
        "seq": summary["seq"],
        "settings": game.settings,
        "composer": None,
        "hand": [],
        "rows": [],
        "game_name": game.ruleset,
        "boards": ui(game.ruleset).setup_titles(game.setup),
        "sealed": describe_input(state["sealed"]) if state.get("sealed") else None,
        "sealed_seats": summary.get("sealed") or [],
        "board": None,
        "waiting": None,
        "chat": chat.read(svc, uid, position, limit=CHAT_ON_GAME_PAGE),
        "chat_max": chat.MAX_CHAT_CHARS,
        "zone": zone,
        "notation_example": ui(game.ruleset).notation_example,
        "live_stream": url_for("live.game_stream", uid=uid),
        "live_mark": marks_of(svc, [uid]),
        "bouncing": _bouncing(game, seat_list, seats, position, zone),
        **_clock_context(game, seat_list, summary, seats, position),
        **_result_context(state.get("result"), game.ruleset, seats, position),
    }
    if view is None:
        return context
    context["board"] = Markup(ui().board_svg(view, boards, lang=lang()))
    context["panel_facts"] = Markup(ui().panel_facts(view, boards, lang()))
    context["rows"] = ui().rows(view, seats, position, context["sealed_seats"])
    if position is not None:
        mine = next((s for s in seats if s["position"] == position), None)
        hands = ui().hands(view)
        for piece in mine["pieces"] if mine else []:
            context["hand"].extend({**card_info(c), "piece": piece} for c in hands.get(piece, []))
    pending = view.get("pending")
    # a paused game takes no moves, except the answer of the seat whose timeout paused it
    held = summary.get("paused") and (
        position is None or summary.get("pause_reason") != pause_reason_timeout(position))
    if position is not None and position in to_act and isinstance(pending, dict) and not held:
        opts = svc.options(uid, position)
        kind = str((opts["pending"] or pending).get("kind"))
        context["composer"] = {
            "form": composer_form(game.ruleset, kind),
            "heading": decision_heading(opts["pending"] or pending),
            "piece": ui().decider(opts["pending"]),
            "seq": opts["seq"],
            "groups": grouped(
                option_entries(uid, position, opts["options"], view, boards, opts["seq"])
            ),
        }
    else:
        context["waiting"] = waiting_for(pending, seats, to_act)
    moves = svc.log(uid, position)["moves"]
    context["log"] = list(reversed(log_rows(moves[-LOG_ON_GAME_PAGE:], seats, zone)))
    context["log_more"] = len(moves) > LOG_ON_GAME_PAGE
    return context


def _bouncing(game: Game, seat_list: list[Seat], seats: list[dict[str, Any]],
              position: int | None, zone: str | None) -> list[dict[str, Any]]:
    """The seats of a game not over whose player's mail bounces (app/features/delivery/): the
    name and since when, for every reader (spectators too: it is no hidden information of the
    game); ``mine`` marks the reader's own, which links to their settings."""
    if game.status not in (OPEN, ACTIVE):
        return []
    with service().session() as s:
        since = bouncing_since(s, seat_list)
    names = {seat["position"]: seat["name"] for seat in seats}
    return [{"name": names.get(at, "?"), "mine": at == position,
             "since": utc_time(moment.isoformat()),
             "since_local": local_time(moment.isoformat(), zone)}
            for at, moment in sorted(since.items())]


def _result_context(result: dict[str, Any] | None, game_name: str, seats: list[dict[str, Any]],
                    position: int | None) -> dict[str, Any]:
    """A finished game's results table and the reader's own place, as the API gives them."""
    words = ui(game_name)
    if not result:
        return {"results": [], "you_placed": None, "piece_heading": words.piece_heading}
    names = {seat["position"]: seat["name"] for seat in seats}
    pieces = {seat["position"]: seat["pieces"] for seat in seats}
    return {
        "results": result_rows(result["places"], words, names, pieces, position, lang()),
        "you_placed": your_place(result["places"], position, words, lang()),
        "piece_heading": words.piece_heading,
    }


def reader_zone(seat_list: list[Seat], position: int | None) -> str | None:
    """The time zone the page's times are shown in: its seat's (a spectator's: None, UTC)."""
    return next((zone_of(s.notify) for s in seat_list if s.position == position), None)


def composer_form(game_name: str, kind: str) -> str | None:
    """The game's own form for a decision of ``kind`` (a template
    ``games/<game>/composer_<kind>.html``), when it has one instead of a list of options."""
    name = f"games/{game_name}/composer_{kind}.html"
    loader = current_app.jinja_env.loader
    return name if loader is not None and name in loader.list_templates() else None


def counted_input(form: dict[str, str]) -> str | None:
    """The input a counts form gives (``<verb> P1 M2 F2`` from ``verb`` and ``count_<box>``
    fields), None when the form is not one; FormProblem when the counts do not add up to the
    form's ``total`` (BadRequest when that is no whole number)."""
    verb = form.get("counts", "").strip()
    if not verb:
        return None
    parts: list[str] = []
    placed = 0
    for key, raw in form.items():
        if not key.startswith("count_"):
            continue
        try:
            number = int(raw.strip() or "0")
        except ValueError:
            raise FormProblem(tr("'{value}' is not a whole number", value=raw)) from None
        if number < 0:
            raise FormProblem(tr("'{value}' is not a whole number", value=raw))
        placed += number
        if number:
            parts.append(f"{key.removeprefix('count_')}{number}")
    total = whole_number(form.get("total") or "0", "total")
    if total and placed != total:
        raise FormProblem(tr("Place all {total} assistants: these numbers add up to {placed}. "
                             "Nothing was sent.", total=total, placed=placed))
    return " ".join([verb, *parts])


def _clock_context(game: Game, seat_rows: list[Seat], summary: dict[str, Any],
                   seats: list[dict[str, Any]], position: int | None) -> dict[str, Any]:
    """The clock as the game page shows it: who must act by when (in UTC, and in the viewing
    seat's time zone), the viewer's time bank, the pause and the missed deadlines."""
    clock = ClockSettings.of(game.settings).in_effect()
    viewer = next((s for s in seat_rows if s.position == position), None)
    zone_name = (viewer.notify or {}).get("timezone") if viewer is not None else None
    names = {s["position"]: s["name"] for s in seats}
    active = summary["status"] == ACTIVE
    due: list[dict[str, Any]] = []
    if active and clock["running"]:
        for row in keeper().deadlines_of(game.uid):
            if row["kind"] not in TIMEOUT_KINDS or row["seq"] != summary["decision_seq"]:
                continue
            due.append({
                "position": row["seat"],
                "name": names.get(row["seat"], "?"),
                "mine": row["seat"] == position,
                "iso": row["due_at"],
                "utc": utc_time(row["due_at"]),
                "local": local_time(row["due_at"], zone_name),
                "quick": row["kind"] == QUICK_TIMEOUT_KIND,
            })
    # the seat rows read for this page (the service's summary may hold an older copy)
    rows = {s.position: s for s in seat_rows}
    bank = viewer.bank_seconds if viewer is not None else None
    missed = [
        {"position": s["position"], "name": s["name"],
         "missed": rows[s["position"]].missed_deadlines}
        for s in seats if not s["bot"] or rows[s["position"]].missed_deadlines
    ]
    return {
        "clock": clock,
        "deadlines": due,
        "paused": bool(summary.get("paused")),
        "pause_reason": pause_words(summary.get("pause_reason"), seats),
        "bank": duration(bank) if bank is not None and active else None,
        "missed": missed,
        "zone": zone_name,
        "on_timeout_words": tr(TIMEOUT_ACTION_WORDS.get(clock["on_timeout"], "")),
    }




@bp.get("/games/<uid>")
def game(uid: str) -> ResponseReturnValue:
    return render_template("pages/game.html", **_game_context(uid))


def _refused_on_page(uid: str, status: int, say: Callable[[str], str]) -> ResponseReturnValue:
    """The game page again with a refusal on it, worded by ``say`` in the page's language once
    the page has chosen it (the viewer's seat's)."""
    context = _game_context(uid)
    return render_template("pages/game.html", error=say(lang()), error_status=status,
                           **context), status


@bp.post("/games/<uid>/move")
def move(uid: str) -> ResponseReturnValue:
    position = seat_in(uid)
    if position is None:
        service().ensure_exists(uid)
        raise Forbidden(tr("this browser has no seat in this game: join from your invitation "
                           "or open the game from the link in your mail"))
    option = (request.form.get("option") or request.form.get("text") or "").strip()
    try:
        seq = int(request.form.get("seq", ""))
    except ValueError:
        seq = -1
    try:
        option = counted_input(request.form.to_dict()) or option
        result = service().submit(uid, position, seq, option)
    except FormProblem as problem:
        worded = str(problem)  # worded when raised
        return _refused_on_page(uid, 422, lambda _lang: worded)
    except ServiceError as exc:
        if exc.status == 409 and exc.words is None:
            reason = exc.message
            return _refused_on_page(uid, 409, lambda _lang: tr(
                "The game moved on before your choice arrived: here is the game as it is now. "
                "({reason})", reason=reason))
        return _refused_on_page(uid, exc.status, exc.say)
    _, seat_list = game_rows(uid)
    g.lang = pick_lang(next((s.language for s in seat_list if s.position == position), None))
    label = describe_input(option)
    if result.get("sealed") and not result.get("already_applied"):
        flash(tr("Sealed: {label}. Nobody sees it until every answer is in.", label=label),
              "ok")
    elif result.get("already_applied"):
        flash(tr("That choice was already made: {label}.", label=label), "ok")
    elif result.get("unplayed"):
        stop = ChainStop.from_json(result["unplayed"])
        text, fields = stop.words
        flash(tr("Done: {label}.", label=describe_input(stop.played)) + " "
              + tr(text, **fields), "ok")
    else:
        flash(tr("Done: {label}.", label=label), "ok")
    return redirect(url_for("play.game", uid=uid) + "#board", 303)


@bp.post("/games/<uid>/chat")
def post_chat(uid: str) -> ResponseReturnValue:
    """Post the form's text to the game's chat as this browser's seat."""
    position = seat_in(uid)
    if position is None:
        service().ensure_exists(uid)
        raise Forbidden(tr("only the game's players may write in its chat: open the game "
                           "from the link in your mail"))
    try:
        chat.post(service(), uid, position, request.form.get("text", ""))
    except ServiceError as exc:
        return _refused_on_page(uid, exc.status, exc.say)
    return redirect(url_for("play.game", uid=uid) + "#chat", 303)


@bp.get("/games/<uid>/preview")
def preview(uid: str) -> ResponseReturnValue:
    """The board after one option of this browser's pending decision, as SVG (changes nothing).

    Options that involve chance (a roll, a shuffle) show the current board with the spaces the
    option names outlined: their result is not known before the choice is made. The page's
    script fetches it, so a refusal is plain text: an error page would take the notice of the
    move just sent (a "Done" kept in the session) that the next page is to show.
    """
    try:
        return _preview_svg(uid)
    except ServiceError as exc:
        refusal = Response(exc.say(lang()), exc.status, mimetype="text/plain")
        refusal.headers["Cache-Control"] = "no-store"
        return refusal


def _preview_svg(uid: str) -> Response:
    g.lang = pick_lang()
    position = seat_in(uid)
    if position is None:
        service().ensure_exists(uid)
        raise Forbidden(tr("only the seat whose decision it is may preview its options"))
    option = request.args.get("option", "").strip()
    svc = service()
    state = svc.state(uid, position)
    seq = request.args.get("seq")
    if seq is not None and seq != str(state["seq"]):
        raise GameMovedOn(tr("the game moved on: reload the page"))
    view = state.get("view")
    if view is None:
        raise NotFound(tr("the game has not started"))
    game_row, _ = game_rows(uid)
    boards = boards_of(game_row)
    after = svc.preview(uid, position, option)
    marks = ui().highlight(option, view, after, boards)
    svg = ui().board_svg(after if after is not None else view, boards, highlight=marks,
                         lang=lang())
    response = Response(svg, mimetype="image/svg+xml")
    # with the decision's number in the address a preview never goes stale
    response.headers["Cache-Control"] = "private, max-age=600" if seq else "no-store"
    response.headers["X-Content-Type-Options"] = "nosniff"
    return response


@bp.get("/games/<uid>/log")
def game_log(uid: str) -> ResponseReturnValue:
    game_row, seat_list = game_rows(uid)
    position = seat_in(uid)
    language = next((s.language for s in seat_list if s.position == position), None)
    g.lang = pick_lang(language)
    moves = service().log(uid, position)["moves"]
    seats = seat_rows(game_row, seat_list)
    return render_template("pages/log.html", game=game_row,
                           rows=log_rows(moves, seats, reader_zone(seat_list, position)),
                           position=position)


@bp.post("/games/<uid>/resign")
def resign(uid: str) -> ResponseReturnValue:
    position = seat_in(uid)
    if position is None:
        service().ensure_exists(uid)
        raise Forbidden(tr("this browser has no seat in this game"))
    service().resign(uid, position)
    flash(tr(ui().resigned_words), "ok")
    return redirect(url_for("play.game", uid=uid), 303)
