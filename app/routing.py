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
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from apiflask import APIFlask
from werkzeug.routing import Rule

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


class TitanPostFlask(APIFlask):
    """The app's class: APIFlask with :class:`SharedBuilderRule` for its rules."""

    url_rule_class = SharedBuilderRule
