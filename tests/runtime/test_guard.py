"""never_raises: a failing slot is logged with its traceback and returns its default."""

from __future__ import annotations

import logging

import pytest
from PySide6.QtCore import QObject, Signal

from taskgui.runtime.guard import never_raises


class _BoomError(RuntimeError):
    pass


class _Source(QObject):
    fired = Signal(int)


class _Target:
    def __init__(self) -> None:
        self.seen: list[int] = []

    @never_raises("counting the rows", default=0)
    def row_count(self, fail: bool) -> int:
        if fail:
            raise _BoomError("row count exploded")
        return 7

    @never_raises
    def on_fired(self, value: int) -> None:
        self.seen.append(value)
        if value < 0:
            raise _BoomError(f"negative {value}")


def test_a_failure_is_logged_with_its_traceback_and_the_default_returned(
    caplog: pytest.LogCaptureFixture,
) -> None:
    target = _Target()
    with caplog.at_level(logging.ERROR):
        assert target.row_count(False) == 7
        assert target.row_count(True) == 0
    (record,) = caplog.records
    assert record.name == __name__  # the wrapped function's own module logger
    assert "counting the rows failed" in record.getMessage()
    assert record.exc_info is not None and record.exc_info[0] is _BoomError
    assert "row count exploded" in caplog.text


def test_bare_use_names_the_function_and_a_qt_signal_goes_on(
    caplog: pytest.LogCaptureFixture,
) -> None:
    source, target = _Source(), _Target()
    source.fired.connect(target.on_fired)
    with caplog.at_level(logging.ERROR):
        source.fired.emit(-1)  # raises inside the slot: nothing reaches Qt
        source.fired.emit(2)
    assert target.seen == [-1, 2]
    assert "_Target.on_fired failed" in caplog.text
    assert "negative -1" in caplog.text


def test_keyboard_interrupt_is_not_swallowed() -> None:
    @never_raises("waiting")
    def interrupted() -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        interrupted()
