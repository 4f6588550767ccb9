"""The architecture rules that `make lint` cannot state as import contracts.

The layers themselves are import-linter contracts in pyproject.toml, and "only
core/clock.py reads the system clocks" is ruff's banned-api rule (TID251). What is
left: the runtime uses QtCore only (import-linter cannot forbid a part of an external
package), checked here by reading every module's imports; and no code above a seam
asks which implementation it has (no ``isinstance`` on a concrete store or scheduler
class outside the composition roots in app/).
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


# The classes behind the seams: code outside app/ knows them by their protocols.
CONCRETE = {
    "SqliteRepository",
    "MemoryRepository",
    "PostgresRepository",
    "SchedulerService",
    "RemoteScheduler",
}


def concrete_checks(source: str) -> list[str]:
    """``isinstance``/``issubclass`` calls that name a class of ``CONCRETE``."""
    found: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if not (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in ("isinstance", "issubclass")
            and len(node.args) == 2
        ):
            continue
        kinds = node.args[1].elts if isinstance(node.args[1], ast.Tuple) else [node.args[1]]
        names = {
            kind.id if isinstance(kind, ast.Name) else getattr(kind, "attr", "") for kind in kinds
        }
        if names & CONCRETE:
            found.append(f"line {node.lineno}: {', '.join(sorted(names & CONCRETE))}")
    return found


@pytest.mark.parametrize(
    "source",
    [
        "isinstance(store, SqliteRepository)",
        "if isinstance(service, (int, RemoteScheduler)): pass",
        "isinstance(repository, sqlite.SqliteRepository)",
    ],
)
def test_the_check_catches_a_concrete_isinstance(source: str) -> None:
    assert concrete_checks(source)


def test_no_isinstance_on_a_concrete_store_or_scheduler_outside_app() -> None:
    modules = [
        path
        for path in sorted(PACKAGE.rglob("*.py"))
        if path.relative_to(PACKAGE).parts[0] != "app"
    ]
    broken = {
        str(path.relative_to(PACKAGE)): found
        for path in modules
        if (found := concrete_checks(path.read_text(encoding="utf-8")))
    }
    assert not broken, broken


# Small modules with one job (DESIGN.md): a module past this has grown a second job;
# split it by job (see the README's layout) rather than raise the limit.
MAX_MODULE_LINES = 450


def long_modules(root: Path, limit: int = MAX_MODULE_LINES) -> dict[str, int]:
    """Every module under ``root`` longer than ``limit`` lines, with its length."""
    lengths = {
        str(path.relative_to(root)): len(path.read_text(encoding="utf-8").splitlines())
        for path in sorted(root.rglob("*.py"))
    }
    return {name: lines for name, lines in lengths.items() if lines > limit}


def test_the_line_check_catches_a_long_module(tmp_path: Path) -> None:
    (tmp_path / "short.py").write_text("x = 1\n" * MAX_MODULE_LINES, encoding="utf-8")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "long.py").write_text("x = 1\n" * (MAX_MODULE_LINES + 1), encoding="utf-8")
    assert long_modules(tmp_path) == {"sub/long.py": MAX_MODULE_LINES + 1}


def test_no_module_in_taskgui_is_over_the_line_limit() -> None:
    assert len(list(PACKAGE.rglob("*.py"))) > 50, "the package moved; point this test at it"
    assert not long_modules(PACKAGE), long_modules(PACKAGE)


# The program's shared defaults, each defined once in core/defaults.py: another module
# may name one (``DEFAULT_KILL_GRACE = KILL_GRACE``) but not give it a number of its own,
# and no parameter of these names defaults to a bare number.
SHARED_DEFAULTS = {
    "DEFAULT_WORKERS",
    "LOCK_WAIT",
    "SHUTDOWN_GRACE",
    "KILL_GRACE",
    "REQUEST_TIMEOUT",
}
DEFAULTED_PARAMETERS = {"workers", "kill_grace"}


def own_numbers_for_defaults(source: str) -> list[str]:
    """Numbers given to a shared default, or to a parameter that should use one."""
    found: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant):
            for target in node.targets:
                name = target.id if isinstance(target, ast.Name) else ""
                if any(shared in name for shared in SHARED_DEFAULTS):
                    found.append(f"line {node.lineno}: {name} = {node.value.value!r}")
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            arguments = node.args
            # Positional-only ones too (before a "/"): the defaults cover both kinds.
            positional = [*arguments.posonlyargs, *arguments.args]
            named = [*positional, *arguments.kwonlyargs]
            values: list[ast.expr | None] = [None] * (len(positional) - len(arguments.defaults))
            values += [*arguments.defaults, *arguments.kw_defaults]
            for argument, value in zip(named, values, strict=True):
                if argument.arg in DEFAULTED_PARAMETERS and isinstance(value, ast.Constant):
                    found.append(f"line {node.lineno}: {argument.arg}={value.value!r}")
    return found


@pytest.mark.parametrize(
    "source",
    [
        "SHUTDOWN_GRACE = 10.0",
        "REQUEST_TIMEOUT_SECONDS = 10.0",
        "def f(kill_grace: float = 5.0): pass",
        "def f(*, workers: int = 4): pass",
    ],
)
def test_the_check_catches_a_default_of_its_own(source: str) -> None:
    assert own_numbers_for_defaults(source)


def test_each_shared_default_is_defined_once() -> None:
    broken = {
        str(path.relative_to(PACKAGE)): found
        for path in sorted(PACKAGE.rglob("*.py"))
        if path.relative_to(PACKAGE) != Path("core/defaults.py")
        and (found := own_numbers_for_defaults(path.read_text(encoding="utf-8")))
    }
    assert not broken, broken
