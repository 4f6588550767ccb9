"""Entry point for ``python -m taskgui`` and the ``taskgui`` console script.

Until the window (``app.py``) and the command line (``cli.py``) exist, this says so
plainly instead of pretending to start something.
"""

from __future__ import annotations

import argparse
import sys

from taskgui import __version__

NOT_BUILT_MESSAGE = (
    "taskgui: the desktop app is not built yet — the scheduling core is; "
    "run `make test` to exercise it"
)


def _build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="taskgui",
        description="A desktop task scheduler with priorities, retries and durable state.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run taskgui and return the process exit status."""
    try:
        _build_parser().parse_args(argv)
    except SystemExit as exc:
        # argparse exits for --version, --help and usage errors; report that as a
        # status so callers (and tests) get an int back instead of an exception.
        return exc.code if isinstance(exc.code, int) else int(exc.code is not None)
    print(NOT_BUILT_MESSAGE, file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
