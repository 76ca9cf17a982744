"""The JSON API's games: create, list, read, move, invite, accept, start, resign, abandon, the
fairness record and the seat's share of the deal, a seat given to someone else."""


from __future__ import annotations

from typing import Any

from apiflask import APIBlueprint

from app.features.clock.keeperbase import iso_or_none
from app.features.delivery.table import game_bouncing
from app.games.apiwords import OLDER_PIECES, OLDER_SETUP, OLDER_TEAM
from app.service import (
    BadRequest,
)
from app.web.api.access import (
    CREATOR,
    MOVE_IN,
    creator_token,
    from_admin,
    idempotent,
    move_body,
    optional_seat,
    replayable,
    seat_auth,
    seat_in,
    service,
)
from app.web.api.schemas import GAME_VARIANTS as GAME_VARIANTS  # (the CLI's choices)
from app.web.api.schemas import GAMES as GAMES
from app.web.api.schemas import (
    AcceptIn,
    ContributionIn,
    CreateGameIn,
    InviteIn,
    ReplaceIn,
    StartIn,
    answers,
)
from app.web.idempotency import (
    Claim,
)

bp = APIBlueprint("api", __name__, url_prefix="/api", tag="Games")

# ---------------------------------------------------------------------- games


@bp.get("/")
@bp.doc(summary="Where things are", responses=answers(200))
def index() -> dict[str, Any]:
    return {"service": "Titan Post", "openapi": "/api/openapi.json", "docs": "/api/docs"}


@bp.post("/games")
@bp.input(CreateGameIn, arg_name="body")
@bp.output({}, status_code=201)
@bp.doc(summary="Create a game", description="Returns the creator token (keep it: it starts, "
        "invites and abandons) and one invitation token per human seat. A computer seat "
        "({\"bot\": true}) plays at its level: easy unless the seat names normal or strong "
        "({\"bot\": true, \"level\": \"strong\"}); normal and strong seats are moved by the "
        "server's worker shortly after their turn comes, never inside the request that gave "
        "it to them.",
        responses=answers(201, 400))
@idempotent(201, shape=lambda created: _with_links(created, created["invitations"]))
def create_game(body: dict[str, Any], answer: Claim | None) -> dict[str, Any]:
    if body["seed"] is not None and not from_admin():
        raise BadRequest("a game's seed cannot be chosen: every game is dealt from a secret "
                         "that the server and the players draw together (only the admin may "
                         "deal from a chosen seed, and every seat is then told)")
    return service().create_game(
        seats=body["seats"], variant=body["variant"], circuits=body["circuits"],
        setup=body["setup"],
        rules_name=body["game"],
        name=body["name"], settings=body["settings"], seed=body["seed"],
        owner_email=body["owner_email"], seated=body["creator_seat"], idempotency=answer,
    )


def _with_links(result: dict[str, Any], invitations: list[dict[str, Any]]) -> dict[str, Any]:
    """``result`` with each invitation's join link beside its token."""
    base = service().settings.base_url
    for invitation in invitations:
        invitation["link"] = f"{base}/join/{invitation['invite_token']}"
    return result


def _with_link(result: dict[str, Any]) -> dict[str, Any]:
    """An invitation (or a replaced seat's answer) with its join link, when it has one."""
    return _with_links(result, [result] if "invite_token" in result else [])


@bp.get("/games")
@bp.auth_required(seat_auth)
@bp.doc(summary="List my games", description="Every game with a seat for the token's address.",
        responses=answers(200, 401))
def my_games() -> dict[str, Any]:
    seat = seat_auth.current_user
    assert seat is not None
    return {"games": service().my_games(seat["email"])}


@bp.get("/me")
@bp.auth_required(seat_auth)
@bp.doc(summary="Who am I", description="The game, seat and address the API token belongs to.",
        responses=answers(200, 401))
def whoami() -> dict[str, Any]:
    seat = seat_auth.current_user
    assert seat is not None
    return {"game": seat["game"], "position": seat["position"], "email": seat["email"]}


@bp.get("/games/<uid>")
@bp.doc(summary="Game state", description="Your view with a seat token; without one, the "
        "spectator view (no hidden information). The game's setup is given twice: as "
        f"{OLDER_SETUP} (its older form, as a new game takes it, boards by name) and as setup "
        f"(the game's own JSON); each seat's pieces as {OLDER_PIECES} and {OLDER_TEAM}, and "
        "as pieces. Once the game is finished, result gives its ranking as the game's rules "
        "make it: places, every seat best first with its position, name, bot, pieces, place "
        "(1 for the first; seats the rules leave tied share one; null with a note, such as "
        "not_finished, for a seat the rules give none) and its score's parts (each an id and "
        "a value, as the game page, the mail and the command line word them); and you, the "
        "caller's own entry where the caller holds a seat (else null). Each seat's "
        "mail_bouncing_since: since when mail to its player bounces (null: it does not).",
        security=[{}, {"SeatToken": []}],
        responses=answers(200, 401, 403, 404))
def game_state(uid: str) -> dict[str, Any]:
    state = service().state(uid, optional_seat(uid))
    bouncing = game_bouncing(service(), uid)
    seats = [seat | {"mail_bouncing_since": iso_or_none(bouncing.get(seat["position"]))}
             for seat in state["game"]["seats"]]  # (copies: the state may be a kept one)
    return state | {"game": state["game"] | {"seats": seats}}



@bp.get("/games/<uid>/options")
@bp.auth_required(seat_auth)
@bp.doc(summary="Legal options", description="The pending decision and, when it is yours, "
        "every legal input in the notation.", responses=answers(200, 401, 403, 404))
def game_options(uid: str) -> dict[str, Any]:
    return service().options(uid, seat_in(uid))


@bp.post("/games/<uid>/moves")
@bp.auth_required(seat_auth)
@bp.input(MOVE_IN, arg_name="body", validation=False)
@move_body
@bp.doc(summary="Submit inputs", description="409 with the current state when the game moved "
        "on; 422 with the legal options (at the first input) and the index of the part refused "
        "when an input is illegal or, in a chain joined with ';', answers a decision not yours; "
        "a repeated identical submission is answered as already applied.",
        responses=answers(200, 400, 401, 403, 404, 409, 422))
@replayable()
def submit_move(uid: str, body: dict[str, Any]) -> dict[str, Any]:
    seat = seat_auth.current_user
    assert seat is not None
    if "token" in seat:
        return service().submit_as(uid, seat["token"], body["expected_seq"], body["input"])
    return service().submit(uid, seat_in(uid), body["expected_seq"], body["input"])


@bp.get("/games/<uid>/log")
@bp.doc(summary="Move log", security=[{}, {"SeatToken": []}],
        responses=answers(200, 401, 403, 404))
def game_log(uid: str) -> dict[str, Any]:
    return service().log(uid, optional_seat(uid))


@bp.post("/games/<uid>/invitations")
@bp.input(InviteIn, arg_name="body")
@bp.doc(summary="Invite a player to a seat", description="Creator only (X-Creator-Token).",
        security=CREATOR, responses=answers(201, 400, 401, 403, 404, 409))
@idempotent(201, shape=_with_link)
def invite(uid: str, body: dict[str, Any], answer: Claim | None) -> dict[str, Any]:
    return service().invite(uid, creator_token(), body["position"], body["email"],
                            idempotency=answer)


@bp.get("/games/<uid>/fairness")
@bp.doc(summary="Fair dealing", description="The game's fairness record (docs/fairness.md): "
        "while it runs, the commitment (version 2: SHA-256 of the secret with the game's id, "
        "ruleset, variant, scheme and chosen-seed flag) and the facts it covers; once it is "
        "over, to anyone (no token, spectators or not), the secret (and a chosen seed), the "
        "seats' contributions and set-up, the genesis hash and the whole log with its hash "
        "chain, its length and head, the status and the winner, to recompute every random "
        "outcome (`titanpost verify-fair`).", security=[{}, {"SeatToken": []}],
        responses=answers(200, 401, 403, 404))
def game_fairness(uid: str) -> dict[str, Any]:
    return service().fairness(uid, optional_seat(uid))


@bp.post("/invitations/accept")
@bp.input(AcceptIn, arg_name="body")
@bp.doc(summary="Accept an invitation", description="Returns the seat's API token, once: the "
        "invitation is used up. Send an Idempotency-Key to be able to ask again for the same "
        "token should the answer be lost.",
        responses=answers(201, 400, 404, 409))
@idempotent(201)
def accept(body: dict[str, Any], answer: Claim | None) -> dict[str, Any]:
    return service().accept(body["invite_token"], name=body["name"],
                            contribution=body["contribution"], idempotency=answer)


@bp.post("/games/<uid>/start")
@bp.input(StartIn, arg_name="body")
@bp.doc(summary="Start the game", description="Creator only. Seats not yet accepted may be "
        "given to computer players with fill_with_bots, at bot_level (easy when not given).",
        security=CREATOR, responses=answers(200, 400, 401, 403, 404, 409))
@idempotent()
def start(uid: str, body: dict[str, Any], answer: Claim | None) -> dict[str, Any]:
    return service().start(uid, creator_token(), fill_with_bots=body["fill_with_bots"],
                           bot_level=body["bot_level"], idempotency=answer)


@bp.post("/games/<uid>/resign")
@bp.auth_required(seat_auth)
@bp.doc(summary="Resign", description="A computer player takes over the seat.",
        responses=answers(200, 400, 401, 403, 404, 409))
@replayable()
def resign(uid: str) -> dict[str, Any]:
    return service().resign(uid, seat_in(uid))


@bp.post("/games/<uid>/abandon")
@bp.doc(summary="Abandon the game", description="Creator only.", security=CREATOR,
        responses=answers(200, 401, 403, 404, 409))
@replayable()
def abandon(uid: str) -> dict[str, Any]:
    return service().abandon(uid, creator_token())


@bp.post("/games/<uid>/contribution")
@bp.auth_required(seat_auth)
@bp.input(ContributionIn, arg_name="body")
@bp.doc(summary="Give the seat's share of the deal", description="For a seat taken without "
        "giving one (a rematch's maker, or a creator who took a seat while creating the game "
        "with creator_seat: their seat was taken before the game's commitment existed), while "
        "the game has not started, once: the randomness its client drew after reading the "
        "commitment (see docs/fairness.md). A rematch whose every player has said yes starts "
        "then (started: true).",
        responses=answers(200, 400, 401, 403, 404, 409))
@idempotent()
def contribute(uid: str, body: dict[str, Any], answer: Claim | None) -> dict[str, Any]:
    given = service().contribute(uid, seat_in(uid), body["contribution"], idempotency=answer)
    return {**given, "started": service().start_when_ready(uid)}


@bp.post("/games/<uid>/seats/<int:position>/replace")
@bp.input(ReplaceIn, arg_name="body")
@bp.doc(summary="Give a seat of a running game to someone else", description="Creator only. "
        "With email: an invitation for a new player (the computer plays the seat until it is "
        "accepted); with computer: true, the computer plays the seat from now on. The old "
        "player's token and links stop working. position counts from 0 (seat 1 is 0).",
        security=CREATOR,
        responses=answers(200, 400, 401, 403, 404, 409))
@idempotent(shape=_with_link)
def replace_seat(uid: str, position: int, body: dict[str, Any],
                 answer: Claim | None) -> dict[str, Any]:
    email = (body["email"] or "").strip() or None
    if email is not None and body["computer"]:
        raise BadRequest("give either an email (a new player is invited) or computer: true "
                         "(the computer plays the seat), not both")
    if email is None and not body["computer"]:
        raise BadRequest("give the new player's email, or computer: true to let the computer "
                         "play the seat")
    return service().replace_seat(uid, creator_token(), position, email, level=body["level"],
                                  idempotency=answer)
