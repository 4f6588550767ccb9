"""Sends messages to the outside channels on a thread of its own.

A webhook can take its whole timeout and an SMTP server longer; neither may hold up
the window or the scheduler service (DESIGN: nothing makes those threads wait on the
network). ``submit`` only queues. One daemon thread sends, in order, to every channel;
a failing channel is logged (once per problem in a row) and does not stop the others.
The queue is bounded: past ``MAX_QUEUED`` the oldest message is dropped, since a
channel that is down for a day should not make the app hold a day of failures.

``delivered`` is called on the sending thread after each attempt with the channel's
name, the message and the error (None on success): tests wait on it, the app may log.
``after_sent`` calls back once everything submitted before it was sent or given up on
(a shared schedule's outbox row is deleted only then).
"""

from __future__ import annotations

import collections
import logging
import threading
from collections.abc import Callable, Sequence

from taskgui.system.notify.channel import Channel, ChannelError
from taskgui.system.notify.message import Message

log = logging.getLogger(__name__)

MAX_QUEUED = 500
Delivered = Callable[[str, Message, ChannelError | None], None]
Passed = Callable[[], None]


class Dispatcher:
    """A queue and a thread in front of ``channels``; see the module docstring."""

    def __init__(self, channels: Sequence[Channel], delivered: Delivered | None = None) -> None:
        self._channels = list(channels)
        self._delivered = delivered
        # Messages, and the callbacks of ``after_sent`` in their place among them.
        self._queue: collections.deque[Message | Passed] = collections.deque()
        self._ready = threading.Condition()
        self._closed = False
        self._last_problem: dict[str, str] = {}
        self._thread: threading.Thread | None = None
        self.dropped = 0

    @property
    def channels(self) -> list[Channel]:
        return list(self._channels)

    def set_channels(self, channels: Sequence[Channel]) -> None:
        """Use these from the next message on (the settings changed)."""
        with self._ready:
            self._channels = list(channels)

    def submit(self, message: Message) -> None:
        """Queue ``message`` for every channel; never blocks, never raises."""
        self._enqueue(message)

    def after_sent(self, passed: Passed) -> None:
        """Call ``passed`` (on the sending thread, or here when nothing is queued)
        once every message submitted before this call was sent or given up on."""
        if not self._enqueue(passed):
            passed()

    def _enqueue(self, item: Message | Passed) -> bool:
        """Queue ``item``; False when it was not (closed, or no channel to send to)."""
        dropped: Passed | None = None
        with self._ready:
            if self._closed or not self._channels:
                return False
            if len(self._queue) >= MAX_QUEUED:
                oldest = self._queue.popleft()
                if isinstance(oldest, Message):
                    self.dropped += 1
                else:
                    dropped = oldest  # what came before it is given up on, or sent
            self._queue.append(item)
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name="taskgui-notify", daemon=True
                )
                self._thread.start()
            self._ready.notify()
        if dropped is not None:
            _call(dropped)
        return True

    def close(self, timeout: float = 5.0) -> None:
        """Send what is queued (within ``timeout``), then stop the thread."""
        with self._ready:
            self._closed = True
            self._ready.notify()
            thread = self._thread
        if thread is not None:
            thread.join(timeout)

    def _next(self) -> tuple[Message | Passed, list[Channel]] | None:
        with self._ready:
            while not self._queue and not self._closed:
                self._ready.wait()
            if not self._queue:
                return None
            return self._queue.popleft(), list(self._channels)

    def _run(self) -> None:
        while (item := self._next()) is not None:
            message, channels = item
            if not isinstance(message, Message):
                _call(message)
                continue
            for channel in channels:
                self._send(channel, message)

    def _send(self, channel: Channel, message: Message) -> None:
        problem: ChannelError | None = None
        try:
            channel.send(message)
        except ChannelError as error:
            problem = error
        except Exception as error:  # a bug in a channel must not end the thread
            log.exception("the %s channel failed", channel.name)
            problem = ChannelError(f"the {channel.name} channel failed: {error}")
        text = str(problem) if problem else ""
        if text and self._last_problem.get(channel.name) != text:
            log.warning("notification not sent: %s", text)
        self._last_problem[channel.name] = text
        if self._delivered is not None:
            try:
                self._delivered(channel.name, message, problem)
            except Exception:
                log.exception("the delivery callback failed")


def _call(passed: Passed) -> None:
    try:
        passed()
    except Exception:
        log.exception("the after-sent callback failed")
