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
