"""Qt's first import, without PySide6 keeping the source of every module after it.

PySide6 (``shibokensupport.feature``) looks at each module imported after it for the
text "PySide6", to know which modules its ``__feature__`` switches (``snake_case``,
``true_property``) apply to. It reads each one with ``inspect.getsource``, so
``linecache`` keeps every line of every module the program imports from then on: for
the daemon some 195 files and 67,000 lines, 6 MB of its resident set (21.2 MB of
imports after QtCore, 15.2 MB with this; the window imports more). The memory is
never given back: nothing clears that cache, and freed small objects would stay in
pymalloc's arenas anyway.

``import_qt`` imports QtCore and puts in the same question answered from the file's
bytes, read and dropped (same answer: ``"PySide6" in source``, as
``tests/app/test_qt_import.py`` checks against PySide6's own function for every
module loaded). A PySide6 without that function (its internals may change) is left
as it is. taskgui selects no feature, so the answer changes nothing else.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from types import ModuleType

__all__ = ["import_qt", "uses_pyside"]

_FEATURE_MODULE = "shibokensupport.feature"
_CHECK = "_mod_uses_pyside"


def uses_pyside(module: ModuleType, fallback: Callable[[ModuleType], bool]) -> bool:
    """Whether ``module``'s source names PySide6, read from its file and not kept."""
    path = getattr(module, "__file__", None)
    if not isinstance(path, str) or not path.endswith(".py"):
        return fallback(module)  # built in, compiled only, or an extension: PySide6's rule
    try:
        with open(path, "rb") as source:
            return b"PySide6" in source.read()
    except OSError:  # as inspect.getsource failing: a module without its source file
        return False


def import_qt() -> None:
    """Import QtCore, then have PySide6 check later imports without caching them."""
    import PySide6.QtCore  # noqa: F401, PLC0415 - the import this module is about

    feature = sys.modules.get(_FEATURE_MODULE)
    original = getattr(feature, _CHECK, None)
    if feature is None or not callable(original) or getattr(original, "lean", False):
        return

    def check(module: ModuleType) -> bool:
        return uses_pyside(module, original)

    check.lean = True  # type: ignore[attr-defined]  # installed once, however often called
    check.original = original  # type: ignore[attr-defined]  # for the equivalence test
    setattr(feature, _CHECK, check)
