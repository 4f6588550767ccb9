"""Entry point for ``python -m taskgui`` and the ``taskgui`` console script.

With a command (``taskgui add ...``, ``taskgui list``) it runs the command line; with
none it opens the window. Until the window (``app.py``) exists, ``run_gui`` says so
plainly instead of pretending to start something.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from taskgui import cli

NOT_BUILT_MESSAGE = (
    "taskgui: the desktop app is not built yet — the scheduling core is; "
    "run `make test` to exercise it"
)


def run_gui(argv: list[str]) -> int:
    """Open the window for the global flags in ``argv`` (``--db``, ``--reset-corrupt``)."""
    print(NOT_BUILT_MESSAGE, file=sys.stderr)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Run taskgui and return the process exit status."""
    return cli.main(argv, gui=run_gui)


if __name__ == "__main__":
    raise SystemExit(main())
