"""The e-mail channel against a real SMTP server on loopback, with STARTTLS."""

from __future__ import annotations

import email
import email.policy
from datetime import UTC, datetime
from pathlib import Path

import pytest

from taskgui.core.notify_rules import Trigger
from taskgui.system.notify.channel import ChannelError
from taskgui.system.notify.mail import MailChannel, MailConfig, email_for
from taskgui.system.notify.message import Message
from tests.helpers.loopback_servers import SmtpServer, self_signed_certificate

AT = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
HOSTILE = "Nightly\r\nBcc: victim@example.org\r\n\r\n<b>body</b>\0 ünï"


@pytest.fixture(scope="module")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return self_signed_certificate(tmp_path_factory.mktemp("tls"))


def message(name: str = "Backup") -> Message:
    return Message(
        trigger=Trigger.GAVE_UP, task_id=9, task_name=name, at=AT, outcome="failed", attempt=3,
        max_attempts=3, error="exit status 2\nline two",
    )  # fmt: skip


def config(port: int, cert: Path | None, **kw: object) -> MailConfig:
    values: dict[str, object] = {
        "host": "127.0.0.1",
        "port": port,
        "sender": "taskgui@example.org",
        "recipients": ("me@example.org",),
        "username": "me",
        "ca_file": str(cert) if cert else None,
        "timeout": 10.0,
    }
    values.update(kw)
    return MailConfig(**values)  # type: ignore[arg-type]


def test_mail_goes_over_starttls_with_the_keyring_password(
    certificate: tuple[Path, Path],
) -> None:
    asked: list[int] = []

    def password() -> str:
        asked.append(1)
        return "s3cret"

    with SmtpServer(certificate, password="s3cret") as server:
        MailChannel(config(server.port, certificate[0]), password).send(message())
        [received] = server.wait_for(1)
    assert received.tls and received.login == ("me", "s3cret") and asked == [1]
    assert received.commands[:3] == ["EHLO", "STARTTLS", "EHLO"]
    assert received.commands.index("AUTH") > received.commands.index("STARTTLS")
    assert received.recipients == ["me@example.org"]
    parsed = email.message_from_bytes(received.data, policy=email.policy.default)
    assert parsed["Subject"] == "[taskgui] “Backup” failed and gave up"
    assert parsed["X-Taskgui-Event"] == "gave_up"
    assert "exit status 2\r\nline two" in parsed.get_content()


def test_a_server_without_starttls_never_gets_the_password() -> None:
    with SmtpServer(None, password="s3cret") as server:
        with pytest.raises(ChannelError, match="does not offer STARTTLS"):
            MailChannel(config(server.port, None), lambda: "s3cret").send(message())
        assert server.items == [] and "AUTH" not in server.sessions[0]


def test_an_untrusted_certificate_is_refused(certificate: tuple[Path, Path]) -> None:
    with SmtpServer(certificate, password="x") as server:
        with pytest.raises(ChannelError, match="could not send mail"):
            MailChannel(config(server.port, None), lambda: "x").send(message())
        assert server.items == []


def test_a_wrong_password_or_none_in_the_keyring_is_a_clear_error(
    certificate: tuple[Path, Path],
) -> None:
    with SmtpServer(certificate, password="right") as server:
        with pytest.raises(ChannelError, match="refused the user name or password"):
            MailChannel(config(server.port, certificate[0]), lambda: "wrong").send(message())
        with pytest.raises(ChannelError, match="not in the keyring"):
            MailChannel(config(server.port, certificate[0]), lambda: None).send(message())
        assert server.items == []


def test_a_hostile_task_name_cannot_add_a_header_or_a_recipient(
    certificate: tuple[Path, Path],
) -> None:
    with SmtpServer(certificate, password="p") as server:
        MailChannel(config(server.port, certificate[0]), lambda: "p").send(message(HOSTILE))
        [received] = server.wait_for(1)
    assert received.recipients == ["me@example.org"]
    parsed = email.message_from_bytes(received.data, policy=email.policy.default)
    assert parsed["Bcc"] is None
    assert "Bcc: victim" in parsed["Subject"] and "ünï" in parsed["Subject"]
    assert "\n" not in parsed["Subject"] and "\0" not in str(parsed["Subject"])
    assert b"\0" not in received.data


def test_no_username_sends_without_logging_in(certificate: tuple[Path, Path]) -> None:
    with SmtpServer(certificate) as server:
        MailChannel(config(server.port, certificate[0], username=""), lambda: None).send(message())
        [received] = server.wait_for(1)
    assert received.login is None and received.tls


@pytest.mark.parametrize(
    ("kw", "match"),
    [
        ({"sender": "a@b.org\r\nBcc: x@y.org"}, "sender"),
        ({"recipients": ("x@y.org, z@w.org",)}, "recipient"),
        ({"recipients": ()}, "recipients"),
        ({"host": "smtp.example.org\r\n"}, "host name"),
        ({"security": "ssl3"}, "security"),
        ({"port": 70_000}, "port"),
    ],
)
def test_a_bad_configuration_is_a_clear_error(kw: dict[str, object], match: str) -> None:
    with pytest.raises(ChannelError, match=match):
        config(kw.pop("port", 25), None, **kw)  # type: ignore[arg-type]


def test_the_email_has_one_subject_line_for_any_name() -> None:
    mail = email_for(config(25, None), message("x" * 500 + "\n" + "y"))
    assert "\n" not in str(mail["Subject"]) and len(str(mail["Subject"])) <= 200
