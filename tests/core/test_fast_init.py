"""fast_init: the same constructor as the dataclass's own, only cheaper."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from taskgui.core.fast_init import fast_init


def _sample(fast: bool) -> type[Any]:
    """The same class, with the dataclass's ``__init__`` or with fast_init's."""

    @dataclasses.dataclass(frozen=True, slots=True)
    class Sample:
        a: int
        b: str = "b"
        c: tuple[int, ...] = dataclasses.field(default=(), kw_only=True)

        def __post_init__(self) -> None:
            if self.a < 0:
                raise ValueError("a must not be negative")
            object.__setattr__(self, "b", self.b.strip())

    return fast_init(Sample) if fast else Sample


Plain, Fast = _sample(False), _sample(True)


@pytest.mark.parametrize(
    ("args", "kwargs"),
    [((1,), {}), ((1, " x "), {}), ((), {"a": 2, "b": "y", "c": (3,)}), ((4,), {"c": (5, 6)})],
)
def test_it_builds_what_the_dataclass_builds(args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    plain, fast = Plain(*args, **kwargs), Fast(*args, **kwargs)
    assert dataclasses.astuple(fast) == dataclasses.astuple(plain)
    assert Fast.__init__.__code__ is not Plain.__init__.__code__


@pytest.mark.parametrize(
    ("args", "kwargs"),
    [((), {}), ((1, "b", (2,)), {}), ((1,), {"d": 1}), ((1,), {"a": 1}), ((-1,), {})],
)
def test_it_refuses_what_the_dataclass_refuses(
    args: tuple[Any, ...], kwargs: dict[str, Any]
) -> None:
    with pytest.raises((TypeError, ValueError)) as plain_error:
        Plain(*args, **kwargs)
    with pytest.raises(plain_error.type) as fast_error:
        Fast(*args, **kwargs)
    assert str(fast_error.value) == str(plain_error.value)


def test_the_instance_stays_frozen() -> None:
    sample = Fast(1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        sample.a = 2
    assert dataclasses.replace(sample, a=3) == Fast(3)


def test_fields_it_cannot_copy_are_refused_at_import() -> None:
    @dataclasses.dataclass(frozen=True, slots=True)
    class WithFactory:
        seen: list[str] = dataclasses.field(default_factory=list)

    with pytest.raises(TypeError, match="seen"):
        fast_init(WithFactory)

    @dataclasses.dataclass(frozen=True)
    class NoSlots:
        a: int

    with pytest.raises(TypeError, match="slotted"):
        fast_init(NoSlots)
