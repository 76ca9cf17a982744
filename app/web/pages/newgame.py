"""Creating a game, its set-up page, invitations, starting, abandoning and joining."""

from __future__ import annotations

import re
import secrets
from collections.abc import Callable
from typing import Any, Final

from flask import (
    flash,
    g,
    redirect,
    render_template,
    request,
    session,
    url_for,
)
from flask.typing import ResponseReturnValue
from sqlmodel import col, select

from app.core.i18n import LANGUAGES, N_, language_name
from app.core.integers import read_whole
from app.core.models import ACTIVE, OPEN, Game, Seat
from app.features.clock.arithmetic import (
    DEFAULT_DEADLINE_HOURS,
    DEFAULT_REACTION_HOURS,
    DEFAULT_REMINDERS,
    HANDOVERS,
    TIMEOUT_ACTIONS,
    ClockError,
    check_reminders,
)
from app.features.webhooks.hooks import FORMATS as WEBHOOK_FORMATS
from app.features.webhooks.hooks import list_webhooks
from app.games import GAMES as REGISTERED
from app.games import ruleset
from app.games.base import BOT_LEVELS, EASY, NORMAL, STRONG, SetupError
from app.service import (
    GAME_SETTINGS,
    PLAYER_NAME,
    BadRequest,
    Forbidden,
    NotFound,
    ServiceError,
    Unauthorized,
    check_quiet,
    checked_line,
    token_hash,
)
from app.web.browser_seats import remember_seat, seat_in, service
from app.web.idempotency import KeyInUse, Replay, current_store, fingerprint
from app.web.pages.common import (
    TIMEOUT_ACTION_WORDS,
    FormProblem,
    created_games,
    creator_token,
    game_rows,
    keep_created,
    page_blueprint,
    require_creator,
    seat_rows,
    time_zones,
)
from app.web.pages.gamewords import ui
from app.web.pages.language import (
    keep_lang,
    lang,
    pick_lang,
    tr,
)


def games() -> tuple[str, ...]:
    """The games the new-game form offers: every game in the registry (ruleset names), read
    when asked (a game registered later is offered too)."""
    return tuple(REGISTERED)


def max_seats() -> int:
    """The seat rows the form reads (it shows as many as the chosen game seats)."""
    return max(ruleset(name).most_seats for name in games())

bp = page_blueprint("newgame")


# ---------------------------------------------------------------------------- create and invite


def choose_game(asked: str | None) -> str:
    """The game the new-game form is for (``?game=`` or the form's ``game`` field), made the
    game whose words this request uses."""
    chosen = asked if asked in games() else games()[0]
    g.game_name = chosen
    return chosen


MY_SEAT = "my_seat"
"""The new-game form's field naming the seat (its number in the form, from 0) its creator
plays: taken at once, without an invitation; empty when the creator only sets the game up."""


def _new_game_defaults() -> dict[str, Any]:
    return {
        "game": g.get("game_name") or games()[0],
        "name": "",
        "variant": "standard",
        **ui().form_defaults(),
        "spectators": "on",
        "deadline_hours": str(DEFAULT_DEADLINE_HOURS),
        "reaction_hours": str(DEFAULT_REACTION_HOURS),
        "bank_hours": "0",
        "increment_hours": "0",
        "reminders": ", ".join(DEFAULT_REMINDERS),
        "on_timeout": "bot",
        "max_missed": "0",
        "after_missed": "computer",
        "owner_email": "",
        MY_SEAT: "0",  # (most who set a game up play in it)
        **{f"seat{i}_kind": ("human" if i < 3 else "none") for i in range(max_seats())},
    }


def _form_context(values: dict[str, Any]) -> dict[str, Any]:
    return {
        "form": values,
        "game_name": ui().name,
        "games": [(name, ui(name).title) for name in games()],
        "variants": [(v, ui().variant_name(v, lang())) for v in ui().variants],
        "boards": list(zip(ui().board_choices, ui().board_titles(ui().board_choices),
                             strict=True)),
        "pieces": ui().pieces,
        "languages": [(code, language_name(code)) for code in LANGUAGES],
        "reminders_example": ", ".join(DEFAULT_REMINDERS),
        "max_seats": ruleset(ui().name).most_seats,
        "timeout_actions": [(a, tr(TIMEOUT_ACTION_WORDS.get(a, a))) for a in TIMEOUT_ACTIONS],
        "handovers": [(h, tr(HANDOVER_CHOICE_WORDS.get(h, h))) for h in HANDOVERS],
        "bot_levels": [(level, tr(LEVEL_CHOICE_WORDS[level])) for level in BOT_LEVELS],
        "zones": time_zones(),
    }


LEVEL_CHOICE_WORDS: Final = {
    EASY: N_("easy: moves at once"),
    NORMAL: N_("normal: thinks a moment"),
    STRONG: N_("strong: a second a move"),
}
"""A computer seat's levels as the form offers them (English message ids)."""


HANDOVER_CHOICE_WORDS = {
    "computer": N_("the computer plays the seat from then on"),
    "invite": N_("the computer plays it and I invite someone new"),
}
"""What happens to a seat after too many missed deadlines (English message ids)."""
CLOCK_FIELDS = (
    ("deadline_hours", N_("the deadline")),
    ("reaction_hours", N_("the reaction time")),
    ("bank_hours", N_("the time bank")),
    ("increment_hours", N_("the increment")),
    ("max_missed", N_("the missed deadlines before a handover")),
)
"""The clock's number fields of the form and their names in a problem (message ids)."""


@bp.get("/new")
def new_game() -> ResponseReturnValue:
    g.lang = pick_lang()
    choose_game(request.args.get("game"))
    return render_template("pages/new.html", **_form_context(_new_game_defaults()))



def _int_field(form: dict[str, Any], key: str, label: str, **values: Any) -> int | None:
    """The whole number in field ``key`` (None when empty); ``label`` (a message id, filled
    from ``values``) names the field in a problem."""
    raw = str(form.get(key, "")).strip()
    if not raw:
        return None
    try:
        return int(raw)
    except ValueError:
        raise FormProblem(tr("{label} must be a whole number, not '{value}'",
                             label=tr(label, **values), value=raw)) from None


def _level_field(form: dict[str, Any], i: int) -> str:
    """Computer seat ``i``'s level as the form gives it."""
    level = str(form.get(f"seat{i}_level"))
    if level not in BOT_LEVELS:
        raise FormProblem(tr("seat {number}: choose the computer's level: {choices}",
                             number=i + 1, choices=", ".join(
                                 tr(LEVEL_CHOICE_WORDS[v]) for v in BOT_LEVELS)))
    return level


def parse_new_game(form: dict[str, Any]) -> dict[str, Any]:
    """The create_game arguments from the new-game form (raises FormProblem)."""
    variant = str(form.get("variant") or "standard")
    if variant not in ui().variants:
        raise FormProblem(tr("choose a variant: {choices}", choices=", ".join(
            ui().variant_name(v, lang()) for v in ui().variants)))
    setup = _game_fields(ui().setup_from_form, variant, form)
    seats: list[dict[str, Any]] = []
    mine = str(form.get(MY_SEAT, "")).strip()
    seated = None
    for i in range(max_seats()):
        kind = str(form.get(f"seat{i}_kind", "none"))
        if mine == str(i):
            if kind != "human":
                raise FormProblem(tr("seat {number} is not a player's seat: choose a player's "
                                     "seat as yours, or none", number=i + 1))
            seated = len(seats)
        if kind not in ("human", "computer"):
            continue
        spec: dict[str, Any] = {}
        name = str(form.get(f"seat{i}_name", "")).strip()
        if name:
            spec["name"] = _seat_name(name, i)
        spec["pieces"] = _game_fields(ui().pieces_from_form, i, form)
        _not_chosen_twice(spec["pieces"], seats)
        if kind == "computer":
            spec["bot"] = True
            if form.get(f"seat{i}_level"):  # (the page always sends one: easy by default)
                spec["level"] = _level_field(form, i)
        else:
            spec["email"] = str(form.get(f"seat{i}_email", "")).strip()
            if not spec["email"]:
                raise FormProblem(tr("seat {number}: give the player's e-mail address (or "
                                     "make it a computer player)", number=i + 1))
            spec["language"] = str(form.get(f"seat{i}_lang", "en"))
            spec.update(_seat_clock(form, i))
        seats.append(spec)
    most = ruleset(ui().name).most_seats  # the chosen game's own range, not the largest
    if not 2 <= len(seats) <= most:
        raise FormProblem(tr("a game has 2 to {n} seats: choose a player or the computer for "
                             "each", n=most))
    settings: dict[str, Any] = {"spectators": bool(form.get("spectators")), **_clock_form(form)}
    if str(form.get("seed", "")).strip():
        raise FormProblem(tr("a game's seed cannot be chosen: every game is dealt from a "
                             "secret that the server and the players draw together"))
    owner = str(form.get("owner_email", "")).strip()
    return {
        "rules_name": ui().name,
        "name": str(form.get("name", "")).strip(),
        "variant": variant,
        "setup": setup,
        "seats": seats,
        "settings": settings,
        "owner_email": owner or None,
        "seated": seated,
    }


def _game_fields(read: Callable[..., dict[str, Any]], *args: Any) -> dict[str, Any]:
    """What the game's own fields of the form give (``read(*args)``: its setup, a seat's
    pieces), a problem with them said in the page's language."""
    try:
        return read(*args)
    except SetupError as exc:
        text, fields = exc.words or (str(exc), {})
        raise FormProblem(tr(text, **fields)) from None


def _not_chosen_twice(pieces: dict[str, Any], seats: list[dict[str, Any]]) -> None:
    """A problem naming a piece in the page's language when an earlier seat of the form chose
    it too (the service would name it by its id)."""
    names = ruleset(ui().name).piece_names
    taken = {piece for seat in seats for piece in names(seat["pieces"])}
    for piece in names(pieces):
        if piece in taken:
            raise FormProblem(tr("{piece} is chosen by two seats",
                                 piece=ui().piece_name(piece, lang())))


def _seat_name(name: str, index: int) -> str:
    """A seat's name from the form, checked as the service checks it (the problem said with
    the seat's number)."""
    try:
        return checked_line(name, PLAYER_NAME)
    except BadRequest as exc:
        raise FormProblem(tr("seat {number}: {problem}", number=index + 1,
                             problem=exc.say(lang()))) from None


def _seat_clock(form: dict[str, Any], index: int) -> dict[str, str]:
    """A human seat's quiet hours and time zone from the form (both optional), checked."""
    quiet = str(form.get(f"seat{index}_quiet", "")).strip()
    zone_name = str(form.get(f"seat{index}_timezone", "")).strip()
    try:
        return check_quiet(quiet or None, zone_name or None)
    except BadRequest as exc:
        raise FormProblem(tr("seat {number}: {problem}", number=index + 1,
                             problem=exc.say(lang()))) from None


def _in_range(key: str, label: str, value: int) -> int:
    """``value`` when the service takes it for setting ``key`` (else the problem, with the
    field's ``label``, in the page's language)."""
    _, low, high = GAME_SETTINGS[key]
    if not low <= value <= high:
        raise FormProblem(tr("{label} must be between {low} and {high}", label=tr(label),
                             low=low, high=high))
    return value


def _clock_form(form: dict[str, Any]) -> dict[str, Any]:
    """The clock settings the form gives (a field left out of the form is left to the
    defaults; the service checks the ranges)."""
    settings: dict[str, Any] = {}
    for key, label in CLOCK_FIELDS:
        value = _int_field(form, key, label)
        if value is not None:
            settings[key] = _in_range(key, label, value)
    if "reminders" in form:
        points = [p.strip() for p in re.split(r"[,;\s]+", str(form["reminders"])) if p.strip()]
        try:
            settings["reminders"] = check_reminders(points)
        except ClockError as exc:
            text, fields = exc.words
            raise FormProblem(tr("reminder points: {problem}",
                                 problem=tr(text, **fields))) from None
    for key, allowed in (("on_timeout", TIMEOUT_ACTIONS), ("after_missed", HANDOVERS)):
        choice = str(form.get(key, "")).strip()
        if choice and choice not in allowed:
            raise FormProblem(tr("choose one of: {choices}", choices=", ".join(allowed)))
        if choice:
            settings[key] = choice
    deadline = settings.get("deadline_hours", DEFAULT_DEADLINE_HOURS)
    reaction = settings.get("reaction_hours")
    if deadline and reaction is not None and reaction > deadline:
        raise FormProblem(tr("the reaction time ({reaction} h) must not be longer than the "
                             "deadline ({deadline} h): shorten it, or give more time per "
                             "decision", reaction=reaction, deadline=deadline))
    return settings


@bp.post("/new")
def create_game() -> ResponseReturnValue:
    g.lang = pick_lang()
    form = request.form.to_dict()
    form["game"] = choose_game(form.get("game"))
    try:
        created = service().create_game(**parse_new_game(form))
    except (FormProblem, ServiceError) as exc:
        message = exc.say(lang()) if isinstance(exc, ServiceError) else str(exc)
        return (
            render_template("pages/new.html", error=message, **_form_context(form)),
            exc.status if isinstance(exc, ServiceError) else 400,
        )
    uid = created["game"]
    keep_created(
        uid,
        {
            "token": created["creator_token"],
            "invites": {str(i["position"]): i["invite_token"] for i in created["invitations"]},
        },
    )
    if "position" in created:  # the creator's own seat, taken at once
        remember_seat(uid, created["position"])
        flash(tr("The game is created and seat {number} is yours. Send each other player "
                 "their invitation link.", number=created["position"] + 1), "ok")
    else:
        flash(tr("The game is created. Send each player their invitation link."), "ok")
    return redirect(url_for("newgame.setup", uid=uid, **keep_lang()), 303)


def _join_link(token: str) -> str:
    return f"{service().settings.base_url}{url_for('newgame.join', token=token)}"


@bp.get("/games/<uid>/setup")
def setup(uid: str) -> ResponseReturnValue:
    game, seats = game_rows(uid)
    seated = seat_in(uid)
    g.lang = pick_lang(next((s.language for s in seats if s.position == seated), None))
    token = creator_token(uid)
    entry = created_games().get(uid) or {}
    invites = entry.get("invites") or {}
    rows = seat_rows(game, seats)
    pending = {seat.position: seat.invite_token_hash for seat in seats}
    for row in rows:
        invite = invites.get(str(row["position"]))
        row["invited"] = pending[row["position"]] is not None
        if game.status == ACTIVE:  # a seat given to someone new while the game runs
            valid = isinstance(invite, str) and pending[row["position"]] == token_hash(invite)
            row["link"] = _join_link(str(invite)) if valid else None
        else:
            row["link"] = _join_link(invite) if invite and not row["accepted"] else None
    return render_template(
        "pages/setup.html",
        game=game,
        seats=rows,
        share=_share_wanted(game, seats, seated),
        creator_token=token,
        boards=ui(game.ruleset).setup_titles(game.setup),
        waiting=[r["position"] + 1 for r in rows if not r["accepted"]],
        seated=seated,
        webhooks=list_webhooks(service(), uid, token) if token else [],
        webhook_formats=WEBHOOK_FORMATS,
        webhook_languages=[(code, language_name(code)) for code in LANGUAGES],
        webhook_example="https://discord.com/api/webhooks/...",
        bot_levels=[(level, tr(LEVEL_CHOICE_WORDS[level])) for level in BOT_LEVELS],
    )


def _share_wanted(game: Game, seats: list[Seat], seated: int | None) -> bool:
    """Whether this browser's seat of open game ``game`` was taken without its share of the deal (a
    rematch's maker): the set-up page's script then sends it (app/features/rematch/pages.py)."""
    mine = next((seat for seat in seats if seat.position == seated), None)
    return (game.status == OPEN and game.dealing_commitment is not None and mine is not None
            and not mine.is_bot and mine.accepted_at is not None and mine.contribution is None)


@bp.post("/games/<uid>/setup")
def claim_creator(uid: str) -> ResponseReturnValue:
    """Keep a creator token typed in this browser (e.g. on another device)."""
    game, _ = game_rows(uid)
    token = request.form.get("creator_token", "").strip()
    if not token or not secrets.compare_digest(game.creator_token_hash, token_hash(token)):
        raise Forbidden(tr("that is not this game's creator token"))
    keep_created(uid, {"token": token, "invites": {}})
    flash(tr("This browser now manages the game."), "ok")
    return redirect(url_for("newgame.setup", uid=uid, **keep_lang()), 303)



@bp.post("/games/<uid>/invite")
def invite(uid: str) -> ResponseReturnValue:
    token = require_creator(uid)
    position = read_whole(request.form.get("position", ""))
    if position is None:  # (no number a column holds: no seat of any game)
        raise ServiceError(tr("choose a seat to invite"))
    result = service().invite(uid, token, position, request.form.get("email", ""))
    if "invite_token" not in result:  # a rematch's seat: invited by mail alone
        flash(tr("Seat {number}'s invitation is mailed again to {email}.", number=position + 1,
                 email=result["email"]), "ok")
        return redirect(url_for("newgame.setup", uid=uid, **keep_lang()), 303)
    entry = created_games()[uid]
    invites = dict(entry.get("invites") or {})
    invites[str(position)] = result["invite_token"]
    keep_created(uid, {**entry, "invites": invites})
    flash(tr("A new invitation for seat {number} ({email}) is ready.", number=position + 1,
             email=result["email"]), "ok")
    return redirect(url_for("newgame.setup", uid=uid, **keep_lang()), 303)


@bp.post("/games/<uid>/start")
def start(uid: str) -> ResponseReturnValue:
    token = require_creator(uid)
    service().start(uid, token, fill_with_bots=bool(request.form.get("fill_with_bots")),
                    bot_level=str(request.form.get("bot_level") or EASY))
    keep_created(uid, {"token": token, "invites": {}})
    flash(tr("The race has started."), "ok")
    return redirect(url_for("play.game", uid=uid, **keep_lang()), 303)


@bp.post("/games/<uid>/abandon")
def abandon(uid: str) -> ResponseReturnValue:
    token = require_creator(uid)
    service().abandon(uid, token)
    flash(tr("The game is abandoned."), "ok")
    return redirect(url_for("play.game", uid=uid, **keep_lang()), 303)


# ---------------------------------------------------------------------------- join


def _invitation(token: str) -> tuple[Game, Seat, list[Seat]] | None:
    if not token or len(token) > 200:
        return None
    with service().session() as s:
        seat = s.exec(select(Seat).where(Seat.invite_token_hash == token_hash(token))).first()
        if seat is None:
            return None
        game = s.get(Game, seat.game_id)
        if game is None:
            return None
        seats = list(
            s.exec(select(Seat).where(Seat.game_id == game.id).order_by(col(Seat.position)))
        )
        return game, seat, seats


USED_INVITATION = N_("this invitation is unknown or was already used (a used invitation "
                      "cannot be used twice: open the game from the browser that joined, or "
                      "from the link in your mail)")
SESSION_BROWSER = "browser"
JOIN_REQUEST = fingerprint("POST", "/join", None)
"""Every accept of one invitation from one browser is the same request (the name may differ:
the first one counts)."""


def _browser() -> str:
    """A random id of this browser, kept in its session cookie from its first look at an
    invitation: the key of its accept, so that the accept can be repeated (its answer lost,
    the button pressed twice) and give the same seat, while any other browser is refused."""
    browser = session.get(SESSION_BROWSER)
    if not isinstance(browser, str) or not 20 <= len(browser) <= 64:
        browser = secrets.token_urlsafe(24)
        session[SESSION_BROWSER] = browser
    return browser


def _join_scope(token: str) -> str:
    return "join:" + token_hash(token)


def _accepted_here(token: str) -> dict[str, Any] | None:
    """What this browser's accept of invitation ``token`` answered, if it accepted it in the
    last 24 hours and the seat is still its player's (not given to someone else since)."""
    browser = session.get(SESSION_BROWSER)
    if not isinstance(browser, str) or not token or len(token) > 200:
        return None
    found = current_store().find(_join_scope(token), browser, JOIN_REQUEST)
    return found.body if found is not None and _still_theirs(found.body) else None


def _still_theirs(accepted: dict[str, Any]) -> bool:
    """Whether the seat token an accept gave is still the seat's (not revoked by a
    replacement)."""
    try:
        uid, position, _ = service().seat_for_token(str(accepted.get("api_token", "")))
    except Unauthorized:
        return False
    return (uid, position) == (accepted.get("game"), accepted.get("position"))


def _seat_of(uid: str, position: int) -> tuple[Game, Seat, list[Seat]]:
    with service().session() as s:
        game = s.exec(select(Game).where(Game.uid == uid)).one()
        seats = list(
            s.exec(select(Seat).where(Seat.game_id == game.id).order_by(col(Seat.position)))
        )
        return game, next(seat for seat in seats if seat.position == position), seats


@bp.get("/join/<token>")
def join(token: str) -> ResponseReturnValue:
    found = _invitation(token)
    again = None if found is not None else _accepted_here(token)
    if found is None and again is None:
        g.lang = pick_lang()
        raise NotFound(tr(USED_INVITATION))
    if again is not None:
        if seat_in(again["game"]) == again["position"]:
            return redirect(url_for("play.game", uid=again["game"]), 303)
        found = _seat_of(again["game"], again["position"])  # its answer was lost: take it again
    assert found is not None
    game, seat, seats = found
    _browser()
    g.lang = pick_lang(seat.language)
    g.game_name = game.ruleset
    return render_template(
        "pages/join.html",
        game=game,
        seat=seat,
        pieces=ruleset(game.ruleset).piece_names(seat.pieces),
        seats=seat_rows(game, seats),
        token=token,
        boards=ui(game.ruleset).setup_titles(game.setup),
        open=again is not None or game.status == OPEN or (game.status == ACTIVE and seat.is_bot),
        running=game.status == ACTIVE and seat.is_bot,
        already=seat_in(game.uid),
    )


@bp.post("/join/<token>")
def accept(token: str) -> ResponseReturnValue:
    """Take the seat; the same browser accepting again (its answer lost) gets the same seat
    and token again (its accept's answer is kept with its browser id, see :func:`_browser`)."""
    name = request.form.get("name", "").strip() or None
    store = current_store()
    try:
        claim = store.claim(_join_scope(token), _browser(), JOIN_REQUEST, route="/join",
                            status=201)
    except KeyInUse:
        raise KeyInUse(tr("This browser is taking the seat right now: open the invitation "
                          "again in a moment.")) from None
    if isinstance(claim, Replay):
        result = claim.body
        if not _still_theirs(result):
            raise NotFound(tr(USED_INVITATION))
    else:
        try:
            result = service().accept(token, name=name, idempotency=claim,
                                      contribution=request.form.get("contribution") or None)
        except BaseException:
            store.release(claim)
            raise
    remember_seat(result["game"], result["position"])
    found = game_rows(result["game"])[1]
    g.lang = pick_lang(next((s.language for s in found if s.position == result["position"]),
                             None))
    flash(tr("You have taken seat {position}. Welcome to the race!",
             position=result["position"] + 1), "ok")
    return redirect(url_for("play.game", uid=result["game"]), 303)
