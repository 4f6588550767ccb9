"""Notices: their wording, the in-window banner, and the D-Bus message without a bus."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QWidget
from pytestqt.qtbot import QtBot

from taskgui.core.events import RetryScheduled, TaskExhausted
from taskgui.core.states import RunOutcome
from taskgui.ui.notify.banner import Banner
from taskgui.ui.notify.dbus_notifier import (
    SIGNATURE,
    DBusNotifier,
    NotifyCall,
    Sender,
    busctl_arguments,
    find_sender,
    gdbus_arguments,
    gvariant_string,
    notify_call,
    parse_notification_id,
)
from taskgui.ui.notify.notifier import (
    BannerNotifier,
    Notice,
    NoticeKind,
    notice_for_exhausted,
    notice_for_retry,
)
from taskgui.ui.plain_text import WORD_JOINER
from tests.helpers.factories import T0
from tests.ui.dbus_probe import MESSAGE, TITLE

ROOT = Path(__file__).resolve().parents[3]

EXHAUSTED = TaskExhausted(task_id=7, name="Fetch mail", attempts=3, outcome=RunOutcome.FAILED)
RETRY = RetryScheduled(task_id=8, attempt=2, max_attempts=5, run_at=T0, delay=timedelta(minutes=2))


def test_an_exhausted_notice_names_the_task_the_attempts_and_the_error() -> None:
    notice = notice_for_exhausted(EXHAUSTED, "exit status 1")
    assert notice == Notice(
        kind=NoticeKind.EXHAUSTED,
        title="“Fetch mail” failed",
        message="Gave up after 3 attempts: Exit status 1.",
        task_id=7,
    )
    assert notice.urgent
    recurring = notice_for_exhausted(EXHAUSTED, "", recurring=True)
    assert recurring.message == (
        "Gave up after 3 attempts: the last one failed. It runs again at its next scheduled time."
    )


def test_a_reason_that_begins_with_taskgui_keeps_its_lower_case() -> None:
    """A trial: "Gave up after 1 attempt: Taskgui stopped while this ran"."""
    notice = notice_for_exhausted(EXHAUSTED, "taskgui stopped while this ran (it was killed)")
    assert (
        notice.message
        == "Gave up after 3 attempts: taskgui stopped while this ran (it was killed)."
    )


def test_a_retry_notice_says_which_attempt_comes_and_when() -> None:
    notice = notice_for_retry(RETRY, "Upload report", "exit status 6  (host\nnot found)")
    assert notice.kind is NoticeKind.RETRYING
    assert notice.title == "“Upload report” failed, will retry"
    assert notice.message == "Exit status 6 (host not found). Attempt 2 of 5 in 2m 00s."
    assert not notice.urgent


# ------------------------------------------------------------------------ banner


@pytest.fixture
def banner(qtbot: QtBot) -> Iterator[Banner]:
    parent = QWidget()  # held here: the banner lives as long as its parent
    qtbot.addWidget(parent)
    widget = Banner(parent)
    parent.show()
    yield widget


def test_the_banner_shows_the_latest_notice_and_reports_the_click(
    banner: Banner, qtbot: QtBot
) -> None:
    notifier = BannerNotifier(banner)
    assert not banner.isVisible()
    notifier.notify(notice_for_retry(RETRY, "Upload report", "exit status 6"))
    notifier.notify(notice_for_exhausted(EXHAUSTED, "exit status 1"))
    assert banner.isVisible()
    assert banner.title_label.text() == "“Fetch mail” failed"
    assert banner.message_label.text() == "Gave up after 3 attempts: Exit status 1."
    assert banner.more_label.text() == "+1 earlier"
    assert [n.task_id for n in notifier.raised] == [8, 7]
    with qtbot.waitSignal(notifier.activated) as clicked:
        qtbot.mouseClick(banner.history_button, Qt.MouseButton.LeftButton)
    assert clicked.args == [7]
    assert not banner.isVisible()  # acted upon


def test_a_task_that_runs_again_takes_back_only_its_own_gave_up(banner: Banner) -> None:
    notifier = BannerNotifier(banner)
    for task_id, name in ((1, "fail false"), (2, "exit3"), (3, "notfound")):
        notifier.notify(
            Notice(
                kind=NoticeKind.EXHAUSTED,
                title=f"“{name}” failed",
                message="Gave up.",
                task_id=task_id,
            )
        )
    assert (banner.task_id, banner.more_label.text()) == (3, "+2 earlier")
    notifier.withdraw(1)  # retried: an earlier one goes, the latest stays on top
    assert banner.isVisible()
    assert (banner.task_id, banner.more_label.text()) == (3, "+1 earlier")
    notifier.withdraw(3)  # the one shown: the one before it comes back on top
    assert banner.isVisible()
    assert (banner.task_id, banner.title_label.text()) == (2, "“exit3” failed")
    assert not banner.more_label.isVisible()
    notifier.withdraw(7)  # not in the banner: nothing changes
    assert banner.task_id == 2
    notifier.withdraw(2)
    assert not banner.isVisible()


def test_the_banner_is_dismissed_with_its_button_or_escape(banner: Banner, qtbot: QtBot) -> None:
    banner.show_message("t", "m", task_id=1)
    with qtbot.waitSignal(banner.dismissed):
        qtbot.mouseClick(banner.dismiss_button, Qt.MouseButton.LeftButton)
    assert not banner.isVisible()
    banner.show_message("t", "m", task_id=None)
    assert not banner.history_button.isVisibleTo(banner)  # nothing to open
    assert banner.more_label.text() == ""  # the count starts over after a dismiss
    banner.setFocus()
    with qtbot.waitSignal(banner.dismissed):
        qtbot.keyClick(banner, Qt.Key.Key_Escape)


def test_the_banner_widgets_have_accessible_names(banner: Banner) -> None:
    assert banner.accessibleName() == "Notification"
    assert banner.dismiss_button.accessibleName() == "Dismiss notification"
    assert banner.history_button.accessibleName()


# ------------------------------------------------------------------------- D-Bus


def test_the_notify_call_carries_the_notice_urgency_and_a_default_action() -> None:
    call = notify_call(
        notice_for_exhausted(EXHAUSTED, "exit <1> & more"),
        app_icon="/icons/taskgui.svg",
        desktop_entry="io.github.taskgui.TaskGui",
        capabilities={"actions", "body", "body-markup"},
        replaces_id=41,
    )
    assert call == NotifyCall(
        app_name="taskgui",
        replaces_id=41,
        app_icon="/icons/taskgui.svg",
        summary="“Fetch mail” failed",
        body="Gave up after 3 attempts: Exit &lt;1&gt; &amp; more.",  # markup escaped
        actions=(
            *("default", "Show History"),
            *("retry", "Retry Now", "log", "Open Log", "snooze", "Snooze 1 h"),
        ),
        hints=(("urgency", "y", 2), ("desktop-entry", "s", "io.github.taskgui.TaskGui")),
        expire_timeout=-1,
    )


@pytest.mark.parametrize(
    ("capabilities", "body"),
    [
        # A server that reads markup gets it escaped: it shows exactly the text.
        ({"body", "body-markup"}, "Gave up: &lt;img src=/dev/zero&gt; &amp;amp; &lt;a&gt;."),
        # One that does not say so may still parse it (the spec tells it to strip
        # tags): no tag or entity is left, and the text reads the same.
        ({"body"}, "Gave up: <\u2060img src=/dev/zero> &\u2060amp; <\u2060a>."),
    ],
)
def test_a_hostile_body_never_reaches_the_server_as_markup(
    capabilities: set[str], body: str
) -> None:
    notice = Notice(
        kind=NoticeKind.EXHAUSTED,
        title="“<img src=/dev/zero>” failed",
        message="Gave up: <img src=/dev/zero> &amp; <a>.",
        task_id=1,
    )
    call = notify_call(notice, capabilities=capabilities)
    assert call.body == body
    assert call.summary.replace(WORD_JOINER, "") == notice.title and "<img" not in call.summary


def test_the_notify_call_leaves_out_what_the_server_cannot_do() -> None:
    call = notify_call(notice_for_retry(RETRY, "Upload", "boom"), capabilities={"body"})
    assert call.actions == ()
    assert call.body == "Boom. Attempt 2 of 5 in 2m 00s."  # no markup support: raw
    assert call.hints[0] == ("urgency", "y", 1)
    info = Notice(kind=NoticeKind.INFO, title="hi", message="there")
    assert notify_call(info, capabilities={"actions"}).actions == ()  # no task, no action
    assert notify_call(info, capabilities={"actions"}).body == ""


CALL = NotifyCall(
    app_name="taskgui",
    replaces_id=3,
    app_icon="",
    summary="“It's” done",
    body="line 1\nline 2 \\ end",
    actions=("default", "Show History"),
    hints=(("urgency", "y", 2), ("desktop-entry", "s", "taskgui")),
    expire_timeout=-1,
)


def test_gdbus_gets_typed_gvariant_text() -> None:
    assert gdbus_arguments(CALL) == [
        "call",
        "--session",
        "--dest",
        "org.freedesktop.Notifications",
        "--object-path",
        "/org/freedesktop/Notifications",
        "--method",
        "org.freedesktop.Notifications.Notify",
        "--",
        "'taskgui'",
        "uint32 3",  # the reason for the external call: replaces_id is a uint32
        "''",
        "'“It\\'s” done'",
        "'line 1\\nline 2 \\\\ end'",
        "['default', 'Show History']",
        "{'urgency': <byte 2>, 'desktop-entry': <'taskgui'>}",
        "int32 -1",
    ]
    bare = NotifyCall("a", 0, "", "s", "b", (), (), -1)
    assert gdbus_arguments(bare)[-3:-1] == ["@as []", "@a{sv} {}"]


def test_busctl_gets_the_signature_and_counted_containers() -> None:
    assert busctl_arguments(CALL) == [
        "--user",
        "call",
        "--",
        "org.freedesktop.Notifications",
        "/org/freedesktop/Notifications",
        "org.freedesktop.Notifications",
        "Notify",
        SIGNATURE,
        "taskgui",
        "3",
        "",
        "“It's” done",
        "line 1\nline 2 \\ end",
        "2",
        "default",
        "Show History",
        "2",
        "urgency",
        "y",
        "2",
        "desktop-entry",
        "s",
        "taskgui",
        "-1",
    ]
    assert SIGNATURE == "susssasa{sv}i"


@pytest.mark.parametrize(
    ("output", "expected"),
    [("(uint32 7,)\n", 7), ("(12,)", 12), ("u 42\n", 42), ("", None), ("error", None)],
)
def test_the_notification_id_is_read_from_either_tool(output: str, expected: int | None) -> None:
    assert parse_notification_id(output) == expected


def test_gvariant_strings_are_escaped_and_control_characters_dropped() -> None:
    assert gvariant_string("a'b\\c\td\x07") == "'a\\'b\\\\c\\td '"


def test_the_sender_prefers_gdbus_then_busctl() -> None:
    found = {"gdbus": "/usr/bin/gdbus", "busctl": "/usr/bin/busctl"}
    sender = find_sender(found.get)
    assert sender is not None
    assert (sender.program, sender.arguments) == ("/usr/bin/gdbus", gdbus_arguments)
    sender = find_sender({"busctl": "/bin/busctl"}.get)
    assert sender is not None
    assert sender.arguments is busctl_arguments
    nothing: dict[str, str] = {}
    assert find_sender(nothing.get) is None


def test_a_click_on_a_desktop_notification_activates_its_task(qtbot: QtBot) -> None:
    notifier = DBusNotifier(None, Sender("true", gdbus_arguments))
    notifier.remember(101, task_id=7)
    assert notifier.call_for(notice_for_exhausted(EXHAUSTED, "")).replaces_id == 101
    with qtbot.waitSignal(notifier.activated) as clicked:
        notifier._on_bus_action_invoked(101, "default")
    assert clicked.args == [7]
    with qtbot.assertNotEmitted(notifier.activated):
        notifier._on_bus_action_invoked(999, "default")  # someone else's notification
        notifier._on_bus_action_invoked(101, "other")
    notifier._on_bus_notification_closed(101, 2)
    assert notifier.tasks_by_id == {}
    assert notifier.call_for(notice_for_exhausted(EXHAUSTED, "")).replaces_id == 0


@pytest.mark.slow
@pytest.mark.skipif(
    shutil.which("dbus-run-session") is None or find_sender() is None,
    reason="needs dbus-run-session and gdbus or busctl",
)
def test_a_notice_reaches_a_notification_server_on_a_real_bus(tmp_path: Path) -> None:
    """One round trip on a private session bus, against a fake server that logs calls."""
    out = tmp_path / "probe.json"
    probe = subprocess.run(
        ["dbus-run-session", "--", sys.executable, "-m", "tests.ui.dbus_probe", "client", str(out)],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT), "QT_QPA_PLATFORM": "offscreen"},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert probe.returncode == 0, probe.stderr
    report = json.loads(out.read_text())
    notify = [call for call in report["calls"] if call[0] == "Notify"]
    assert [call[1] for call in notify] == ["susssasa{sv}i"]  # replaces_id went as a uint32
    summary, body = notify[0][2][3], notify[0][2][4]
    # This server does not say it reads markup; the spec lets it anyway: inert, unchanged.
    assert summary.replace(WORD_JOINER, "") == TITLE and "<b" not in summary
    assert body.replace(WORD_JOINER, "") == MESSAGE
    assert "<img" not in body and "<a" not in body and "&amp;" not in body
    assert report["mapped"] == {"7": 42}  # a click on notification 7 opens task 42
