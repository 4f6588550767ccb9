"""``python -m tests.helpers.as_nobody ARGS``: the taskgui command line, run as nobody.

Root ignores file modes, so a test of a read-only folder must run the program as an
ordinary user. The interpreter may live where that user cannot read (under /root), so
this imports the program first, then gives up root, then runs ``taskgui ARGS``.
"""

from __future__ import annotations

import os
import sys

import taskgui.__main__
import taskgui.app.daemon  # imported lazily by taskgui.__main__
import taskgui.app.qt_import  # so is this, before the daemon

NOBODY = 65534

if __name__ == "__main__":
    if os.geteuid() == 0:
        os.setgroups([])
        os.setgid(NOBODY)
        os.setuid(NOBODY)
    sys.exit(taskgui.__main__.main(sys.argv[1:]))
