"""Starting taskgui at login: an XDG autostart entry, written or removed on request.

The entry is ``$XDG_CONFIG_HOME/autostart/taskgui.desktop`` (``~/.config`` when the
variable is unset or not absolute, as the XDG base directory spec says). Its ``Exec``
line runs this very installation: the ``taskgui`` script when the app was started
through it, else ``<python> -m taskgui``, plus ``--db`` when the schedule is not the
default one. Arguments are quoted by the Desktop Entry rules, so paths with spaces or
quotes survive. An argument with a line break or another control character (but a
tab, quoted like a space) is refused: a raw one would end the ``Exec=`` line and
start a line of its own (a second ``Exec=``), and the spec has no quoting for most.

Whatever the entry says runs at every login, so it is written as private as the
schedule: the file 0600 and the folders taskgui makes 0700, whatever the umask, and
it is never written into a folder that another user could change (their own, or one
open to others): that would let them rewrite ``Exec=``.
"""

from __future__ import annotations

import contextlib
import errno
import os
import sys
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from taskgui.system.files import write_private

ENTRY_NAME = "taskgui.desktop"
_RESERVED = set(" \t\n\"'\\><~|&;$*?#()`")


class AutostartError(OSError):
    """The entry cannot be written safely; ``strerror`` says why and what to do."""

    def __init__(self, message: str, path: Path) -> None:
        super().__init__(errno.EPERM, message, str(path))


def autostart_path(environ: Mapping[str, str] | None = None) -> Path:
    environ = os.environ if environ is None else environ
    base = environ.get("XDG_CONFIG_HOME", "")
    folder = Path(base) if base and os.path.isabs(base) else Path.home() / ".config"
    return folder / "autostart" / ENTRY_NAME


def launch_command(
    database: Path | str | None = None,
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
    """One Exec argument, quoted as the Desktop Entry spec requires (before escaping).

    Raises ValueError for a control character (a line break above all) or text that
    is not Unicode (a file name's undecodable bytes): they cannot be written safely.
    """
    for character in argument:
        # A tab is quoted like a space and stays on the line; no other control can be.
        if character != "\t" and unicodedata.category(character) in ("Cc", "Cs"):
            raise ValueError(
                f"{argument!r} holds {_name_of(character)}, which an autostart entry "
                "cannot hold safely; rename it first"
            )
    if argument and not (_RESERVED & set(argument)):
        return argument.replace("%", "%%")
    inner = "".join("\\" + c if c in '"`$\\' else c for c in argument)
    return '"' + inner.replace("%", "%%") + '"'


def _name_of(character: str) -> str:
    if character in "\n\r":
        return "a line break"
    if unicodedata.category(character) == "Cs":
        return "bytes that are not text"
    return f"the control character U+{ord(character):04X}"


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
        """Write the entry, private and atomically (see the module docstring).

        Raises OSError when it cannot be written, AutostartError when it may not be.
        """
        try:
            text = desktop_entry(self.command)
        except ValueError as error:
            raise AutostartError(f"the command to start taskgui: {error}", self.path) from None
        folder = self.path.parent
        _make_private_folders(folder)
        for place in (folder, folder.parent):
            _refuse_if_others_can_change(place, self.path)
        write_private(self.path, text)

    def disable(self) -> None:
        self.path.unlink(missing_ok=True)

    def set_enabled(self, enabled: bool) -> None:
        if enabled:
            self.enable()
        else:
            self.disable()


def _make_private_folders(folder: Path) -> None:
    """Create ``folder`` and its missing parents, each 0700 (mkdir -p would use the umask)."""
    missing: list[Path] = []
    for place in (folder, *folder.parents):
        if place.exists():
            break
        missing.append(place)
    for place in reversed(missing):
        with contextlib.suppress(FileExistsError):  # made meanwhile: it is checked next
            place.mkdir(mode=0o700)


def _refuse_if_others_can_change(folder: Path, entry: Path) -> None:
    try:
        info = folder.stat()
    except FileNotFoundError:
        return
    if info.st_uid != os.getuid():
        raise AutostartError(
            f"{folder} belongs to another user, who could change what runs at your login",
            entry,
        )
    if info.st_mode & 0o022:
        raise AutostartError(
            f"{folder} can be written by other users, who could change what runs at your "
            f"login; make it private (chmod go-w {folder}) and try again",
            entry,
        )
