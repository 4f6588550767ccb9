"""Fixtures shared by the CLI tests."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "t.sqlite3"
