"""taskgui: a desktop task scheduler with priorities, retries and durable SQLite state.

The package is layered (see DESIGN.md): ``core`` is pure scheduling logic, ``store``
persists it in SQLite, ``runtime`` drives it with QtCore timers and a thread pool, and
``ui`` shows it in Qt widgets. ``app`` and ``cli`` wire the layers together.
"""

from __future__ import annotations

# The one place the version is written: pyproject.toml reads it from here (setuptools'
# dynamic ``attr``, from the source, without importing). A constant, not
# ``importlib.metadata.version``: that lookup imported the email package and cost
# about 60 ms of every start, the CLI's and the window's, for one string.
__version__ = "0.1.0"

__all__ = ["__version__"]
