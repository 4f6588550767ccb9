"""fast_init: the same constructor as the dataclass's own, only cheaper; copier."""

from __future__ import annotations

import copy
import dataclasses
import pickle
from datetime import UTC, datetime
from typing import Any

import pytest

from taskgui.core.fast_init import TWIN_FROM, copier, fast_init
from taskgui.core.task import Command, TaskSpec


def _sample(fast: bool, wide: bool) -> type[Any]:
    """The same class, with the dataclass's ``__init__`` or with fast_init's; ``wide``
    gives it enough fields to be built through its twin."""

    @dataclasses.dataclass(frozen=True, slots=True)
    class Narrow:
        a: int
        b: str = "b"
        c: tuple[int, ...] = dataclasses.field(default=(), kw_only=True)

        def __post_init__(self) -> None:
            if self.a < 0:
                raise ValueError("a must not be negative")
            object.__setattr__(self, "b", self.b.strip())

    @dataclasses.dataclass(frozen=True, slots=True)
    class Wide:
        a: int
        b: str = "b"
        c: tuple[int, ...] = dataclasses.field(default=(), kw_only=True)
        d: float = dataclasses.field(default=0.5, kw_only=True)
        e: object = dataclasses.field(default=None, kw_only=True)

        def __post_init__(self) -> None:
            if self.a < 0:
                raise ValueError("a must not be negative")
            object.__setattr__(self, "b", self.b.strip())

    cls: type[Any] = Wide if wide else Narrow
    assert (len(dataclasses.fields(cls)) >= TWIN_FROM) is wide
    return fast_init(cls) if fast else cls


PAIRS = [(_sample(False, wide), _sample(True, wide)) for wide in (False, True)]
ARGS = [((1,), {}), ((1, " x "), {}), ((), {"a": 2, "b": "y", "c": (3,)}), ((4,), {"c": (5, 6)})]


@pytest.mark.parametrize(("plain_cls", "fast_cls"), PAIRS)
@pytest.mark.parametrize(("args", "kwargs"), ARGS)
def test_it_builds_what_the_dataclass_builds(
    plain_cls: type[Any], fast_cls: type[Any], args: tuple[Any, ...], kwargs: dict[str, Any]
) -> None:
    plain, fast = plain_cls(*args, **kwargs), fast_cls(*args, **kwargs)
    assert type(fast) is fast_cls
    assert dataclasses.astuple(fast) == dataclasses.astuple(plain)
    assert fast_cls.__init__.__code__ is not plain_cls.__init__.__code__


@pytest.mark.parametrize(("plain_cls", "fast_cls"), PAIRS)
@pytest.mark.parametrize(
    ("args", "kwargs"),
    [((), {}), ((1, "b", (2,)), {}), ((1,), {"z": 1}), ((1,), {"a": 1}), ((-1,), {})],
)
def test_it_refuses_what_the_dataclass_refuses(
    plain_cls: type[Any], fast_cls: type[Any], args: tuple[Any, ...], kwargs: dict[str, Any]
) -> None:
    with pytest.raises((TypeError, ValueError)) as plain_error:
        plain_cls(*args, **kwargs)
    with pytest.raises(plain_error.type) as fast_error:
        fast_cls(*args, **kwargs)
    assert str(fast_error.value) == str(plain_error.value)


@pytest.mark.parametrize("fast_cls", [fast for _, fast in PAIRS])
def test_the_instance_stays_frozen_and_of_its_class(fast_cls: type[Any]) -> None:
    sample = fast_cls(1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        sample.a = 2
    assert dataclasses.replace(sample, a=3) == fast_cls(3)
    assert copy.deepcopy(sample) == sample
    assert type(sample) is fast_cls and isinstance(sample, fast_cls)


def test_a_copy_replaces_one_field_and_keeps_the_rest() -> None:
    _, wide = PAIRS[1]
    original = wide(1, " x ", c=(2,), d=1.5, e="e")
    copied = copier(wide, "a")(original, 9)
    assert type(copied) is wide and copied is not original
    assert dataclasses.astuple(copied) == (9, "x", (2,), 1.5, "e")
    with pytest.raises(dataclasses.FrozenInstanceError):
        copied.a = 2
    with pytest.raises(TypeError, match="one of its fields"):
        copier(wide, "nothing")


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


def test_a_task_spec_built_so_pickles_and_copies_like_any_other() -> None:
    spec = TaskSpec(
        name="n", command=Command(line="true"), first_run_at=datetime(2026, 1, 1, tzinfo=UTC)
    )
    assert pickle.loads(pickle.dumps(spec)) == spec
    assert copy.deepcopy(spec) == spec and type(spec.with_id(3)) is TaskSpec
