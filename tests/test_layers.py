"""Enforce the layer rules from DESIGN.md by reading every module's imports.

Imports point down only: ``core`` is stdlib-only logic, ``store`` adds sqlite3 but no
Qt, ``runtime`` adds QtCore but no widgets, and ``ui`` reads the service, never the
database. A rule that is only written down rots, so this test parses the source with
``ast`` (nothing is imported or executed) and fails on the first forbidden edge.

It also enforces that only ``taskgui/core/clock.py`` reads the system clocks, so that
everything time-dependent can be driven by a fake clock in tests.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
PACKAGE_DIR = REPO_ROOT / "taskgui"

_ABOVE_UI = (
    "taskgui.cli",
    "taskgui.cli_format",
    "taskgui.cli_spec",
    "taskgui.cli_transfer",
    "taskgui.app",
    "taskgui.handover",
)

# Test and benchmark peers, never runtime dependencies: cron is taskgui's own (core).
_DEV_ONLY = ("croniter", "cron_descriptor", "cronsim")

# Layer (module prefix) -> module prefixes it must never import.
FORBIDDEN_IMPORTS: dict[str, tuple[str, ...]] = {
    "taskgui.core": (
        "PySide6",
        "shiboken6",
        "sqlite3",
        "taskgui.store",
        "taskgui.runtime",
        "taskgui.ui",
        *_ABOVE_UI,
        *_DEV_ONLY,
    ),
    "taskgui.store": (
        "PySide6",
        "shiboken6",
        "taskgui.runtime",
        "taskgui.ui",
        *_ABOVE_UI,
        *_DEV_ONLY,
    ),
    "taskgui.runtime": ("PySide6.QtWidgets", "PySide6.QtGui", "taskgui.ui", *_ABOVE_UI, *_DEV_ONLY),
    "taskgui.ui": ("taskgui.store", "sqlite3", *_ABOVE_UI, *_DEV_ONLY),
}

# The only module allowed to read the wall clock or the monotonic clock.
CLOCK_MODULE = "taskgui.core.clock"
CLOCK_FUNCTIONS = frozenset({"time", "time_ns", "monotonic", "monotonic_ns"})


@dataclass(frozen=True, slots=True)
class Violation:
    module: str
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.module}:{self.line}: {self.message}"


def _is_within(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


def module_name(path: Path, root: Path = REPO_ROOT) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _resolve_relative(module: str, is_package: bool, level: int, target: str | None) -> str:
    package = module if is_package else module.rpartition(".")[0]
    base_parts = package.split(".")
    if level > 1:
        base_parts = base_parts[: -(level - 1)]
    base = ".".join(base_parts)
    return f"{base}.{target}" if target else base


def imported_modules(
    tree: ast.AST, module: str, *, is_package: bool = False
) -> list[tuple[int, str]]:
    """Every module name ``tree`` imports, with line numbers.

    ``from a import b`` yields both ``a`` and ``a.b`` because ``b`` may be a submodule
    (``from PySide6 import QtWidgets``, ``from taskgui import store``). Calls to
    ``importlib.import_module`` / ``__import__`` with a literal name count too.
    """
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = _resolve_relative(module, is_package, node.level, node.module)
            else:
                base = node.module or ""
            found.append((node.lineno, base))
            found.extend(
                (node.lineno, f"{base}.{alias.name}") for alias in node.names if alias.name != "*"
            )
        elif (
            isinstance(node, ast.Call)
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
            and (
                (isinstance(node.func, ast.Name) and node.func.id == "__import__")
                or (isinstance(node.func, ast.Attribute) and node.func.attr == "import_module")
            )
        ):
            found.append((node.lineno, node.args[0].value))
    return found


def layer_violations(source: str, module: str, *, is_package: bool = False) -> list[Violation]:
    tree = ast.parse(source)
    violations: list[Violation] = []
    for layer, forbidden in FORBIDDEN_IMPORTS.items():
        if not _is_within(module, layer):
            continue
        for line, name in imported_modules(tree, module, is_package=is_package):
            for banned in forbidden:
                if _is_within(name, banned):
                    violations.append(
                        Violation(module, line, f"{layer} must not import {banned} ({name})")
                    )
    return violations


def clock_violations(source: str, module: str) -> list[Violation]:
    """Calls to ``time.time()`` / ``time.monotonic()`` (and ``_ns``) outside the clock."""
    if module == CLOCK_MODULE:
        return []
    tree = ast.parse(source)
    time_aliases = {
        alias.asname or alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
        if alias.name == "time"
    }
    violations: list[Violation] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "time" and not node.level:
            violations.extend(
                Violation(module, node.lineno, f"imports time.{alias.name}; use a Clock")
                for alias in node.names
                if alias.name in CLOCK_FUNCTIONS or alias.name == "*"
            )
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in CLOCK_FUNCTIONS
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id in time_aliases
        ):
            violations.append(
                Violation(module, node.lineno, f"calls time.{node.func.attr}(); use a Clock")
            )
    return violations


def _package_sources() -> list[tuple[Path, str]]:
    return [(path, module_name(path)) for path in sorted(PACKAGE_DIR.rglob("*.py"))]


def test_the_package_is_found() -> None:
    modules = {name for _, name in _package_sources()}
    assert {"taskgui", "taskgui.__main__"} <= modules


def test_layers_import_only_downwards() -> None:
    violations = [
        violation
        for path, module in _package_sources()
        for violation in layer_violations(
            path.read_text(encoding="utf-8"), module, is_package=path.name == "__init__.py"
        )
    ]
    assert not violations, "layer rule broken:\n" + "\n".join(map(str, violations))


def test_only_the_clock_module_reads_system_time() -> None:
    violations = [
        violation
        for path, module in _package_sources()
        for violation in clock_violations(path.read_text(encoding="utf-8"), module)
    ]
    assert not violations, "system clock read outside core/clock.py:\n" + "\n".join(
        map(str, violations)
    )


# --- the checkers themselves, so a broken checker cannot pass silently -------------------


@pytest.mark.parametrize(
    ("module", "source"),
    [
        ("taskgui.core.engine", "from PySide6.QtCore import QTimer"),
        ("taskgui.core.engine", "import sqlite3"),
        ("taskgui.core.engine", "from taskgui.store import repository"),
        ("taskgui.core.engine", "from ..ui import window"),
        ("taskgui.core.engine", "import importlib\nimportlib.import_module('PySide6')"),
        ("taskgui.store.repository", "from PySide6 import QtCore"),
        ("taskgui.store.repository", "from .. import runtime"),
        ("taskgui.runtime.service", "from PySide6 import QtWidgets"),
        ("taskgui.runtime.service", "from PySide6.QtGui import QIcon"),
        ("taskgui.runtime.service", "import taskgui.app"),
        ("taskgui.ui.window", "from taskgui.store.sqlite import SqliteRepository"),
        ("taskgui.ui.window", "from ..store import sqlite"),
        ("taskgui.ui.window", "import sqlite3 as db"),
        ("taskgui.ui.window", "def f():\n    import taskgui.cli\n"),
    ],
)
def test_layer_checker_catches_violation(module: str, source: str) -> None:
    assert layer_violations(source, module)


@pytest.mark.parametrize(
    ("module", "source"),
    [
        ("taskgui.core.engine", "import heapq\nfrom taskgui.core.clock import Clock"),
        ("taskgui.core.engine", "from .clock import Clock"),
        ("taskgui.store.repository", "import sqlite3\nfrom taskgui.core import model"),
        ("taskgui.runtime.service", "from PySide6.QtCore import QTimer\nimport taskgui.store"),
        ("taskgui.ui.window", "from PySide6 import QtWidgets\nfrom taskgui.runtime import x"),
        ("taskgui.app", "import taskgui.store\nimport taskgui.ui\nimport sqlite3"),
        ("taskgui.storefront", "from PySide6 import QtWidgets"),  # not the store layer
    ],
)
def test_layer_checker_allows_downward_imports(module: str, source: str) -> None:
    assert layer_violations(source, module) == []


def test_relative_imports_resolve_from_packages_and_modules() -> None:
    tree = ast.parse("from . import engine\nfrom ..store import sqlite")
    # taskgui/ui/window.py: "." is taskgui.ui
    in_module = {name for _, name in imported_modules(tree, "taskgui.ui.window")}
    assert {"taskgui.ui.engine", "taskgui.store.sqlite"} <= in_module
    # taskgui/ui/widgets/__init__.py: "." is the package itself
    in_package = {name for _, name in imported_modules(tree, "taskgui.ui.widgets", is_package=True)}
    assert {"taskgui.ui.widgets.engine", "taskgui.ui.store.sqlite"} <= in_package


@pytest.mark.parametrize(
    "source",
    [
        "import time\nnow = time.time()",
        "import time\nstart = time.monotonic()",
        "import time as _t\nstart = _t.monotonic_ns()",
        "from time import monotonic",
        "from time import time as wall",
    ],
)
def test_clock_checker_catches_direct_clock_reads(source: str) -> None:
    assert clock_violations(source, "taskgui.runtime.service")
    assert clock_violations(source, CLOCK_MODULE) == []


@pytest.mark.parametrize(
    "source",
    [
        "import time\nelapsed = time.perf_counter()",
        "import time\ntime.sleep(0)",
        "def f(clock):\n    return clock.monotonic()",
        "import datetime\nx = datetime.time()",
    ],
)
def test_clock_checker_allows_other_calls(source: str) -> None:
    assert clock_violations(source, "taskgui.runtime.service") == []
