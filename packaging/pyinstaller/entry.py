"""PyInstaller's entry script: the frozen program behaves like the ``taskgui`` command."""

from __future__ import annotations

from taskgui.__main__ import main

if __name__ == "__main__":
    raise SystemExit(main())
