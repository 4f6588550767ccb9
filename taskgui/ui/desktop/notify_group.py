"""The Settings dialog's notifications: the default rule, quiet hours, the channels.

What it writes is read by the window and by ``taskgui daemon`` (``NotifySettings``).
The mail password goes to the desktop's keyring when the dialog is applied (a local
D-Bus call; the keyring may show its own unlock prompt), never to the settings file;
a blank password field keeps the one already stored.
"""

from __future__ import annotations

from PySide6.QtWidgets import QComboBox, QFormLayout, QGroupBox, QLineEdit, QWidget

from taskgui.core.notify_rules import parse_quiet_hours
from taskgui.runtime.notify_settings import (
    MAIL_FROM,
    MAIL_HOST,
    MAIL_PORT,
    MAIL_SECURITY,
    MAIL_TO,
    MAIL_USER,
    QUIET_HOURS,
    WEBHOOK_PRESET,
    WEBHOOK_URL,
    NotifySettings,
)
from taskgui.system.notify.mail import SECURITY
from taskgui.system.notify.secrets import SecretServiceStore
from taskgui.system.notify.webhook import PRESETS
from taskgui.ui.notify.rule_picker import RulePicker

_PRESET_NAMES = {"json": "taskgui JSON", "ntfy": "ntfy", "slack": "Slack-compatible"}


class NotifyGroup(QGroupBox):
    """See the module docstring. ``apply`` raises TaskguiError for what cannot be used."""

    def __init__(self, settings: NotifySettings, parent: QWidget | None = None) -> None:
        super().__init__("Notify me", parent)
        self.settings = settings
        self.rule = RulePicker(allow_default=False, parent=self)
        self.rule.set_rule(settings.default_rule)
        self.quiet = self._line(QUIET_HOURS, "e.g. 22:00-07:00 (blank: none)")
        self.webhook = self._line(WEBHOOK_URL, "https://ntfy.sh/my-topic (blank: none)")
        self.preset = QComboBox(self)
        self.preset.setAccessibleName("Webhook format")
        for preset in PRESETS:
            self.preset.addItem(_PRESET_NAMES[preset], preset)
        self.preset.setCurrentIndex(max(0, self.preset.findData(settings.text(WEBHOOK_PRESET))))
        self.mail_host = self._line(MAIL_HOST, "smtp.example.org (blank: no mail)")
        self.mail_port = self._line(MAIL_PORT, "587")
        self.mail_security = QComboBox(self)
        self.mail_security.setAccessibleName("Mail security")
        for value in SECURITY:
            self.mail_security.addItem(value.upper() if value != "none" else "None", value)
        self.mail_security.setCurrentIndex(
            max(0, self.mail_security.findData(settings.text(MAIL_SECURITY) or "starttls"))
        )
        self.mail_user = self._line(MAIL_USER, "user name (blank: no login)")
        self.mail_password = QLineEdit(self)
        self.mail_password.setEchoMode(QLineEdit.EchoMode.Password)
        self.mail_password.setAccessibleName("Mail password")
        self.mail_password.setPlaceholderText("kept in the keyring; blank keeps it")
        self.mail_from = self._line(MAIL_FROM, "taskgui@example.org")
        self.mail_to = self._line(MAIL_TO, "me@example.org, other@example.org")
        form = QFormLayout(self)
        form.addRow("&When:", self.rule)
        form.addRow("&Quiet hours:", self.quiet)
        form.addRow("Web&hook:", self.webhook)
        form.addRow("Webhook &format:", self.preset)
        form.addRow("Mail &server:", self.mail_host)
        form.addRow("Port:", self.mail_port)
        form.addRow("Security:", self.mail_security)
        form.addRow("User:", self.mail_user)
        form.addRow("Password:", self.mail_password)
        form.addRow("From:", self.mail_from)
        form.addRow("To:", self.mail_to)

    def _line(self, key: str, placeholder: str) -> QLineEdit:
        line = QLineEdit(self.settings.text(key), self)
        line.setPlaceholderText(placeholder)
        line.setAccessibleName(placeholder.split(" (", maxsplit=1)[0])
        return line

    def apply(self) -> None:
        """Check everything, then save it; nothing is saved if something is wrong."""
        settings = self.settings
        parse_quiet_hours(self.quiet.text())  # raises with the expected form
        rule = self.rule.rule()
        values = {
            QUIET_HOURS: self.quiet.text(),
            WEBHOOK_URL: self.webhook.text(),
            WEBHOOK_PRESET: str(self.preset.currentData()),
            MAIL_HOST: self.mail_host.text(),
            MAIL_PORT: self.mail_port.text(),
            MAIL_SECURITY: str(self.mail_security.currentData()),
            MAIL_USER: self.mail_user.text(),
            MAIL_FROM: self.mail_from.text(),
            MAIL_TO: self.mail_to.text(),
        }
        probe = NotifySettings(_Values(values))  # type: ignore[arg-type]
        probe.webhook()  # raise ChannelError for a URL or a mail setup that is unusable
        probe.mail()
        for key, value in values.items():
            settings.set_text(key, value)
        if rule is not None:
            settings.default_rule = rule
        password = self.mail_password.text()
        if password and values[MAIL_HOST].strip():
            SecretServiceStore(settings.mail_account()).store(password)
            self.mail_password.clear()


class _Values:
    """Just enough of QSettings for NotifySettings to check values before they are kept."""

    def __init__(self, values: dict[str, str]) -> None:
        self._values = {key: value.strip() for key, value in values.items()}

    def value(self, key: str, default: object = None) -> object:
        return self._values.get(key, default)
