"""taskgui: a desktop task scheduler with priorities, retries and durable SQLite state.

The package is layered (see DESIGN.md): ``core`` is pure scheduling logic, ``store``
persists it in SQLite, ``runtime`` drives it with QtCore timers and a thread pool, and
``ui`` shows it in Qt widgets. ``app`` and ``cli`` wire the layers together.
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

try:
    __version__: str = version("taskgui")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0.1.0"

__all__ = ["__version__"]
