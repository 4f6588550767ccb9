"""UI tests never read or write the person's real settings.

``Settings.for_user()`` (used by ``taskgui.app``) opens the native QSettings store;
here it is pointed into the test's temporary folder. Qt keeps one search path per
process, so it is set again for every test rather than relying on XDG_CONFIG_HOME.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QSettings


@pytest.fixture(autouse=True)
def private_settings(tmp_path: Path) -> Path:
    folder = tmp_path / "qsettings"
    for settings_format in (QSettings.Format.NativeFormat, QSettings.Format.IniFormat):
        QSettings.setPath(settings_format, QSettings.Scope.UserScope, str(folder))
    return folder
