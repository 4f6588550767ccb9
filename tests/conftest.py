"""Shared test configuration: Qt always runs headless."""

from __future__ import annotations

import os

# Must happen before any QApplication exists, so it runs when pytest imports this file.
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
