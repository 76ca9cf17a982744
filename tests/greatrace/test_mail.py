"""Mail for The Great Race, on SQLite and PostgreSQL, delivered to a real SMTP server: the plan
mail reaches every planning seat at once; one seat seals its plan by a signed link (GET shows
it, POST seals), one by replying ``plan P2 M2 S1``, the third gets the computer's plan on
timeout; no mail shows another crew's sealed plan or secret hand; the board is inline; a Polish
seat reads Polish; the race goes on by mail to its prestige scores (on SQLite: on PostgreSQL it
stops once the plans are revealed, as what follows is the same mail rendering, a PNG drawn for
nearly every mail, and the same database work as before)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from email.message import EmailMessage
from email.utils import make_msgid
from html import unescape
from typing import Any

import pytest

from app import create_app
from app.features.chat import messages as chat
from app.games.ui import game_ui
from app.mail.inbound import process_inbound
from app.mail.inbound_queue import queue_inbound
from app.mail.notify import resend_current
from app.service import TIMEOUT
from tests.test_mail_out import BASE, Post, Smtp, links, parts, settings_for, smtp  # noqa: F401

ANN, BOLEK, CYRYL = "ann@example.com", "bolek@example.com", "cyryl@example.com"
PEOPLE = (ANN, BOLEK, CYRYL)


@pytest.fixture
def race(migrated_database_url: str, smtp: Smtp) -> Iterator[tuple[Post, Any]]:  # noqa: F811
    app = create_app(settings_for(migrated_database_url, smtp.url))
    app.config["TESTING"] = True
    post = Post(app.extensions["titanpost.service"], smtp)
    yield post, app.test_client()
    post.service.engine.dispose()


def start_race(post: Post) -> str:
    game = post.service.create_game(
        seats=[{"email": ANN, "name": "Ann"}, {"email": BOLEK, "name": "Bolek", "language": "pl"},
               {"email": CYRYL, "name": "Cyryl"}],
        name="Sahara", seed=4, circuits=["alger"], rules_name="great-race")
    post.send()  # the invitations
    for invitation in game["invitations"]:
        post.service.accept(invitation["invite_token"])
    post.service.start(game["game"], game["creator_token"])
    return str(game["game"])


def mails(post: Post, to: str, kind: str | None = None) -> list[EmailMessage]:
    assert post.smtp is not None
    return [m for m in post.smtp.inbox.mails(to) if kind is None or m["X-Titan-Post-Kind"] == kind]


def body(msg: EmailMessage) -> str:
    text, html, _ = parts(msg)
    return text + "\n" + unescape(html)


def crews(post: Post, uid: str) -> dict[int, str]:
    return {s["position"]: s["titans"][0] for s in post.service.state(uid, None)["game"]["seats"]}


def full_view(post: Post, uid: str) -> dict[str, Any]:
    with post.service.session() as s:
        loaded = post.service.load(s, uid)
        view: dict[str, Any] = loaded.rules.view(loaded.state, None, False)
        return view


def secret_cards(post: Post, uid: str, reader: int) -> set[str]:
    """Cards in other crews' hands that the reader has no public way of knowing of: in none
    of the reader's hand, the market, the discard pile or any public input of the log."""
    view = full_view(post, uid)
    crew_of = crews(post, uid)
    public = set(view["crews"][crew_of[reader]]["hand"]) | set(view["market"])
    public |= set(view["discard"])
    for move in post.service.log(uid, reader)["moves"]:
        public |= set(re.findall(r"[a-z]+(?:-[a-z]+)*", str(move.get("input", ""))))
    hidden: set[str] = set()
    for position, crew in crew_of.items():
        if position != reader:
            hidden |= set(view["crews"][crew]["hand"]) - public
    return hidden


def check_no_secrets(post: Post, uid: str, seen: dict[int, int]) -> int:
    """Every mail each seat received since the last check names no card only another crew
    may know of (in English or Polish); returns how many such cards were looked for."""
    ui = game_ui("great-race")
    looked = 0
    for position, email in enumerate(PEOPLE):
        received = mails(post, email)
        hidden = secret_cards(post, uid, position)
        looked += len(hidden)
        names = {ui.card_name(card, lang) for card in hidden for lang in ("en", "pl")}
        for msg in received[seen.get(position, 0):]:
            text = body(msg)
            # (a name followed by ":" heads an action line, "Name: what it does", not a hand)
            given = [name for name in names if re.search(rf"\b{re.escape(name)}\b(?!:)", text)]
            assert not given, (msg["Subject"], given)
        seen[position] = len(received)
    return looked


def answer(post: Post, uid: str) -> None:
    """The computer's answer for the first seat that owes one (its own plan in a planning)."""
    position = post.to_act(uid)[0]
    with post.service.session() as s:
        loaded = post.service.load(s, uid)
        option = loaded.rules.bot_move(loaded.state, position)
    post.service.submit(uid, position, loaded.seq, option)


def to_planning(post: Post, uid: str) -> None:
    for _ in range(40):
        if len(post.to_act(uid)) > 1:
            return
        answer(post, uid)
    raise AssertionError("no planning phase")


def confirm_and_post(client: Any, link: str) -> Any:
    page = client.get(link.removeprefix(BASE))
    assert page.status_code == 200, page.get_data(as_text=True)[:500]
    html = page.get_data(as_text=True)
    form = re.search(r'<form[^>]*method="post"[^>]*action="([^"]*)"', html)
    token = re.search(r'name="csrf_token" value="([^"]+)"', html)
    assert form is not None and token is not None
    return page, unescape(form.group(1)) or link.removeprefix(BASE), token.group(1)


def reply(post: Post, to_msg: EmailMessage, sender: str, text: str) -> Any:
    msg = EmailMessage()
    msg["From"] = f"Player <{sender}>"
    msg["To"] = str(to_msg["Reply-To"])
    msg["Subject"] = f"Re: {to_msg['Subject']}"
    msg["Message-ID"] = make_msgid(domain="example.com")
    msg["In-Reply-To"] = str(to_msg["Message-ID"])
    msg["References"] = str(to_msg["Message-ID"])
    msg.set_content(f"{text}\n\nOn Monday Titan Post wrote:\n> {to_msg['Subject']}\n")
    raw = msg.as_bytes()
    queue_inbound(post.service.engine, post.settings, str(to_msg["Reply-To"]), raw,
                  sender=sender)
    return process_inbound(post.service)


def test_a_race_by_mail(race: tuple[Post, Any], migrated_database_url: str) -> None:
    post, client = race
    uid = start_race(post)
    invitation = mails(post, ANN, "invitation")[0]
    assert "The Great Race" in body(invitation) and "Alger" in body(invitation)
    seen: dict[int, int] = {}
    post.send()
    started = body(mails(post, ANN)[-1])
    assert "Alger" in started
    check_no_secrets(post, uid, seen)
    to_planning(post, uid)
    post.send()
    crew_of = crews(post, uid)
    plan_mails = {p: mails(post, email, "plan") for p, email in enumerate(PEOPLE)}
    assert all(len(found) == 1 for found in plan_mails.values()), plan_mails
    for position, (found,) in plan_mails.items():
        text, html, images = parts(found)
        assert len(images) == 1 and images[0].get_content().startswith(b"\x89PNG")
        assert f'cid:{images[0]["Content-ID"].strip("<>")}' in html
        assert "plan P1 M2 S1 F1" in text
        assert len(links(text, "l")) == 3 and links(text, "g")
        assert f"plan {crew_of[position]}" not in text  # the reply lines name no crew
    polish = plan_mails[1][0]
    assert polish["Content-Language"] == "pl" and "zaplanuj asystentów" in polish["Subject"]
    assert "PROPONOWANE PLANY" in parts(polish)[0]
    assert "Plan your assistants" in parts(plan_mails[0][0])[0]
    check_no_secrets(post, uid, seen)

    # Ann plays a suggested plan by its link: the GET page changes nothing, the POST seals it
    link = links(parts(plan_mails[0][0])[0], "l")[1]
    page, action, token = confirm_and_post(client, link)
    assert "plan" in page.get_data(as_text=True).lower()
    assert post.service.state(uid, None)["game"]["sealed"] == []
    answered = client.post(action, data={"csrf_token": token})
    assert answered.status_code in (302, 303), answered.get_data(as_text=True)[:500]
    assert post.service.state(uid, None)["game"]["sealed"] == [0]
    ann_plan = post.service.state(uid, 0)["sealed"]

    # the others are mailed their decision again while Ann's plan is sealed: it is not there
    resend_current(post.service, uid)
    post.send()
    check_no_secrets(post, uid, seen)
    for position in (1, 2):
        again = body(mails(post, PEOPLE[position], "plan")[-1])
        assert ann_plan not in again and f"plan {crew_of[0]}" not in again
    assert not mails(post, ANN, "plan")[1:]  # Ann has answered: no second plan mail

    # Bolek replies with a plan without his crew; a wrong reply first gets the legal ones
    outcomes = reply(post, plan_mails[1][0], BOLEK, "drive")
    assert [o.result for o in outcomes] == ["illegal"]
    post.send()
    refused = parts(mails(post, BOLEK, "reply-error")[-1])[0]
    assert f"plan {crew_of[1]} P1 M2 S1 F1" in refused
    outcomes = reply(post, plan_mails[1][0], BOLEK, "plan P2 M2 S1")
    assert [o.result for o in outcomes] == ["applied"], outcomes
    assert post.service.state(uid, None)["game"]["sealed"] == [0, 1]

    # Cyryl's time runs out: the computer seals a plan for him and all are revealed together
    decision = post.service.state(uid, None)["decision_seq"]
    post.service.act_for(uid, 2, decision, mode="bot", actor=TIMEOUT)
    view = post.service.state(uid, None)["view"]
    assert view["phase"] == "convoy"
    assert view["crews"][crew_of[1]]["assistants"] == {"P": 2, "M": 2, "S": 1, "F": 0}

    # the race goes on by mail to its end
    kinds: set[str] = set()
    post.send()
    looked = check_no_secrets(post, uid, seen)
    if migrated_database_url.startswith("postgresql"):
        assert {m["X-Titan-Post-Kind"] for m in mails(post, ANN)} >= {"plan", "turn"}
        return
    for _ in range(3000):
        state = post.service.state(uid, None)
        if state["game"]["status"] != "active":
            break
        if any(p in state["game"]["to_act"] for p in range(3)):
            post.send()
            kinds |= {m["X-Titan-Post-Kind"] for e in PEOPLE for m in mails(post, e)}
            looked += check_no_secrets(post, uid, seen)
        answer(post, uid)
    post.send()
    check_no_secrets(post, uid, seen)
    assert looked > 0  # secret cards were there to be given away, and were not
    assert {"take", "plan", "turn"} <= kinds, kinds
    over = mails(post, ANN, "game_over")
    assert len(over) == 1
    text, html, images = parts(over[0])
    assert "PRESTIGE" in text and "Prestige" in html and len(images) == 1
    # nothing is left to answer: no footer telling how to reply with a plan
    assert "plan P2 M2 S1" not in text and "plan P2 M2 S1" not in unescape(html)
    assert "You get this mail because you play in" in text
    # the prestige of the finishing place is not a place ("place 5" for the winner's 5)
    lines = text.split("PRESTIGE", 1)[1].strip().splitlines()
    assert lines and all("(place " not in line for line in lines), lines
    # (the first to arrive, wherever its prestige ranks it)
    assert any(re.search(r": \d+ \(5 for arriving 1\., \d+ for the engine, ", line)
               for line in lines), lines
    assert "PRESTIŻ" in parts(mails(post, BOLEK, "game_over")[0])[0]
    turn = mails(post, CYRYL, "turn")[0]
    assert "convoy sequence" in turn["Subject"] and len(parts(turn)[2]) == 1


def test_a_plan_sealed_by_a_link_is_answered_as_sealed(race: tuple[Post, Any]) -> None:
    """A plan is secret until every plan is in: its link page does not speak of chance, and
    once confirmed the player reads that the plan is sealed, not that a move was played."""
    post, client = race
    uid = start_race(post)
    to_planning(post, uid)
    post.send()
    (plan_mail,) = mails(post, ANN, "plan")
    link = links(parts(plan_mail)[0], "l")[0]
    page, action, token = confirm_and_post(client, link)
    shown = unescape(page.get_data(as_text=True))
    assert "depends on chance" not in shown
    assert "Nobody sees it until every answer is in" in shown, shown
    answered = client.post(action, data={"csrf_token": token})
    assert answered.status_code == 303
    assert post.service.state(uid, None)["game"]["sealed"] == [0]
    game_page = unescape(client.get(answered.headers["Location"]).get_data(as_text=True))
    assert "was played" not in game_page
    assert "Sealed: " in game_page and "Nobody sees it until every answer is in" in game_page


def test_a_mistyped_move_in_a_reply_is_refused_not_chat(race: tuple[Post, Any]) -> None:
    """A reply line that starts with a move word is a move attempt: when it is no legal input
    ("go Z99") it is refused with the legal ones, and nothing reaches the public chat; words
    that are no move attempt are still the chat's."""
    post, _ = race
    uid = start_race(post)
    to_planning(post, uid)
    post.send()
    crew_of = crews(post, uid)
    (plan_mail,) = mails(post, BOLEK, "plan")
    outcomes = reply(post, plan_mail, BOLEK, "go Z99")
    assert [o.result for o in outcomes] == ["illegal"], outcomes
    post.send()
    refused = parts(mails(post, BOLEK, "reply-error")[-1])[0]
    assert "go Z99" in refused and f"plan {crew_of[1]} P1 M2 S1 F1" in refused, refused
    assert post.service.state(uid, None)["game"]["sealed"] == []
    assert not chat.read(post.service, uid, 1)["messages"]
    outcomes = reply(post, plan_mail, BOLEK, "Go team, good luck everyone!")
    assert [o.result for o in outcomes] == ["chat"], outcomes
    assert [m["text"] for m in chat.read(post.service, uid, 1)["messages"]] == [
        "Go team, good luck everyone!"]
