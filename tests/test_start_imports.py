"""What a start on a file database imports: never the PostgreSQL driver.

psycopg (about 0.25 s to import) serves a postgresql:// schedule only. Until
2026-12-02 every CLI command and every window imported it anyway, through modules that
name the shared schedule's helpers at their top: ``taskgui list`` took 1.2 s on an
empty account, 0.6 s after. Also no ``importlib.metadata`` (it brings the email
package, about 60 ms): the version is a constant. Nor the mail and HTTP stack, which
only a notice sent outside needs. Each check runs a fresh interpreter,
since this one has imported everything already.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from taskgui.core import digest
from taskgui.system.process_tree import new_mark
from tests.helpers.processes import fresh_python

ROOT = Path(__file__).resolve().parents[1]
# Loaded only for a shared schedule, to look the version up, or to send mail or post a
# webhook (smtplib and urllib.request bring ssl, http.client and the email package:
# 50-90 ms): never on a file's start.
NOT_ON_A_FILE = ("psycopg", "importlib.metadata", "smtplib", "urllib.request", "email.message")


def _loaded_after(code: str, tmp_path: Path) -> set[str]:
    """The modules of ``NOT_ON_A_FILE`` that running ``code`` loaded."""
    probe = (
        f"{code}\nimport json, sys\n"
        f"print(json.dumps([n for n in {NOT_ON_A_FILE!r} if n in sys.modules]))"
    )
    env = {
        "HOME": str(tmp_path),
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "QT_QPA_PLATFORM": "offscreen",
    }
    result = fresh_python(probe, env=env)
    assert result.returncode == 0, result.stderr
    return set(json.loads(result.stdout.splitlines()[-1]))


def test_a_cli_command_on_a_file_loads_no_driver(tmp_path: Path) -> None:
    code = "from taskgui import __main__ as m\nm.main(['list'])"
    assert _loaded_after(code, tmp_path) == set()


@pytest.mark.parametrize("root", ["taskgui.app.window", "taskgui.app.daemon"])
def test_the_composition_roots_load_no_driver(root: str, tmp_path: Path) -> None:
    assert _loaded_after(f"import {root}", tmp_path) == set()


@pytest.mark.parametrize("root", ["taskgui.app.window", "taskgui.app.daemon"])
def test_the_composition_roots_load_no_openssl(root: str, tmp_path: Path) -> None:
    """``hashlib`` (and ``secrets``, through ``hmac``) load libcrypto: 3.7 MB resident
    for two BLAKE2b digests and a random mark (``core.digest``)."""
    code = f"import {root}, json, sys\nprint(json.dumps('_hashlib' in sys.modules))"
    result = fresh_python(code, env={"HOME": str(tmp_path), "QT_QPA_PLATFORM": "offscreen"})
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout.splitlines()[-1]) is False


def test_the_digest_is_hashlibs_own_blake2b() -> None:
    """The same function, so a run mark or a spread offset is what it was before."""
    assert digest.blake2b is hashlib.blake2b
    assert len(new_mark()) == 32 and new_mark() != new_mark()


def test_a_shared_schedule_still_finds_its_driver(tmp_path: Path) -> None:
    """The other side: the window's shared path imports what it needs where it runs."""
    assert "psycopg" in _loaded_after("import taskgui.app.shared_window", tmp_path)


def test_the_window_imports_the_task_dialog_only_when_one_opens(tmp_path: Path) -> None:
    """Its modules cost 50-70 ms of a window's start, before any is asked for (issue 16)."""
    code = (
        "import taskgui.app.window, json, sys\n"
        "print(json.dumps('taskgui.ui.task_dialog.dialog' in sys.modules))"
    )
    result = fresh_python(code, env={"HOME": str(tmp_path), "QT_QPA_PLATFORM": "offscreen"})
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout.splitlines()[-1]) is False
