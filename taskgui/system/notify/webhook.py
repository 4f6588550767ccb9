"""A webhook: an HTTP POST of the message, with a timeout and retries.

Three shapes of request, chosen by ``preset``:

* ``json`` (the default): taskgui's own body, ``message.body`` (documented in the
  README), as ``application/json``.
* ``ntfy``: the URL names a topic (``https://ntfy.sh/my-topic``); the request goes to
  the server's root as ntfy's JSON publish (topic, title, message, priority, tags),
  so nothing from a task ever travels in an HTTP header.
* ``slack``: ``{"text": ...}``, which Slack's incoming webhooks and the many servers
  that copy them (Mattermost, Rocket.Chat, Discord's ``/slack`` endpoint) accept, with
  ``&``, ``<`` and ``>`` escaped as Slack asks so a task name cannot mention ``@here``
  or forge a link.

A 2xx answer is delivery. A 5xx, 429 or a network error is tried again, up to
``retries`` more times with a doubling pause; a 4xx other than 429 is final (the URL or
the token is wrong, and repeating will not fix it).
"""

from __future__ import annotations

import json
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from taskgui.core.notify_rules import Trigger
from taskgui.system.notify.channel import ChannelError
from taskgui.system.notify.message import Message, body

# urllib.request (with http.client, ssl and the email package behind it) is imported
# where a webhook is posted: every start imports this module, few post anything.
if TYPE_CHECKING:
    import urllib.request

PRESETS = ("json", "ntfy", "slack")
USER_AGENT = "taskgui-notify/1"
MAX_URL = 2_048


@dataclass(frozen=True, slots=True, kw_only=True)
class WebhookConfig:
    url: str
    preset: str = "json"
    timeout: float = 10.0  # seconds, per attempt
    retries: int = 2  # further attempts after the first
    backoff: float = 1.0  # seconds before the first retry; doubles

    def __post_init__(self) -> None:
        parts = urllib.parse.urlsplit(self.url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ChannelError(
                f"a webhook URL starts with http:// or https://, not {self.url[:60]!r}"
            )
        if len(self.url) > MAX_URL or any(c in self.url for c in "\r\n\0 "):
            raise ChannelError("the webhook URL is too long or has spaces or line breaks")
        if self.preset not in PRESETS:
            raise ChannelError(f"a webhook preset is one of {', '.join(PRESETS)}")
        if not 0 < self.timeout <= 300 or not 0 <= self.retries <= 10:
            raise ChannelError("a webhook timeout is 0-300 s and it retries 0-10 times")


@dataclass(frozen=True, slots=True)
class HttpRequest:
    url: str
    data: bytes
    headers: tuple[tuple[str, str], ...]


def slack_text(text: str) -> str:
    """``text`` as literal Slack mrkdwn (its three control characters escaped)."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


_NTFY_PRIORITY = {
    Trigger.GAVE_UP: 5,
    Trigger.FAILING: 4,
    Trigger.FAILED: 4,
    Trigger.RECOVERED: 3,
    Trigger.HELD: 3,
}
_NTFY_TAGS = {
    Trigger.GAVE_UP: ["rotating_light"],
    Trigger.FAILING: ["warning"],
    Trigger.FAILED: ["warning"],
    Trigger.RECOVERED: ["white_check_mark"],
    Trigger.HELD: ["zzz"],
}


def request_for(config: WebhookConfig, message: Message) -> HttpRequest:
    """The request to send (pure: tests read it without a server)."""
    url = config.url
    if config.preset == "ntfy":
        parts = urllib.parse.urlsplit(url)
        topic = parts.path.strip("/")
        if not topic or "/" in topic:
            raise ChannelError("an ntfy URL names one topic, like https://ntfy.sh/my-topic")
        url = urllib.parse.urlunsplit((parts.scheme, parts.netloc, "/", "", ""))
        payload: object = {
            "topic": topic,
            "title": message.title,
            "message": message.text,
            "priority": _NTFY_PRIORITY[message.trigger],
            "tags": _NTFY_TAGS[message.trigger],
        }
    elif config.preset == "slack":
        payload = {"text": f"*{slack_text(message.title)}*\n{slack_text(message.text)}"}
    else:
        payload = body(message)
    data = json.dumps(payload, ensure_ascii=False).encode("utf-8")
    headers = (("Content-Type", "application/json; charset=utf-8"), ("User-Agent", USER_AGENT))
    return HttpRequest(url, data, headers)


class WebhookChannel:
    """Posts messages to one webhook. ``send`` blocks: call it from the dispatcher."""

    name = "webhook"

    def __init__(
        self,
        config: WebhookConfig,
        *,
        sleep: Callable[[float], None],
        opener: urllib.request.OpenerDirector | None = None,
    ) -> None:
        self.config = config
        self._sleep = sleep
        if opener is None:
            import urllib.request  # noqa: PLC0415 - see the imports

            opener = urllib.request.build_opener()
        self._opener = opener

    def send(self, message: Message) -> None:
        request = request_for(self.config, message)
        pause = self.config.backoff
        problem = ""
        for attempt in range(self.config.retries + 1):
            if attempt:
                self._sleep(pause)
                pause *= 2
            retry, problem = self._post(request)
            if not problem:
                return
            if not retry:
                break
        raise ChannelError(f"the webhook {_shown(self.config.url)} did not take it: {problem}")

    def _post(self, request: HttpRequest) -> tuple[bool, str]:
        """("", ...) when delivered; else whether to retry and what went wrong."""
        import urllib.error  # noqa: PLC0415 - see the imports
        import urllib.request  # noqa: PLC0415
        from http.client import HTTPException  # noqa: PLC0415

        http = urllib.request.Request(request.url, data=request.data, method="POST")
        for key, value in request.headers:
            http.add_header(key, value)
        try:
            with self._opener.open(http, timeout=self.config.timeout) as answer:
                answer.read(65_536)
                return False, ""
        except urllib.error.HTTPError as error:
            error.close()
            retry = error.code >= 500 or error.code == 429
            return retry, f"HTTP {error.code} {error.reason}"
        except (urllib.error.URLError, OSError, HTTPException) as error:
            reason = getattr(error, "reason", error)
            return True, str(reason) or type(error).__name__


def _shown(url: str) -> str:
    """The URL without its path (a Slack or ntfy path is the secret)."""
    parts = urllib.parse.urlsplit(url)
    return f"{parts.scheme}://{parts.hostname}"
