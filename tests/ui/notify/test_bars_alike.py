"""The window's three bars (a run's failure, nobody running the schedule, a lost
connection) build their labels one way (``build_bar``): plain text, a title that
wraps (a long task name or several hosts must not widen the window: only the
connection's wrapped before), a message that can be selected and copied.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFrame
from pytestqt.qtbot import QtBot

from taskgui.ui.notify.banner import Banner
from taskgui.ui.window.connection_banner import ConnectionBanner
from taskgui.ui.window.schedule_banner import NoSchedulerBanner

BARS: dict[str, Callable[[], QFrame]] = {
    "failure": Banner,
    "no scheduler": NoSchedulerBanner,
    "connection": lambda: ConnectionBanner("db.example/tasks"),
}


@pytest.mark.parametrize("kind", list(BARS))
def test_every_bar_has_plain_wrapping_labels(qtbot: QtBot, kind: str) -> None:
    bar = BARS[kind]()
    qtbot.addWidget(bar)
    title, message = bar.title_label, bar.message_label  # type: ignore[attr-defined]
    assert title.textFormat() == message.textFormat() == Qt.TextFormat.PlainText
    assert title.wordWrap() and message.wordWrap()
    assert title.font().bold() and not message.font().bold()
    assert message.textInteractionFlags() & Qt.TextInteractionFlag.TextSelectableByMouse
