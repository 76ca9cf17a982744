"""A cached property without a lock, for the engines' hot paths.

:func:`functools.cached_property` takes a lock on every read until Python 3.12, which costs the
searching players several per cent of a rollout (the easy player reads its cached properties
hundreds of thousands of times a decision). :class:`cached` is what 3.12's is: a plain
non-data descriptor that stores the value in the instance's ``__dict__`` on the first read,
so every later read is an ordinary attribute lookup that never reaches the descriptor.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, Self, TypeVar, overload

T = TypeVar("T")


class cached(Generic[T]):
    """``@cached`` on a method (lower case: a decorator, like ``cached_property``): computed
    once per instance, on the first read."""

    def __init__(self, func: Callable[[Any], T]) -> None:
        self.func = func
        self.name = func.__name__
        self.__doc__ = func.__doc__

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, instance: None, owner: type | None = None) -> Self: ...

    @overload
    def __get__(self, instance: object, owner: type | None = None) -> T: ...

    def __get__(self, instance: object | None, owner: type | None = None) -> T | Self:
        if instance is None:
            return self
        value = self.func(instance)
        instance.__dict__[self.name] = value
        return value
