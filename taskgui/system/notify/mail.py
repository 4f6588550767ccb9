"""E-mail over SMTP, with STARTTLS by default.

The password never lives in the database or the settings file: the channel asks
``password()`` for it at send time (``secrets.SecretServiceStore`` reads the desktop's
keyring). A server that does not offer STARTTLS when it was asked for is refused rather
than sent the password in the clear. ``ca_file`` names a certificate to trust besides
the system's (a self-hosted server with its own CA).

Headers carry only one-line text (``message.header_text``): no CR, LF or NUL, so a
task called ``x\\r\\nBcc: someone`` stays a subject, and the ``email`` package encodes
anything beyond ASCII (RFC 2047).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from taskgui.system.notify.channel import ChannelError
from taskgui.system.notify.message import Message, header_text, one_line

# smtplib, ssl and the email package are imported where mail is made or sent: every
# start of the window and the daemon imports this module, most never send mail, and
# together they cost about 50-90 ms of it.
if TYPE_CHECKING:
    import smtplib
    import ssl
    from email.message import EmailMessage

SECURITY = ("starttls", "tls", "none")
MAX_RECIPIENTS = 50


def _address(text: str, what: str) -> str:
    text = text.strip()
    from email.utils import parseaddr  # noqa: PLC0415 - see the imports

    _name, address = parseaddr(text)
    if (
        not address
        or "@" not in address
        or address != text
        or any(c in address for c in "\r\n\0,; <>")
    ):
        raise ChannelError(f"the {what} {text[:60]!r} is not an e-mail address like a@b.org")
    return address


@dataclass(frozen=True, slots=True, kw_only=True)
class MailConfig:
    host: str
    sender: str
    recipients: tuple[str, ...]
    port: int = 587
    security: str = "starttls"
    username: str = ""
    timeout: float = 20.0
    ca_file: str | None = None

    def __post_init__(self) -> None:
        if not self.host.strip() or any(c in self.host for c in "\r\n\0 /"):
            raise ChannelError("the mail server is a host name like smtp.example.org")
        if not 0 < self.port < 65_536:
            raise ChannelError(f"a mail server port is 1-65535, not {self.port}")
        if self.security not in SECURITY:
            raise ChannelError(f"mail security is one of {', '.join(SECURITY)}")
        object.__setattr__(self, "sender", _address(self.sender, "sender"))
        recipients = tuple(_address(r, "recipient") for r in self.recipients if r.strip())
        if not recipients or len(recipients) > MAX_RECIPIENTS:
            raise ChannelError(f"mail goes to 1-{MAX_RECIPIENTS} recipients")
        object.__setattr__(self, "recipients", recipients)
        if any(c in self.username for c in "\r\n\0"):
            raise ChannelError("the mail user name has a line break or NUL")


def email_for(config: MailConfig, message: Message) -> EmailMessage:
    """The e-mail to send (pure: tests read it without a server)."""
    from email.message import EmailMessage  # noqa: PLC0415 - see the imports
    from email.utils import formatdate, make_msgid  # noqa: PLC0415

    mail = EmailMessage()
    mail["Subject"] = header_text(f"[taskgui] {message.title}")
    mail["From"] = config.sender
    mail["To"] = ", ".join(config.recipients)
    mail["Date"] = formatdate(message.at.timestamp(), localtime=False)
    mail["Message-ID"] = make_msgid("taskgui")
    mail["X-Taskgui-Event"] = message.trigger.value
    mail["X-Taskgui-Task-Id"] = str(message.task_id)
    error = message.error.replace("\0", "")
    lines = [
        one_line(message.title),
        "",
        message.text,
        "",
        f"Task: {one_line(message.task_name)} (id {message.task_id})",
        f"Finished: {message.at.isoformat()}",
    ]
    if message.host:
        lines.append(f"Host: {one_line(message.host)}")
    if error:
        lines += ["", "Error:", error[:20_000]]
    mail.set_content("\n".join(lines) + "\n")
    return mail


class MailChannel:
    """Sends messages through one SMTP server. ``send`` blocks: call it from the
    dispatcher."""

    name = "e-mail"

    def __init__(self, config: MailConfig, password: Callable[[], str | None]) -> None:
        self.config = config
        self._password = password

    def _context(self) -> ssl.SSLContext:
        import ssl  # noqa: PLC0415 - see the imports

        context = ssl.create_default_context()
        if self.config.ca_file:
            context.load_verify_locations(cafile=self.config.ca_file)
        return context

    def send(self, message: Message) -> None:
        import smtplib  # noqa: PLC0415 - see the imports
        import ssl  # noqa: PLC0415

        config = self.config
        mail = email_for(config, message)
        try:
            self._deliver(mail, config.recipients)
        except smtplib.SMTPAuthenticationError as error:
            raise ChannelError(
                f"the mail server {config.host} refused the user name or password "
                f"({error.smtp_code})"
            ) from None
        except (smtplib.SMTPException, OSError, ssl.SSLError) as error:
            raise ChannelError(
                f"could not send mail through {config.host}:{config.port}: {error}"
            ) from None

    def _deliver(self, mail: EmailMessage, recipients: Sequence[str]) -> None:
        import smtplib  # noqa: PLC0415 - see the imports

        config = self.config
        smtp: smtplib.SMTP
        if config.security == "tls":
            smtp = smtplib.SMTP_SSL(
                config.host, config.port, timeout=config.timeout, context=self._context()
            )
        else:
            smtp = smtplib.SMTP(config.host, config.port, timeout=config.timeout)
        with smtp:
            smtp.ehlo()
            if config.security == "starttls":
                if not smtp.has_extn("starttls"):
                    raise ChannelError(
                        f"the mail server {config.host} does not offer STARTTLS; "
                        "the password is not sent in the clear"
                    )
                smtp.starttls(context=self._context())
                smtp.ehlo()
            if config.username:
                password = self._password()
                if password is None:
                    raise ChannelError(
                        "the mail password is not in the keyring; enter it in Settings"
                    )
                smtp.login(config.username, password)
            smtp.send_message(mail, from_addr=config.sender, to_addrs=list(recipients))
