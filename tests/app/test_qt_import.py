"""Qt's first import leaves no module's source in memory (``taskgui.app.qt_import``).

PySide6 reads every module imported after it through ``inspect.getsource`` to look
for "PySide6", and ``linecache`` then keeps them all: 6 MB of the daemon's resident
set. The entry imports Qt through ``import_qt``, which asks the same question of the
file's bytes. Checked in a fresh interpreter (this one imported everything long ago),
and against PySide6's own answer for every module this one has loaded.
"""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path

from taskgui.app.qt_import import import_qt, uses_pyside
from tests.helpers.processes import fresh_python

ROOT = Path(__file__).resolve().parents[2]

_PROBE = """
import json, linecache, sys
{first}
import taskgui.app.daemon, taskgui.app.window
cached = [name for name in linecache.cache if "taskgui" in name]
print(json.dumps({{"cached": cached, "modules": len(sys.modules)}}))
"""


def _cached_after(first: str, tmp_path: Path) -> list[str]:
    env = {"HOME": str(tmp_path), "QT_QPA_PLATFORM": "offscreen"}
    result = fresh_python(_PROBE.format(first=first), env=env, timeout=120)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout.splitlines()[-1])
    assert report["modules"] > 300  # the composition roots and all below them
    return list(report["cached"])


def test_the_entrys_qt_import_keeps_no_source_of_what_follows(tmp_path: Path) -> None:
    first = "from taskgui import __main__ as entry\nentry._import_qt()"
    assert _cached_after(first, tmp_path) == []


def test_a_plain_qt_import_would_keep_every_module_after_it(tmp_path: Path) -> None:
    """What the entry avoids (and what this test would see without it)."""
    cached = _cached_after("import PySide6.QtCore", tmp_path)
    assert len(cached) > 100 and any(name.endswith("runtime/service.py") for name in cached)


def test_the_answer_is_pyside6s_own_for_every_loaded_module() -> None:
    import_qt()
    feature = sys.modules["shibokensupport.feature"]
    check = feature._mod_uses_pyside
    assert check.lean and check.original is not check
    modules = [
        module
        for module in list(sys.modules.values())
        if isinstance(getattr(module, "__file__", None), str)
    ]
    assert len(modules) > 300
    differ = [
        module.__name__
        for module in modules
        if uses_pyside(module, check.original) != check.original(module)
    ]
    assert differ == []
    assert uses_pyside(importlib.import_module("taskgui.runtime.service"), check.original)
    assert not uses_pyside(importlib.import_module("taskgui.core.task"), check.original)


def test_importing_twice_installs_the_check_once() -> None:
    import_qt()
    check = sys.modules["shibokensupport.feature"]._mod_uses_pyside
    import_qt()
    assert sys.modules["shibokensupport.feature"]._mod_uses_pyside is check
