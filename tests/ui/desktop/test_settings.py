"""Preferences persist (on a file in tmp_path, never the real config) and autostart works."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QSettings
from pytestqt.qtbot import QtBot

from taskgui.core.notify_rules import parse_rule
from taskgui.core.wake import parse_wake_policy
from taskgui.runtime.notify_settings import NotifySettings
from taskgui.runtime.wake_settings import read_wake_policy
from taskgui.ui.desktop.autostart import (
    Autostart,
    autostart_path,
    desktop_entry,
    exec_value,
    launch_command,
    quote_argument,
)
from taskgui.ui.desktop.settings import DEFAULT_WORKERS, Settings
from taskgui.ui.desktop.settings_dialog import SettingsDialog
from tests.helpers.jeepney_fakes import FakeKeyring
from tests.helpers.private_bus import private_bus


def test_defaults_are_the_documented_ones(tmp_path: Path) -> None:
    settings = Settings.at(str(tmp_path / "taskgui.ini"))
    assert settings.workers == DEFAULT_WORKERS
    assert settings.notify_exhausted is True
    assert settings.notify_failures is False
    assert settings.start_minimized is False
    assert settings.close_hint_shown is False
    assert settings.window_geometry is None


def test_settings_persist_across_restarts(tmp_path: Path) -> None:
    path = str(tmp_path / "taskgui.ini")
    settings = Settings.at(path)
    settings.workers = 7
    settings.notify_exhausted = False
    settings.notify_failures = True
    settings.start_minimized = True
    settings.close_hint_shown = True
    settings.window_geometry = b"\x01\x02geometry"
    again = Settings.at(path)  # a new QSettings on the same file: a restart
    assert again.workers == 7
    assert (again.notify_exhausted, again.notify_failures) == (False, True)
    assert (again.start_minimized, again.close_hint_shown) == (True, True)
    assert again.window_geometry == b"\x01\x02geometry"
    stored = Path(path).read_text(encoding="latin-1")
    assert "@ByteArray(" in stored and "PyObject" not in stored  # portable, not a pickle


def test_a_settings_object_can_wrap_any_qsettings(tmp_path: Path) -> None:
    store = QSettings(str(tmp_path / "other.ini"), QSettings.Format.IniFormat)
    store.setValue("scheduler/workers", "not a number")
    store.setValue("notifications/exhausted", "false")
    settings = Settings(store)
    assert settings.workers == DEFAULT_WORKERS
    assert settings.notify_exhausted is False
    settings.workers = 1_000
    assert settings.workers == 64  # kept within what the dialog offers


# -------------------------------------------------------------------- autostart


def test_the_autostart_entry_respects_xdg_config_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    assert autostart_path() == tmp_path / "config" / "autostart" / "taskgui.desktop"
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", "relative/ignored")
    assert autostart_path() == tmp_path / "home" / ".config" / "autostart" / "taskgui.desktop"
    monkeypatch.delenv("XDG_CONFIG_HOME")
    assert autostart_path() == tmp_path / "home" / ".config" / "autostart" / "taskgui.desktop"


def test_autostart_is_written_and_removed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    autostart = Autostart.for_user(["/usr/bin/python3", "-m", "taskgui"])
    assert not autostart.enabled
    autostart.enable()
    entry = tmp_path / "config" / "autostart" / "taskgui.desktop"
    assert autostart.enabled and entry.is_file()
    text = entry.read_text()
    assert text.startswith("[Desktop Entry]\nType=Application\n")
    assert "Exec=/usr/bin/python3 -m taskgui\n" in text
    assert list(entry.parent.iterdir()) == [entry]  # no partial file left behind
    autostart.disable()
    assert not entry.exists() and not autostart.enabled
    autostart.disable()  # already gone: fine


def test_the_launch_command_is_this_installation(tmp_path: Path) -> None:
    script = tmp_path / "bin" / "taskgui"
    script.parent.mkdir()
    script.write_text("#!/bin/sh\n")
    assert launch_command(argv0=str(script), executable="/py") == [str(script)]
    assert launch_command(argv0="/somewhere/__main__.py", executable="/py") == [
        "/py",
        "-m",
        "taskgui",
    ]
    database = tmp_path / "my schedule.sqlite3"
    assert launch_command(database, argv0="x", executable="/py")[-2:] == ["--db", str(database)]


def test_exec_arguments_are_quoted_by_the_desktop_entry_rules() -> None:
    assert quote_argument("plain") == "plain"
    assert quote_argument("") == '""'
    assert quote_argument("100%") == "100%%"
    assert quote_argument("with space") == '"with space"'
    assert quote_argument('a"b$c`d\\e') == '"a\\"b\\$c\\`d\\\\e"'
    # Then the whole value is a desktop-entry string, whose own escape doubles "\".
    assert exec_value(["/opt/my apps/py", "-m", "taskgui", "--db", "/x/a\\b"]) == (
        '"/opt/my apps/py" -m taskgui --db "/x/a\\\\\\\\b"'
    )
    assert "Exec=taskgui\n" in desktop_entry(["taskgui"])


def test_the_dialog_writes_the_choices_and_the_entry(tmp_path: Path, qtbot: QtBot) -> None:
    settings = Settings.at(str(tmp_path / "taskgui.ini"))
    autostart = Autostart(tmp_path / "autostart" / "taskgui.desktop", ("taskgui",))
    dialog = SettingsDialog(settings, autostart, tray_available=False)
    qtbot.addWidget(dialog)
    assert not dialog.start_minimized.isEnabled()  # no tray to start into
    assert dialog.notifications.rule.rule() == parse_rule("on-give-up")
    dialog.workers.setValue(2)
    dialog.notifications.rule.set_rule(parse_rule("never"))
    dialog.start_at_login.setChecked(True)
    with qtbot.waitSignal(dialog.applied):
        assert dialog.apply()
    assert autostart.enabled
    again = Settings.at(str(tmp_path / "taskgui.ini"))
    assert (again.workers, again.notify.default_rule) == (2, parse_rule("never"))
    dialog.start_at_login.setChecked(False)
    dialog.apply()
    assert not autostart.enabled


def test_the_wake_up_policy_is_chosen_and_kept(tmp_path: Path, qtbot: QtBot) -> None:
    path = str(tmp_path / "taskgui.ini")
    settings = Settings.at(path)
    assert settings.wake_policy == parse_wake_policy("spread:10m")  # the calm default
    dialog = SettingsDialog(settings, Autostart(tmp_path / "a.desktop", ("taskgui",)))
    qtbot.addWidget(dialog)
    assert dialog.on_wake.currentData() == "spread:10m"
    dialog.on_wake.setCurrentIndex(dialog.on_wake.findData("ask"))
    assert dialog.apply()
    assert Settings.at(path).wake_policy == parse_wake_policy("ask")
    # A value written elsewhere is shown as it is; nonsense falls back to the default.
    Settings.at(path).wake_policy = parse_wake_policy("spread:45m")
    again = SettingsDialog(Settings.at(path), Autostart(tmp_path / "a.desktop", ("taskgui",)))
    qtbot.addWidget(again)
    assert again.on_wake.currentData() == "spread:45m"
    assert again.on_wake.currentText() == "Spread the catch-ups over 45m"
    store = QSettings(path, QSettings.Format.IniFormat)
    store.setValue("wake/policy", "<b>whenever</b>")
    store.sync()
    assert Settings.at(path).wake_policy == parse_wake_policy("spread:10m")


def test_a_daemon_s_worker_count_is_not_editable_here(tmp_path: Path, qtbot: QtBot) -> None:
    settings = Settings.at(str(tmp_path / "taskgui.ini"))
    autostart = Autostart(tmp_path / "taskgui.desktop", ("taskgui",))
    dialog = SettingsDialog(
        settings, autostart, workers_editable=False, workers_note="Set by the daemon."
    )
    qtbot.addWidget(dialog)
    assert not dialog.workers.isEnabled()
    dialog.workers.setValue(9)
    dialog.apply()
    assert Settings.at(str(tmp_path / "taskgui.ini")).workers == DEFAULT_WORKERS


def test_a_shared_schedules_worker_count_shows_the_nodes_not_this_machines(
    tmp_path: Path, qtbot: QtBot
) -> None:
    """A trial: on a shared schedule Settings > Workers showed this machine's setting (4),
    which no node uses, beside "set by the process that runs this schedule"."""
    settings = Settings.at(str(tmp_path / "taskgui.ini"))
    autostart = Autostart(tmp_path / "taskgui.desktop", ("taskgui",))
    settings.workers = 3
    dialog = SettingsDialog(settings, autostart, workers_editable=False, workers_elsewhere=12)
    qtbot.addWidget(dialog)
    assert dialog.workers.value() == 12 and dialog.workers.text() == "12"
    dialog.apply()
    assert Settings.at(str(tmp_path / "taskgui.ini")).workers == 3  # never saved as its own
    unknown = SettingsDialog(settings, autostart, workers_editable=False)
    qtbot.addWidget(unknown)
    assert unknown.workers.text() == "not known here"  # a daemon's: its size is not stored
    many = SettingsDialog(settings, autostart, workers_editable=False, workers_elsewhere=300)
    qtbot.addWidget(many)
    assert many.workers.value() == 300  # nodes take --workers up to 1,024, past this box's 64


def test_the_user_store_is_private_to_each_test(private_settings: Path) -> None:
    settings = Settings.for_user()
    settings.workers = 5
    assert Path(settings.store.fileName()).is_relative_to(private_settings)


def test_the_notification_settings_are_checked_then_kept_and_the_password_goes_to_the_keyring(
    tmp_path: Path, qtbot: QtBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    warnings: list[str] = []
    monkeypatch.setattr(
        "taskgui.ui.desktop.settings_dialog.warn", lambda _p, _t, text: warnings.append(text)
    )
    settings = Settings.at(str(tmp_path / "taskgui.ini"))
    autostart = Autostart(tmp_path / "autostart" / "taskgui.desktop", ("taskgui",))
    dialog = SettingsDialog(settings, autostart)
    qtbot.addWidget(dialog)
    group = dialog.notifications
    group.quiet.setText("late evening")
    assert not dialog.apply()
    assert "22:00-07:00" in warnings[-1]
    group.quiet.setText("22:00-07:00")
    group.webhook.setText("ftp://example.org/")
    assert not dialog.apply() and "http" in warnings[-1]
    assert settings.notify.quiet_hours is None  # nothing kept from a refused apply
    group.webhook.setText("https://ntfy.example.org/alerts")
    group.preset.setCurrentIndex(group.preset.findData("ntfy"))
    group.mail_host.setText("smtp.example.org")
    group.mail_user.setText("me")
    group.mail_from.setText("taskgui@example.org")
    group.mail_to.setText("me@example.org")
    group.mail_password.setText("s3cret")
    with private_bus() as address:
        monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", address)
        keyring = FakeKeyring(address)
        try:
            assert dialog.apply(), warnings
        finally:
            keyring.close()
    [(attributes, value, _type)] = keyring.items.values()
    assert attributes["account"] == "me@smtp.example.org" and value == b"s3cret"
    assert group.mail_password.text() == ""
    again = NotifySettings(Settings.at(str(tmp_path / "taskgui.ini")).store)
    webhook, mail = again.webhook(), again.mail()
    assert webhook is not None and webhook.preset == "ntfy"
    assert mail is not None and mail.recipients == ("me@example.org",)
    assert again.quiet_hours is not None and again.quiet_hours.text == "22:00-07:00"
    assert "s3cret" not in (tmp_path / "taskgui.ini").read_text()


def test_another_process_s_change_of_the_wake_policy_is_read(tmp_path: Path) -> None:
    """The daemon reads the policy at each wake-up; the window may have changed it."""
    path = str(tmp_path / "taskgui.ini")
    daemon_side = QSettings(path, QSettings.Format.IniFormat)
    assert read_wake_policy(daemon_side) == parse_wake_policy("spread:10m")
    Settings.at(path).wake_policy = parse_wake_policy("now")  # the window, elsewhere
    assert read_wake_policy(daemon_side) == parse_wake_policy("now")


def test_the_window_and_a_daemon_read_the_same_preferences_file() -> None:
    window_file = Settings.for_user().store.fileName()
    assert window_file == NotifySettings.for_user().store.fileName()
    assert window_file.endswith("taskgui/taskgui.conf")
