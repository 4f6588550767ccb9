"""Install taskgui's desktop entry, AppStream metainfo and icons for the current user.

``make install-desktop`` and ``make uninstall-desktop`` call this; it follows the XDG
base directory spec, so everything goes under ``$XDG_DATA_HOME`` (default
``~/.local/share``) and nothing needs root.

The desktop entry in the source tree says ``Exec=taskgui``, which is right for a
system-wide install but not for a checkout, whose program lives in ``.venv/bin`` where
no launcher's PATH looks. ``install --exec PATH`` writes that absolute path instead,
quoted and escaped the way the desktop entry spec wants.

Standard library only, so ``uninstall`` works even after the venv is gone.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

HERE = Path(__file__).resolve().parent
APP_ID = "io.github.taskgui.TaskGui"
DESKTOP_FILE = HERE / f"{APP_ID}.desktop"
METAINFO_FILE = HERE / f"{APP_ID}.metainfo.xml"
# Kept in step with render_icons.SIZES (tests/test_packaging.py checks).
ICON_SIZES = (16, 24, 32, 48, 64, 128, 256, 512)
# Characters the desktop entry spec reserves in Exec arguments, which force quoting.
_RESERVED = set(" \t\n\"'\\><~|&;$*?#()`")


def data_home(environ: Mapping[str, str] | None = None) -> Path:
    """``$XDG_DATA_HOME``, or ``~/.local/share`` when it is unset, empty or relative."""
    env: Mapping[str, str] = os.environ if environ is None else environ
    value = env.get("XDG_DATA_HOME", "")
    if value and Path(value).is_absolute():
        return Path(value)
    return Path.home() / ".local" / "share"


def exec_value(program: Path) -> str:
    """``program`` as the value of an ``Exec`` key: quoted if needed, ``%`` doubled.

    Two layers of escaping apply: inside a quoted argument ``"`` ``` ` ``` ``$`` and
    ``\\`` take a backslash, and then every backslash of the value is doubled because
    desktop entry strings are themselves escaped.
    """
    text = str(program).replace("%", "%%")
    if any(char in _RESERVED for char in text):
        for char in '\\"`$':
            text = text.replace(char, "\\" + char)
        text = f'"{text}"'
    return text.replace("\\", "\\\\")


def desktop_entry_text(program: Path | None) -> str:
    """The desktop entry, with ``Exec=`` pointing at ``program`` when one is given."""
    lines = DESKTOP_FILE.read_text(encoding="utf-8").splitlines()
    if program is not None:
        lines = [
            f"Exec={exec_value(program)}" if line.startswith("Exec=") else line for line in lines
        ]
    return "\n".join(lines) + "\n"


def icon_files() -> list[Path]:
    """The app icon's files, relative to the root of a hicolor tree."""
    return [
        *(Path(f"{n}x{n}", "apps", f"{APP_ID}.png") for n in ICON_SIZES),
        Path("scalable", "apps", f"{APP_ID}.svg"),
    ]


def installed_paths(data: Path) -> list[Path]:
    """Every file ``install`` writes, which is exactly what ``uninstall`` removes."""
    hicolor = data / "icons" / "hicolor"
    return [
        data / "applications" / DESKTOP_FILE.name,
        data / "metainfo" / METAINFO_FILE.name,
        *(hicolor / name for name in icon_files()),
    ]


def _refresh_caches(data: Path) -> None:
    """Let menus and icon themes notice the change; both tools are optional."""
    for tool, args in (
        ("update-desktop-database", ["-q", str(data / "applications")]),
        ("gtk-update-icon-cache", ["-q", "-t", "-f", str(data / "icons" / "hicolor")]),
    ):
        path = shutil.which(tool)
        if path is None:
            continue
        result = subprocess.run([path, *args], check=False)
        if result.returncode != 0:
            print(f"note: {tool} exited {result.returncode}; ignored", file=sys.stderr)


def install(data: Path, icons: Path, program: Path | None) -> list[Path]:
    """Copy the entry, metainfo and the rendered hicolor tree ``icons`` under ``data``."""
    for name in icon_files():
        if not (icons / name).is_file():
            raise FileNotFoundError(f"icon not rendered: {icons / name} (run render_icons.py)")
    desktop, metainfo, *icon_targets = installed_paths(data)
    desktop.parent.mkdir(parents=True, exist_ok=True)
    desktop.write_text(desktop_entry_text(program), encoding="utf-8")
    metainfo.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(METAINFO_FILE, metainfo)
    for name, target in zip(icon_files(), icon_targets, strict=True):
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(icons / name, target)
    _refresh_caches(data)
    return [desktop, metainfo, *icon_targets]


def uninstall(data: Path) -> list[Path]:
    """Remove what ``install`` wrote; a file already gone is not an error."""
    removed = []
    for path in installed_paths(data):
        if path.exists():
            path.unlink()
            removed.append(path)
    _refresh_caches(data)
    return removed


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--data-home", type=Path, default=None, help="default: $XDG_DATA_HOME or ~/.local/share"
    )
    commands = parser.add_subparsers(dest="command", required=True)
    install_cmd = commands.add_parser("install", help="install the entry, metainfo, icons")
    install_cmd.add_argument(
        "--icons", type=Path, required=True, help="hicolor tree from render_icons.py"
    )
    install_cmd.add_argument(
        "--exec", dest="program", type=Path, default=None, help="absolute path for Exec="
    )
    commands.add_parser("uninstall", help="remove what install wrote")
    args = parser.parse_args(argv)

    data = args.data_home if args.data_home is not None else data_home()
    if args.command == "install":
        if args.program is not None and not args.program.is_absolute():
            parser.error(f"--exec must be an absolute path, not {args.program}")
        try:
            written = install(data, args.icons, args.program)
        except OSError as error:
            print(f"desktop_install: error: {error}", file=sys.stderr)
            return 1
        print(f"installed {len(written)} files under {data}")
        print(f"  {written[0]}")
        return 0
    removed = uninstall(data)
    print(f"removed {len(removed)} files under {data}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
