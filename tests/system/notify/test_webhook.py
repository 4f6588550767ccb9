"""The webhook channel against a real HTTP server on loopback."""

from __future__ import annotations

import json
import urllib.request
from datetime import UTC, datetime

import pytest

from taskgui.core.notify_rules import Trigger
from taskgui.system.notify.channel import ChannelError
from taskgui.system.notify.message import Message
from taskgui.system.notify.webhook import WebhookChannel, WebhookConfig, request_for
from tests.helpers.loopback_servers import WebhookServer

AT = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
HOSTILE = "<@here> & <https://evil|click>\r\nX-Injected: 1\0"


def message(name: str = "Backup", trigger: Trigger = Trigger.GAVE_UP) -> Message:
    return Message(
        trigger=trigger, task_id=4, task_name=name, at=AT, outcome="failed", attempt=2,
        max_attempts=2, error="exit status 1",
    )  # fmt: skip


def channel(url: str, **kw: object) -> tuple[WebhookChannel, list[float]]:
    pauses: list[float] = []
    direct = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    config = WebhookConfig(url=url, **kw)  # type: ignore[arg-type]
    return WebhookChannel(config, sleep=pauses.append, opener=direct), pauses


def test_the_json_body_arrives_once_as_documented() -> None:
    with WebhookServer() as server:
        sender, pauses = channel(server.url + "/hook")
        sender.send(message())
        [posted] = server.wait_for(1)
    assert posted.path == "/hook"
    assert posted.headers["Content-Type"] == "application/json; charset=utf-8"
    data = json.loads(posted.body)
    assert data["event"] == "gave_up" and data["task"] == {"id": 4, "name": "Backup"}
    assert pauses == []


def test_a_server_error_is_retried_with_a_doubling_pause_then_delivered() -> None:
    with WebhookServer(statuses=[503, 500]) as server:
        sender, pauses = channel(server.url, retries=2, backoff=0.5)
        sender.send(message())
        assert len(server.wait_for(3)) == 3
    assert pauses == [0.5, 1.0]


def test_a_client_error_is_final_and_says_so_without_the_secret_path() -> None:
    with WebhookServer(statuses=[404, 200]) as server:
        sender, pauses = channel(server.url + "/secret-token", retries=3)
        with pytest.raises(ChannelError, match="HTTP 404") as caught:
            sender.send(message())
        assert len(server.items) == 1 and pauses == []
    assert "secret-token" not in str(caught.value)


def test_every_retry_failing_is_one_clear_error() -> None:
    with WebhookServer(statuses=[503] * 5) as server:
        sender, _ = channel(server.url, retries=1)
        with pytest.raises(ChannelError, match="HTTP 503"):
            sender.send(message())
        assert len(server.items) == 2


def test_nothing_listening_is_an_error_not_a_hang() -> None:
    with WebhookServer() as server:
        url = server.url
    sender, pauses = channel(url, retries=1, timeout=2)
    with pytest.raises(ChannelError, match="did not take it"):
        sender.send(message())
    assert pauses == [1.0]


def test_ntfy_gets_its_json_publish_at_the_root_with_nothing_in_headers() -> None:
    with WebhookServer() as server:
        sender, _ = channel(server.url + "/my-topic", preset="ntfy")
        sender.send(message(HOSTILE))
        [posted] = server.wait_for(1)
    assert posted.path == "/"
    data = json.loads(posted.body)
    assert data["topic"] == "my-topic" and data["priority"] == 5
    assert "<@here>" in data["title"]  # as text, in JSON
    assert not any(key.lower().startswith("x-injected") for key in posted.headers)
    assert set(posted.headers) >= {"Content-Type", "User-Agent"}


def test_slack_text_escapes_its_control_characters() -> None:
    with WebhookServer() as server:
        sender, _ = channel(server.url, preset="slack")
        sender.send(message(HOSTILE, Trigger.FAILED))
        [posted] = server.wait_for(1)
    text = json.loads(posted.body)["text"]
    assert "<@here>" not in text and "&lt;@here&gt; &amp; &lt;https://evil|click&gt;" in text
    assert "\0" not in text and "\r" not in text


def test_the_body_carries_markup_newlines_and_nul_only_as_json_text() -> None:
    request = request_for(WebhookConfig(url="http://127.0.0.1/"), message(HOSTILE))
    data = json.loads(request.data)
    assert data["task"]["name"] == HOSTILE.replace("\0", "")
    assert b"\r\n" not in request.data and b"\0" not in request.data


@pytest.mark.parametrize(
    ("kw", "match"),
    [
        ({"url": "ftp://x/"}, "http"),
        ({"url": "http://x/a b"}, "spaces"),
        ({"url": "http://x/\r\nHost: y"}, "line breaks"),
        ({"url": "http://x/", "preset": "teams"}, "preset"),
        ({"url": "http://x/", "timeout": 0}, "timeout"),
        ({"url": "http://x/a/b", "preset": "ntfy"}, None),
    ],
)
def test_a_bad_configuration_is_a_clear_error(kw: dict[str, object], match: str | None) -> None:
    if match is None:  # valid config, but an ntfy URL must name one topic
        with pytest.raises(ChannelError, match="topic"):
            request_for(WebhookConfig(**kw), message())  # type: ignore[arg-type]
        return
    with pytest.raises(ChannelError, match=match):
        WebhookConfig(**kw)  # type: ignore[arg-type]
