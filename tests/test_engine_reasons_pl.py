"""A refused move's reason comes in the reader's language (issue 23).

The engines word a refusal in English (a contract: scenario files, ``titanpost engine run``);
their reason is a template and fields, which the service, the game page, the API's ``message``,
and the answer to a mailed move say in Polish for a Polish player, the game words
(a Titan, a crew) in the game's Polish words. In English the reason reads as the engine's.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from flask.testing import FlaskClient
from sqlmodel import col, select

from app.core.models import OutboxMail
from app.games.errors import IllegalInputError, Reason, Word
from app.games.greatrace.describe import crew_name
from app.games.titanrace.describe import titan_name
from app.games.titanrace.engine.race import new_game
from app.mail.inbound import process_inbound
from app.mail.render import MailRenderer
from app.service import GameService
from app.service.errors import IllegalMove
from tests.apifixtures import Api, human_game
from tests.dbutil import migrated_sqlite
from tests.test_mail_out import make_post
from tests.test_pages_polish import _token
from tests.test_pseudo_locale_mail import _mail_in, _seats

pytest_plugins = ["tests.apifixtures"]

SETUP: dict[str, dict[str, Any]] = {
    "titan-race": {"circuits": ["dead-mans-lagoon"]},
    "great-race": {"circuits": ["alger"], "rules_name": "great-race"},
}
WRONG_ANSWER = {"titan-race": "end", "great-race": "pass"}
"""Valid notation that answers neither game's first decision (a Titan's pick of a die, a
crew's card from the market)."""
ENGLISH_START = {"titan-race": "'end' does not answer the pending decision: ",
                 "great-race": "'pass' does not answer the pending decision: "}
POLISH_START = {"titan-race": "„end” nie odpowiada na oczekującą decyzję: ",
                "great-race": "„pass” nie odpowiada na oczekującą decyzję: "}


def _refused(service: GameService, game: str) -> tuple[IllegalMove, str]:
    """The refusal of the wrong answer by the seat to act, and the Titan or crew it names."""
    created = human_game(service, **SETUP[game])
    uid = created["game"]
    state = service.state(uid, None)
    acting = state["game"]["to_act"][0]
    pending = state["view"]["pending"]
    with pytest.raises(IllegalMove) as refused:
        service.submit(uid, acting, int(state["seq"]), WRONG_ANSWER[game])
    return refused.value, str(pending.get("titan") or pending.get("crew"))


def test_the_engine_keeps_its_english_and_gives_the_template() -> None:
    race = new_game(["grinder", "rassik", "craken"], circuits=["dead-mans-lagoon"], seed=1)
    with pytest.raises(IllegalInputError) as refused:
        race.apply("end")
    reason = refused.value.reason
    assert isinstance(reason, Reason)
    assert reason.template == "'{input}' does not answer the pending decision: {decision}"
    assert str(refused.value) == refused.value.message == str(reason)
    titan = race.pending()["titan"]  # type: ignore[index]
    assert str(reason) == ("'end' does not answer the pending decision: "
                           f"{titan} must pick a die")
    decision = reason.fields["decision"]
    assert isinstance(decision, Reason) and decision.fields["titan"] == Word("titan", titan)


@pytest.mark.parametrize("game", sorted(SETUP))
def test_a_refusal_is_said_in_polish_and_as_the_engine_in_english(
        service: GameService, game: str) -> None:
    exc, who = _refused(service, game)
    assert exc.message.startswith(ENGLISH_START[game])
    assert exc.say("en") == exc.message
    polish = exc.say("pl")
    assert polish.startswith(POLISH_START[game]), polish
    assert "must" not in polish and "does not" not in polish
    if game == "titan-race":
        assert f"{titan_name(who, 'pl')} musi wybrać kość" in polish
    else:
        assert crew_name(who, "pl").lower() in polish and "wziąć kartę z targu" in polish


def test_the_game_page_explains_a_refused_move_in_polish(api: Api) -> None:
    table = api.create([{"email": f"p{i}@example.com", "language": "pl"} for i in range(3)])
    players: dict[int, FlaskClient] = {}
    for position, token in table.invitations.items():
        players[position] = api.app.test_client()
        page = players[position].get(f"/join/{token}")
        taken = players[position].post(f"/join/{token}", data={"csrf_token": _token(page.text)})
        assert taken.status_code == 303
    api.start(table)
    acting = api.to_act(table.uid)[0]
    seq = api.service.options(table.uid, acting)["seq"]
    mover = players[acting]
    page = mover.get(f"/games/{table.uid}")
    refused = mover.post(f"/games/{table.uid}/move", data={
        "csrf_token": _token(page.text), "seq": str(seq), "option": "end"})
    assert refused.status_code == 422
    assert "nie odpowiada na oczekującą decyzję" in refused.text
    assert "musi wybrać kość" in refused.text and "does not answer" not in refused.text


def test_the_api_says_a_refusal_in_the_asked_language(api: Api) -> None:
    table = api.new_started()
    acting, options = api.actor(table)
    seq = options["seq"]
    answers = {}
    for language in ("pl", "en"):
        response = api.client.post(
            f"/api/games/{table.uid}/moves", json={"expected_seq": seq, "input": "end"},
            headers={**table.seat(acting), "Accept-Language": language})
        assert response.status_code == 422
        answers[language] = response.get_json()
    assert answers["pl"]["error"] == answers["en"]["error"] == answers["en"]["message"]
    assert answers["pl"]["error"].startswith("'end' does not answer the pending decision")
    assert answers["pl"]["message"].startswith(POLISH_START["titan-race"])


@pytest.mark.parametrize("game", sorted(SETUP))
def test_a_mailed_move_refused_is_answered_in_polish(tmp_path: Path, game: str) -> None:
    with migrated_sqlite(tmp_path) as url:
        post = make_post(url, None, TITANPOST_MAIL_IMAGES="link")
        try:
            created = post.new_game(seats=[{"email": "ann@example.com", "language": "pl"},
                                           {"email": "bolek@example.com", "language": "pl"},
                                           {"bot": True}],
                                    name="Wyścig", seed=0, **SETUP[game])
            uid = str(created["game"])
            acting = post.service.state(uid, None)["game"]["to_act"][0]
            _, seats = _seats(post, uid)
            _mail_in(post, uid, seats[acting], WRONG_ANSWER[game])
            process_inbound(post.service, confirm=True)
            renderer = MailRenderer(post.service)
            with post.service.session() as s:
                rows = s.exec(select(OutboxMail).where(OutboxMail.kind == "reply-error")
                              .order_by(col(OutboxMail.id))).all()
                texts = [renderer.render(row, always=True, session=s).text for row in rows]
        finally:
            post.service.engine.dispose()
    assert len(texts) == 1
    assert POLISH_START[game] in texts[0], texts[0]
    assert "does not answer" not in texts[0] and " must " not in texts[0]



UNUSABLE_INPUTS = {"": "the input is empty", "   ": "the input is empty",
                   "move " + "S" * 600: "longer than 500 characters",
                   "pick\u0007red": "control character"}
"""Inputs refused before any engine reads them, and (part of) the English of each refusal."""


@pytest.mark.parametrize("text", sorted(UNUSABLE_INPUTS))
def test_an_input_refused_before_the_engine_is_said_in_the_asked_language(
        api: Api, text: str) -> None:
    """The API's ``error`` stays English; its ``message`` (which the CLI shows) is in the
    asked language."""
    table = api.new_started()
    acting, options = api.actor(table)
    answers = {}
    for language in ("pl", "en"):
        response = api.client.post(
            f"/api/games/{table.uid}/moves", json={"expected_seq": options["seq"], "input": text},
            headers={**table.seat(acting), "Accept-Language": language})
        assert response.status_code == 400, response.get_json()
        answers[language] = response.get_json()
    assert UNUSABLE_INPUTS[text] in answers["pl"]["error"]
    assert answers["pl"]["error"] == answers["en"]["error"]
    assert UNUSABLE_INPUTS[text] in answers["en"]["message"]
    polish = answers["pl"]["message"]
    assert UNUSABLE_INPUTS[text] not in polish and "input" not in polish, polish


@pytest.mark.parametrize("text", ["", "move " + "S" * 600])
def test_the_game_page_says_an_empty_or_long_input_in_polish(api: Api, text: str) -> None:
    table = api.create([{"email": f"p{i}@example.com", "language": "pl"} for i in range(3)])
    players: dict[int, FlaskClient] = {}
    for position, token in table.invitations.items():
        players[position] = api.app.test_client()
        page = players[position].get(f"/join/{token}")
        taken = players[position].post(f"/join/{token}", data={"csrf_token": _token(page.text)})
        assert taken.status_code == 303
    api.start(table)
    acting = api.to_act(table.uid)[0]
    seq = api.service.options(table.uid, acting)["seq"]
    mover = players[acting]
    page = mover.get(f"/games/{table.uid}")
    refused = mover.post(f"/games/{table.uid}/move", data={
        "csrf_token": _token(page.text), "seq": str(seq), "text": text})
    assert refused.status_code == 400, refused.text
    assert UNUSABLE_INPUTS[text] not in refused.text and "the input" not in refused.text
    assert "wybierz jedną z opcji" in refused.text.lower(), refused.text


MISTYPED = ["fly away", "move", "move XYZQ", "go Z99", "pick purple", "plan french P9",
            "plan P2 M2 S1 X1", "take gide", "end; fly", "place p1 Z99", "play", "go",
            "buy petrol 99", ";", "P2 M2 S1", "plan Q5", "trap", "start Z9"]
"""Inputs an engine's notation refuses (or its rules), in both games."""


@pytest.mark.parametrize("game", sorted(SETUP))
def test_no_refusal_of_a_mistyped_input_shows_the_engines_english(
        service: GameService, game: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """In the pseudo-locale every word of a refusal is a catalogue message's, but the input
    itself: a notation error (English inside the engine) is read as "not a move this game
    knows", and a rule's reason through its template."""
    from app.core import i18n
    from tests.test_pseudo_locale import CLOSE, OPEN, _Pseudo

    monkeypatch.setattr(i18n, "_translations", lambda lang: _Pseudo())
    created = human_game(service, **SETUP[game])
    uid = created["game"]
    for text in MISTYPED:
        state = service.state(uid, None)
        acting = state["game"]["to_act"][0]
        try:
            service.submit(uid, acting, int(state["seq"]), text)
        except IllegalMove as exc:
            said, english = exc.say("pl"), exc.message
        else:
            continue  # (a legal input in this game now: nothing to say)
        outside = re.sub(f"{OPEN}[^{CLOSE}]*{CLOSE}", " ", said)
        words = set(re.findall(r"[^\W\d_]{2,}", outside)) - set(re.findall(r"\w+", text))
        assert not words, (text, said, english)
