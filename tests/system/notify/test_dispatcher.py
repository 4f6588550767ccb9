"""The dispatcher sends off the caller's thread, in order, and survives failing channels."""

from __future__ import annotations

import threading
from datetime import UTC, datetime

from taskgui.core.notify_rules import Trigger
from taskgui.system.notify.channel import ChannelError
from taskgui.system.notify.dispatcher import MAX_QUEUED, Dispatcher
from taskgui.system.notify.message import Message

AT = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def message(task_id: int) -> Message:
    return Message(trigger=Trigger.FAILED, task_id=task_id, task_name="t", at=AT)


class Recording:
    def __init__(self, name: str, fail: bool = False, gate: threading.Event | None = None) -> None:
        self.name = name
        self.fail = fail
        self.gate = gate
        self.sent: list[tuple[int, str]] = []

    def send(self, msg: Message) -> None:
        if self.gate is not None:
            assert self.gate.wait(10)
        self.sent.append((msg.task_id, threading.current_thread().name))
        if self.fail:
            raise ChannelError(f"{self.name} is down")


def test_each_message_reaches_every_channel_in_order_on_its_own_thread() -> None:
    done = threading.Semaphore(0)
    results: list[tuple[str, int, str | None]] = []

    def delivered(name: str, msg: Message, error: ChannelError | None) -> None:
        results.append((name, msg.task_id, str(error) if error else None))
        done.release()

    broken, working = Recording("broken", fail=True), Recording("working")
    dispatcher = Dispatcher([broken, working], delivered)
    for task_id in (1, 2, 3):
        dispatcher.submit(message(task_id))
    for _ in range(6):
        assert done.acquire(timeout=10)
    dispatcher.close()
    assert [t for t, _ in working.sent] == [1, 2, 3]
    assert {thread for _, thread in working.sent} == {"taskgui-notify"}
    assert ("broken", 1, "broken is down") in results and ("working", 3, None) in results


def test_submit_never_waits_for_a_slow_channel_and_the_queue_is_bounded() -> None:
    gate = threading.Event()
    slow = Recording("slow", gate=gate)
    dispatcher = Dispatcher([slow])
    for task_id in range(MAX_QUEUED + 10):
        dispatcher.submit(message(task_id))  # returns at once although nothing is sent
    assert slow.sent == []
    gate.set()
    dispatcher.close()
    assert dispatcher.dropped >= 9
    assert slow.sent[-1][0] == MAX_QUEUED + 9


def test_without_channels_nothing_starts() -> None:
    dispatcher = Dispatcher([])
    dispatcher.submit(message(1))
    dispatcher.close()
    assert dispatcher.channels == []


def test_after_sent_calls_back_once_what_came_before_is_sent() -> None:
    gate = threading.Event()
    slow = Recording("slow", gate=gate)
    dispatcher = Dispatcher([slow])
    passed = threading.Event()
    sent_when_passed: list[list[int]] = []

    def after() -> None:
        sent_when_passed.append([task_id for task_id, _ in slow.sent])
        passed.set()

    dispatcher.submit(message(1))
    dispatcher.submit(message(2))
    dispatcher.after_sent(after)
    dispatcher.submit(message(3))
    assert not passed.wait(0.05)  # the channel holds message 1 back
    gate.set()
    assert passed.wait(10)
    dispatcher.close()
    assert sent_when_passed == [[1, 2]]


def test_after_sent_without_channels_or_when_closed_calls_back_at_once() -> None:
    calls: list[str] = []
    Dispatcher([]).after_sent(lambda: calls.append("none"))
    closed = Dispatcher([Recording("r")])
    closed.close()
    closed.after_sent(lambda: calls.append("closed"))
    assert calls == ["none", "closed"]


def test_a_callback_pushed_out_of_a_full_queue_is_still_called() -> None:
    gate = threading.Event()
    dispatcher = Dispatcher([Recording("slow", gate=gate)])
    calls: list[int] = []
    dispatcher.submit(message(-1))  # the thread holds it (the gate is shut)
    dispatcher.after_sent(lambda: calls.append(1))
    for task_id in range(MAX_QUEUED + 1):
        dispatcher.submit(message(task_id))
    assert calls == [1]  # what came before it was given up on (or is being sent)
    gate.set()
    dispatcher.close()
