"""The two architecture rules that `make lint` cannot state as import contracts.

The layers themselves are import-linter contracts in pyproject.toml, and "only
core/clock.py reads the system clocks" is ruff's banned-api rule (TID251). What is
left: the runtime uses QtCore only (import-linter cannot forbid a part of an external
package), checked here by reading every module's imports.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "taskgui"
WIDGET_MODULES = ("PySide6.QtWidgets", "PySide6.QtGui")


def imported_names(tree: ast.AST) -> list[tuple[int, str]]:
    """Each module an import names, with ``from a import b`` read as ``a.b`` too."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.append((node.lineno, node.module))
            found.extend((node.lineno, f"{node.module}.{alias.name}") for alias in node.names)
    return found


def widget_imports(source: str) -> list[str]:
    return [
        f"line {line}: {name}"
        for line, name in imported_names(ast.parse(source))
        if any(name == banned or name.startswith(banned + ".") for banned in WIDGET_MODULES)
    ]


@pytest.mark.parametrize(
    "source",
    [
        "from PySide6.QtWidgets import QWidget",
        "from PySide6 import QtGui",
        "def f():\n    import PySide6.QtWidgets\n",
    ],
)
def test_the_check_catches_a_widget_import(source: str) -> None:
    assert widget_imports(source)


def test_the_runtime_uses_qtcore_only() -> None:
    modules = sorted((PACKAGE / "runtime").rglob("*.py"))
    assert modules, "the runtime package moved; point this test at it"
    broken = {
        str(path.relative_to(PACKAGE)): found
        for path in modules
        if (found := widget_imports(path.read_text(encoding="utf-8")))
    }
    assert not broken, broken
