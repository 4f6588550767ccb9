"""Starting taskgui at login: an XDG autostart entry, written or removed on request.

The entry is ``$XDG_CONFIG_HOME/autostart/taskgui.desktop`` (``~/.config`` when the
variable is unset or not absolute, as the XDG base directory spec says). Its ``Exec``
line runs this very installation: the ``taskgui`` script when the app was started
through it, else ``<python> -m taskgui``, plus ``--db`` when the schedule is not the
default one. Arguments are quoted by the Desktop Entry rules, so paths with spaces or
quotes survive.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

ENTRY_NAME = "taskgui.desktop"
_RESERVED = set(" \t\n\"'\\><~|&;$*?#()`")


def autostart_path(environ: Mapping[str, str] | None = None) -> Path:
    environ = os.environ if environ is None else environ
    base = environ.get("XDG_CONFIG_HOME", "")
    folder = Path(base) if base and os.path.isabs(base) else Path.home() / ".config"
    return folder / "autostart" / ENTRY_NAME


def launch_command(
    database: Path | None = None,
    *,
    argv0: str | None = None,
    executable: str | None = None,
) -> list[str]:
    """How to start this installation again: the script, or ``python -m taskgui``."""
    argv0 = sys.argv[0] if argv0 is None else argv0
    executable = sys.executable if executable is None else executable
    script = Path(argv0)
    if script.name == "taskgui" and script.is_file():
        command = [str(script.resolve())]
    else:
        command = [executable, "-m", "taskgui"]
    if database is not None:
        command += ["--db", str(database)]
    return command


def quote_argument(argument: str) -> str:
    """One Exec argument, quoted as the Desktop Entry spec requires (before escaping)."""
    if argument and not (_RESERVED & set(argument)):
        return argument.replace("%", "%%")
    inner = "".join("\\" + c if c in '"`$\\' else c for c in argument)
    return '"' + inner.replace("%", "%%") + '"'


def exec_value(command: Sequence[str]) -> str:
    """The ``Exec=`` value: quoted arguments, then the string-value escape of ``\\``."""
    line = " ".join(quote_argument(argument) for argument in command)
    return line.replace("\\", "\\\\")


def desktop_entry(command: Sequence[str]) -> str:
    return (
        "[Desktop Entry]\n"
        "Type=Application\n"
        "Name=taskgui\n"
        "Comment=Runs your scheduled tasks in the background\n"
        f"Exec={exec_value(command)}\n"
        "Icon=io.github.taskgui.TaskGui\n"
        "Terminal=false\n"
        "X-GNOME-Autostart-enabled=true\n"
    )


@dataclass(frozen=True, slots=True)
class Autostart:
    """The autostart entry at ``path`` that runs ``command``."""

    path: Path
    command: tuple[str, ...]

    @classmethod
    def for_user(cls, command: Sequence[str]) -> Autostart:
        return cls(autostart_path(), tuple(command))

    @property
    def enabled(self) -> bool:
        return self.path.is_file()

    def enable(self) -> None:
        """Write the entry (atomically). Raises OSError when the folder is not writable."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        partial = self.path.with_name(self.path.name + ".partial")
        partial.write_text(desktop_entry(self.command), encoding="utf-8")
        partial.replace(self.path)

    def disable(self) -> None:
        self.path.unlink(missing_ok=True)

    def set_enabled(self, enabled: bool) -> None:
        if enabled:
            self.enable()
        else:
            self.disable()
