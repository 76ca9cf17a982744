"""The app's URL rules build the same URLs as werkzeug's own, their builders made once per
process for each shape of rule (app/web/routing.py)."""

from __future__ import annotations

import secrets
from pathlib import Path

from apiflask import APIFlask
from werkzeug.routing import IntegerConverter, Map, Rule

from app import create_app
from app.core.config import Settings
from app.web.routing import SharedBuilderRule


def _app(tmp_path: Path, name: str) -> APIFlask:
    return create_app(Settings.from_env({
        "TITANPOST_DATABASE_URL": f"sqlite:///{tmp_path / name}",
        "TITANPOST_SECRET_KEY": secrets.token_hex(16)}))


def _values(rule: Rule) -> dict[str, object]:
    """A value for each of the rule's arguments, of the kind its converter takes."""
    return {name: 7 if isinstance(converter, IntegerConverter) else f"v-{name} /?&"
            for name, converter in rule._converters.items()}


def test_every_rule_builds_the_url_werkzeugs_own_rule_builds(tmp_path: Path) -> None:
    app = _app(tmp_path, "a.db")
    stock = Map(converters=app.url_map.converters, strict_slashes=app.url_map.strict_slashes)
    ours = list(app.url_map.iter_rules())
    assert ours and all(isinstance(rule, SharedBuilderRule) for rule in ours)
    for rule in ours:
        twin = Rule(rule.rule, defaults=rule.defaults, endpoint=f"twin-{rule.endpoint}",
                    methods=rule.methods, subdomain=rule.subdomain, host=rule.host)
        stock.add(twin)
        values = _values(rule)
        assert type(twin._build) is type(rule._build)
        assert rule.build(values) == twin.build(values), rule.rule
        with_extra = {**values, "extra": "a b", "more": ["1", "2"]}
        assert rule.build(with_extra) == twin.build(with_extra), rule.rule
        assert rule.build(with_extra, append_unknown=False) == twin.build(
            with_extra, append_unknown=False), rule.rule


def test_a_second_app_shares_the_builders_and_builds_its_own_urls(tmp_path: Path) -> None:
    first, second = _app(tmp_path, "a.db"), _app(tmp_path, "b.db")
    firsts = {rule.endpoint: rule for rule in first.url_map.iter_rules()}
    for rule in second.url_map.iter_rules():
        other = firsts[rule.endpoint]
        assert rule._build.__func__ is other._build.__func__  # made once
        assert rule._build.__self__ is rule  # bound to its own rule
        values = _values(rule)
        assert rule.build(values) == other.build(values)
    with second.test_request_context():
        from flask import url_for

        uid = "0" * 32
        assert url_for("api.submit_move", uid=uid) == f"/api/games/{uid}/moves"


def test_a_rule_whose_default_cannot_be_a_key_is_compiled_as_werkzeugs_own() -> None:
    ours = SharedBuilderRule("/x/<name>", defaults={"opts": ["a"]}, endpoint="x")
    stock = Rule("/x/<name>", defaults={"opts": ["a"]}, endpoint="x")
    Map([ours]), Map([stock])
    assert ours.build({"name": "b", "q": "1"}) == stock.build({"name": "b", "q": "1"})
    assert ours.build({"name": "b"}) == ("", "/x/b")
    assert not any(key[1] == "/x/<name>" for key in SharedBuilderRule._builders)
