"""Where the notification preferences live, and the channels they describe.

The window (Settings dialog) writes them and both the window and ``taskgui daemon``
read them, so they sit here, below both, in the same ``QSettings`` store as the rest
of the preferences (organization and application "taskgui"). Nothing secret is kept:
the mail password is in the keyring (``system.notify.secrets``), found by the account
``user@host`` written here.

Before per-task rules there were two switches, "notify when a task gives up" and
"notify on each failure"; a store that has no default rule yet derives it from them,
so an upgrade changes nothing a person chose.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from PySide6.QtCore import QSettings

from taskgui.core.errors import InvalidTaskError
from taskgui.core.notify_rules import (
    DEFAULT_RULE,
    NotifyRule,
    NotifyWhen,
    QuietHours,
    parse_quiet_hours,
    parse_rule,
)
from taskgui.system.notify.channel import Channel, ChannelError
from taskgui.system.notify.mail import MailChannel, MailConfig
from taskgui.system.notify.secrets import SecretServiceStore
from taskgui.system.notify.webhook import WebhookChannel, WebhookConfig

log = logging.getLogger(__name__)

ORGANIZATION = "taskgui"
APPLICATION = "taskgui"

NOTIFY_EXHAUSTED = "notifications/exhausted"
NOTIFY_FAILURES = "notifications/each_failure"
DEFAULT_RULE_KEY = "notifications/default_rule"
QUIET_HOURS = "notifications/quiet_hours"
WEBHOOK_URL = "notifications/webhook_url"
WEBHOOK_PRESET = "notifications/webhook_preset"
MAIL_HOST = "notifications/mail_host"
MAIL_PORT = "notifications/mail_port"
MAIL_SECURITY = "notifications/mail_security"
MAIL_USER = "notifications/mail_user"
MAIL_FROM = "notifications/mail_from"
MAIL_TO = "notifications/mail_to"


def user_settings() -> QSettings:
    """The person's preferences (``~/.config/taskgui/taskgui.conf`` on Linux), the one
    file the window's settings and a daemon's notification settings are both read from."""
    return QSettings(
        QSettings.Format.NativeFormat, QSettings.Scope.UserScope, ORGANIZATION, APPLICATION
    )


def _flag(store: QSettings, key: str, default: bool) -> bool:
    value = store.value(key, default)
    if isinstance(value, str):  # INI files hold text
        return value.strip().lower() in ("true", "1", "yes", "on")
    return bool(value)


class NotifySettings:
    """Typed access to the notification preferences in ``store``."""

    def __init__(self, store: QSettings) -> None:
        self.store = store

    @classmethod
    def for_user(cls) -> NotifySettings:
        return cls(user_settings())

    def text(self, key: str) -> str:
        value = self.store.value(key, "")
        return value if isinstance(value, str) else ""

    def set_text(self, key: str, value: str) -> None:
        self.store.setValue(key, value.strip())
        self.store.sync()

    @property
    def default_rule(self) -> NotifyRule:
        """The rule of every task without its own (default: on-give-up)."""
        text = self.text(DEFAULT_RULE_KEY)
        if text:
            try:
                return parse_rule(text)
            except InvalidTaskError:
                log.warning("the stored default notification rule %r is not valid", text[:40])
                return DEFAULT_RULE
        if _flag(self.store, NOTIFY_FAILURES, False):
            return NotifyRule(when=NotifyWhen.FAILURE)
        if _flag(self.store, NOTIFY_EXHAUSTED, True):
            return DEFAULT_RULE
        return NotifyRule(when=NotifyWhen.NEVER)

    @default_rule.setter
    def default_rule(self, rule: NotifyRule) -> None:
        self.set_text(DEFAULT_RULE_KEY, rule.text)

    def clear_default_rule(self) -> None:
        """Follow the two old switches again (they changed)."""
        self.store.remove(DEFAULT_RULE_KEY)
        self.store.sync()

    @property
    def quiet_hours(self) -> QuietHours | None:
        try:
            return parse_quiet_hours(self.text(QUIET_HOURS))
        except InvalidTaskError:
            return None

    def webhook(self) -> WebhookConfig | None:
        """The webhook, if one is set; ChannelError if what is stored is not usable."""
        url = self.text(WEBHOOK_URL)
        if not url:
            return None
        return WebhookConfig(url=url, preset=self.text(WEBHOOK_PRESET) or "json")

    def mail(self) -> MailConfig | None:
        """The mail server, if one is set; ChannelError if it is not usable."""
        host = self.text(MAIL_HOST)
        if not host:
            return None
        try:
            port = int(self.text(MAIL_PORT) or "587")
        except ValueError:
            raise ChannelError("the mail server port is not a number") from None
        return MailConfig(
            host=host,
            port=port,
            security=self.text(MAIL_SECURITY) or "starttls",
            username=self.text(MAIL_USER),
            sender=self.text(MAIL_FROM),
            recipients=tuple(r.strip() for r in self.text(MAIL_TO).split(",")),
        )

    def mail_account(self) -> str:
        return f"{self.text(MAIL_USER)}@{self.text(MAIL_HOST)}"


def channels(
    settings: NotifySettings,
    *,
    sleep: Callable[[float], None] = time.sleep,
    bus_address: str = "SESSION",
) -> list[Channel]:
    """The outside channels the settings describe; an unusable one is logged and left
    out, so a typo in the mail settings never silences the webhook."""
    found: list[Channel] = []
    try:
        webhook = settings.webhook()
        if webhook is not None:
            found.append(WebhookChannel(webhook, sleep=sleep))
    except ChannelError as error:
        log.warning("the webhook is not used: %s", error)
    try:
        mail = settings.mail()
        if mail is not None:
            keyring = SecretServiceStore(settings.mail_account(), bus_address=bus_address)
            found.append(MailChannel(mail, keyring.lookup))
    except ChannelError as error:
        log.warning("e-mail is not used: %s", error)
    return found
