"""Entry point for ``python -m taskgui`` and the ``taskgui`` console script.

With a command (``taskgui add ...``, ``taskgui list``) it runs the command line; with
none it opens the window. Qt is imported only on that path, so the command line starts
fast and works where no display exists.
"""

from __future__ import annotations

from collections.abc import Sequence

from taskgui import cli


def run_gui(argv: list[str]) -> int:
    """Open the window for the global flags in ``argv`` (``--db``, ``--reset-corrupt``)."""
    from taskgui import app  # noqa: PLC0415 - Qt widgets only when a window is wanted

    return app.main(argv)


def main(argv: Sequence[str] | None = None) -> int:
    """Run taskgui and return the process exit status."""
    return cli.main(argv, gui=run_gui)


if __name__ == "__main__":
    raise SystemExit(main())
