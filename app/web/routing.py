"""The app's URL rules: werkzeug's, with each rule's URL builders compiled once per process.

werkzeug compiles two Python functions for every rule it binds (building the rule's URL, with
and without extra query arguments): it builds their syntax tree and calls ``compile`` on it,
about half a millisecond a rule. With some 120 rules that is most of what making the app costs
(``create_app``: 70 ms on a slow machine), paid again by every app made in one process: the
test suite makes thousands, and every ``titanpost`` command that needs the app makes one.

A builder depends only on the rule's shape (its text, the parts werkzeug traced from it, its
defaults, whether unknown arguments are appended); it reads everything else through the rule it
is bound to when it runs. So the functions are kept by that shape and bound to each new rule, as
werkzeug binds the ones it makes. A rule whose shape cannot be a key (a default that cannot be
hashed) is compiled as werkzeug does.

Its ``int`` converter takes only the numbers a database column holds (app/core/integers.py): an id
in the path beyond them names nothing, a 404, rather than a query the database refuses.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from apiflask import APIFlask
from werkzeug.datastructures import ImmutableDict
from werkzeug.routing import IntegerConverter, Map, Rule, ValidationError

from app.core.integers import COLUMN_DIGITS, COLUMN_MAX, COLUMN_MIN

Builder = Callable[..., tuple[str, str]]


class SharedBuilderRule(Rule):
    """A werkzeug rule whose URL builders are shared with every rule of the same shape."""

    _builders: ClassVar[dict[tuple[Any, ...], Builder]] = {}

    def _compile_builder(self, append_unknown: bool = True) -> Builder:
        try:
            key = self._builder_key(append_unknown)
            made = self._builders.get(key)
        except TypeError:  # (a default that cannot be hashed)
            return super()._compile_builder(append_unknown)
        if made is None:
            made = self._builders[key] = super()._compile_builder(append_unknown)
        return made

    def _builder_key(self, append_unknown: bool) -> tuple[Any, ...]:
        defaults = self.defaults or {}
        converters = tuple(sorted((name, type(converter), converter.to_url(defaults[name]))
                                  for name, converter in self._converters.items()
                                  if name in defaults))
        return (append_unknown, self.rule, tuple(self._trace),
                tuple(sorted(defaults.items())), converters)


class ColumnIntConverter(IntegerConverter):
    """werkzeug's ``int`` converter, matching only numbers a column holds: without a ``min``
    and ``max`` of its own, from :data:`~app.core.integers.COLUMN_MIN` (unsigned, as werkzeug's:
    from 0) to :data:`~app.core.integers.COLUMN_MAX`. Beyond them the rule does not match, and the
    address is a 404 as any that names nothing; a number of more digits than the largest has
    is not even converted."""

    def __init__(self, map: Map, fixed_digits: int = 0, min: int | None = None,
                 max: int | None = None, signed: bool = False) -> None:
        super().__init__(map, fixed_digits, COLUMN_MIN if min is None else min,
                         COLUMN_MAX if max is None else max, signed)

    def to_python(self, value: str) -> Any:
        if len(value.lstrip("-0")) > COLUMN_DIGITS:
            raise ValidationError()
        return super().to_python(value)


class ColumnIntMap(Map):
    """werkzeug's URL map, its ``int`` converter held to a column's range."""

    default_converters = ImmutableDict({**Map.default_converters, "int": ColumnIntConverter})


class TitanPostFlask(APIFlask):
    """The app's class: APIFlask with :class:`SharedBuilderRule` for its rules, in a
    :class:`ColumnIntMap`."""

    url_rule_class = SharedBuilderRule
    url_map_class = ColumnIntMap
