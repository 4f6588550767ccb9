"""Rules end to end: a real scheduler service runs real commands, the relay judges each
attempt, and a real HTTP server on loopback receives exactly the expected webhooks."""

from __future__ import annotations

import json
import threading
import urllib.request
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from taskgui.core.notify_rules import NotifyGate, NotifyRule, QuietHours, parse_rule
from taskgui.core.retry import Backoff, RetryPolicy
from taskgui.core.states import TaskState
from taskgui.runtime.notify_relay import Notification, NotifyRelay
from taskgui.system.notify.channel import ChannelError
from taskgui.system.notify.dispatcher import Dispatcher
from taskgui.system.notify.message import Message
from taskgui.system.notify.webhook import WebhookChannel, WebhookConfig
from tests.helpers.loopback_servers import WebhookServer
from tests.helpers.service import CLOCK, Harness, spec

RETRY_TWICE = RetryPolicy(
    backoff=Backoff.FIXED,
    max_attempts=3,
    base_delay=timedelta(milliseconds=50),
    max_delay=timedelta(milliseconds=50),
)


@pytest.fixture
def harness(tmp_path: Path, qtbot: QtBot) -> Iterator[Harness]:
    h = Harness(tmp_path, qtbot, workers=4)
    yield h
    h.close()


class Wired:
    def __init__(self, harness: Harness, server: WebhookServer, default: NotifyRule) -> None:
        self.delivered = threading.Semaphore(0)
        self.errors: list[ChannelError] = []
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        webhook = WebhookChannel(
            WebhookConfig(url=server.url), sleep=lambda _s: None, opener=opener
        )
        self.dispatcher = Dispatcher([webhook], self._on_delivered)
        self.relay = NotifyRelay(
            harness.service, harness.service.task, CLOCK, default_rule=lambda: default, host="h"
        )
        self.notified: list[Notification] = []
        self.relay.sinks += [self.notified.append, lambda n: self.dispatcher.submit(n.message)]

    def _on_delivered(self, _name: str, _message: Message, error: ChannelError | None) -> None:
        if error is not None:
            self.errors.append(error)
        self.delivered.release()

    def close(self) -> None:
        self.relay.close()
        self.dispatcher.close()


def events_of(server: WebhookServer) -> list[tuple[str, str]]:
    bodies = [json.loads(posted.body) for posted in server.items]
    return sorted((body["task"]["name"], body["event"]) for body in bodies)


def test_each_rule_sends_exactly_its_webhooks_and_quiet_rules_none(
    harness: Harness, qtbot: QtBot, tmp_path: Path
) -> None:
    marker = tmp_path / "second-time"
    flaky = f"test -e {marker} || {{ touch {marker}; exit 1; }}"  # fails once, then works
    with WebhookServer() as server:
        wired = Wired(harness, server, default=parse_rule("on-give-up"))
        tasks = {
            "every failure": spec("every failure", "exit 2", retry=RETRY_TWICE,
                                  notify=parse_rule("on-failure")),
            "third in a row": spec("third in a row", "exit 3", retry=RETRY_TWICE,
                                   notify=parse_rule("after:3")),
            "recovers": spec("recovers", flaky, retry=RETRY_TWICE,
                             notify=parse_rule("on-recovery")),
            "by default": spec("by default", "exit 4", retry=RETRY_TWICE),
            "silent": spec("silent", "exit 5", retry=RETRY_TWICE, notify=parse_rule("never")),
            "fine": spec("fine", "true", notify=parse_rule("on-failure")),
        }  # fmt: skip
        ids = {name: harness.service.add_task(task).id for name, task in tasks.items()}
        for name, task_id in ids.items():
            final = TaskState.SUCCEEDED if name in ("recovers", "fine") else TaskState.EXHAUSTED
            harness.wait_state(task_id, final)
        expected = [
            ("by default", "gave_up"),
            ("every failure", "failed"),
            ("every failure", "failed"),
            ("every failure", "gave_up"),
            ("recovers", "recovered"),
            ("third in a row", "failing"),
        ]
        for _ in expected:
            assert wired.delivered.acquire(timeout=10)
        wired.close()  # sends anything still queued, then stops
        assert events_of(server) == expected
        assert wired.errors == []
        gave_up = next(n for n in wired.notified if n.message.task_name == "by default")
        assert gave_up.message.attempt == 3 and gave_up.message.error == "exit status 4"


def test_a_snoozed_task_stays_quiet_and_a_removed_one_is_forgotten(
    harness: Harness, qtbot: QtBot
) -> None:
    with WebhookServer() as server:
        wired = Wired(harness, server, default=parse_rule("on-failure"))
        snoozed = harness.service.add_task(spec("snoozed", "exit 1", first_run_at=CLOCK.now()
                                                + timedelta(milliseconds=300)))  # fmt: skip
        wired.relay.snooze(snoozed.id)
        loud = harness.service.add_task(spec("loud", "exit 1"))
        harness.wait_state(snoozed.id, TaskState.EXHAUSTED)
        harness.wait_state(loud.id, TaskState.EXHAUSTED)
        assert wired.delivered.acquire(timeout=10)
        wired.close()
        assert events_of(server) == [("loud", "gave_up")]


def _fail_once_more(harness: Harness, qtbot: QtBot, task_id: int, runs: int) -> None:
    """Run the failing task now and wait until its history holds ``runs`` runs."""
    harness.service.run_now(task_id)
    qtbot.waitUntil(
        lambda: len([r for r in harness.service.history(task_id) if r.outcome]) == runs,
        timeout=10_000,
    )


def test_a_streak_survives_a_restart(tmp_path: Path, qtbot: QtBot) -> None:
    """after:3 with two failures before a restart and one after: it notifies then."""
    first = Harness(tmp_path, qtbot, workers=2)
    try:
        task = first.service.add_task(spec("flaky", "exit 1", notify=parse_rule("after:3")))
        first.wait_state(task.id, TaskState.EXHAUSTED)
        _fail_once_more(first, qtbot, task.id, 2)
    finally:
        first.close()
    second = Harness(tmp_path, qtbot, workers=2)  # the same file: a restart
    try:
        relay = NotifyRelay(second.service, second.service.task, CLOCK, host="h")
        notified: list[Notification] = []
        relay.sinks.append(notified.append)
        _fail_once_more(second, qtbot, task.id, 3)
        qtbot.waitUntil(lambda: len(notified) == 1, timeout=5_000)
        assert notified[0].message.trigger.value == "failing"
        assert relay.gate.streak(task.id) == 3
        _fail_once_more(second, qtbot, task.id, 4)
        qtbot.wait(200)
        assert len(notified) == 1  # once per streak
        relay.close()
    finally:
        second.close()


def quiet_until(end: timedelta) -> QuietHours:
    """Quiet hours from a minute ago until ``end`` from now (skipped across midnight)."""
    local = CLOCK.now().astimezone()
    if (local + end + timedelta(seconds=2)).date() != local.date():
        pytest.skip("too close to midnight for a span of quiet hours from now")
    return QuietHours(
        start=(local - timedelta(minutes=1)).time().replace(tzinfo=None),
        end=(local + end).time().replace(tzinfo=None),
    )


def quiet_relay(harness: Harness, quiet: QuietHours) -> NotifyRelay:
    return NotifyRelay(
        harness.service, harness.service.task, CLOCK,
        default_rule=lambda: parse_rule("on-failure"), gate=NotifyGate(quiet), host="h",
    )  # fmt: skip


def test_what_quiet_hours_hold_is_not_said_to_be_handed_on_when_the_relay_closes(
    harness: Harness, qtbot: QtBot
) -> None:
    relay = quiet_relay(harness, quiet_until(timedelta(minutes=5)))
    task = harness.service.add_task(spec("held", "exit 3"))
    harness.wait_state(task.id, TaskState.EXHAUSTED)
    passed: list[str] = []
    relay.after_held(lambda: passed.append("handed on"))
    relay.close()  # the node stops before the quiet hours end
    qtbot.wait(100)
    assert passed == []  # its news was never sent: the next leader tells it


def test_quiet_hours_hold_the_news_and_send_one_summary_when_they_end(
    harness: Harness, qtbot: QtBot
) -> None:
    quiet = quiet_until(timedelta(seconds=1.5))
    with WebhookServer() as server:
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        webhook = WebhookChannel(
            WebhookConfig(url=server.url), sleep=lambda _s: None, opener=opener
        )
        delivered = threading.Semaphore(0)
        dispatcher = Dispatcher([webhook], lambda *_: delivered.release())
        relay = quiet_relay(harness, quiet)
        notified: list[Notification] = []
        relay.sinks += [notified.append, lambda n: dispatcher.submit(n.message)]
        # after_held: at once while nothing is held; else once the summary went out.
        passed: list[int] = []
        relay.after_held(lambda: passed.append(len(notified)))
        assert passed == [0]
        for name in ("<b>one</b>", "two"):
            task = harness.service.add_task(spec(name, "exit 3"))
            harness.wait_state(task.id, TaskState.EXHAUSTED)
        relay.after_held(lambda: passed.append(len(notified)))
        relay.after_held(lambda: passed.append(-1))  # nothing held since: at once
        qtbot.wait(200)
        assert notified == []  # held, not dropped
        assert passed == [0, -1]  # the held one not yet: a leader keeps its outbox row
        qtbot.waitUntil(lambda: len(notified) == 1, timeout=10_000)
        assert passed == [0, -1, 1]  # right after the summary was handed to the sinks
        message = notified[0].message
        assert message.trigger.value == "held"
        assert message.title == "2 notifications during quiet hours"
        assert message.held == ("“<b>one</b>” failed and gave up", "“two” failed and gave up")
        assert delivered.acquire(timeout=10)
        relay.close()
        dispatcher.close()
        [posted] = [json.loads(item.body) for item in server.items]
        assert posted["event"] == "held" and len(posted["held"]) == 2
        assert "<b>one</b>" in posted["message"]  # as text; the JSON encoder escapes it
