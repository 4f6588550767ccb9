"""The seam every outside channel fits: ``send(message)``, raising ``ChannelError``."""

from __future__ import annotations

from typing import Protocol

from taskgui.core.errors import TaskguiError
from taskgui.system.notify.message import Message


class ChannelError(TaskguiError):
    """A notification could not be delivered; the message says where and why."""


class Channel(Protocol):
    name: str

    def send(self, message: Message) -> None:
        """Deliver ``message`` (blocking, bounded by the channel's timeout and retries)."""
