"""Render the taskgui app icon into a hicolor icon-theme tree.

The SVG in the package is the only source: the PNG sizes are generated at build time
(``make install-desktop``) instead of being committed, so they cannot drift from it.
Qt's own SVG renderer does the work, which needs nothing beyond PySide6-Essentials.

    python packaging/linux/render_icons.py --out build/icons/hicolor

writes ``<out>/<n>x<n>/apps/<name>.png`` for every size and
``<out>/scalable/apps/<name>.svg``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
APP_ID = "io.github.taskgui.TaskGui"
SOURCE_SVG = ROOT / "taskgui" / "resources" / "icons" / "taskgui.svg"
SIZES = (16, 24, 32, 48, 64, 128, 256, 512)


class RenderError(RuntimeError):
    """The SVG could not be read or a PNG could not be written."""


def render_png(svg: Path, size: int, out: Path) -> Path:
    """Render ``svg`` into a ``size`` x ``size`` PNG (``out`` ends in .png), transparent
    where the drawing leaves it.
    """
    # Imported here so ``--help`` and importing this module stay cheap.
    from PySide6.QtCore import Qt  # noqa: PLC0415
    from PySide6.QtGui import QImage, QPainter  # noqa: PLC0415
    from PySide6.QtSvg import QSvgRenderer  # noqa: PLC0415

    renderer = QSvgRenderer(str(svg))
    if not renderer.isValid():
        raise RenderError(f"{svg}: not a valid SVG file")
    image = QImage(size, size, QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    try:
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform)
        renderer.render(painter)
    finally:
        painter.end()
    out.parent.mkdir(parents=True, exist_ok=True)
    if not image.save(str(out)):
        raise RenderError(f"{out}: cannot write the PNG")
    return out


def render_theme(
    out: Path, svg: Path = SOURCE_SVG, name: str = APP_ID, sizes: Sequence[int] = SIZES
) -> list[Path]:
    """Write every size and the scalable SVG into the hicolor tree rooted at ``out``."""
    written = [
        render_png(svg, size, out / f"{size}x{size}" / "apps" / f"{name}.png") for size in sizes
    ]
    scalable = out / "scalable" / "apps" / f"{name}.svg"
    scalable.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(svg, scalable)
    written.append(scalable)
    return written


def _ensure_gui_application() -> object:
    """QPainter wants a QGuiApplication; make a headless one unless one exists."""
    from PySide6.QtGui import QGuiApplication  # noqa: PLC0415

    existing = QGuiApplication.instance()
    if existing is not None:
        return existing
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    return QGuiApplication(sys.argv[:1])


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True, help="root of the hicolor tree")
    parser.add_argument("--svg", type=Path, default=SOURCE_SVG, help="source SVG")
    parser.add_argument("--name", default=APP_ID, help="icon name (default: %(default)s)")
    parser.add_argument(
        "--sizes",
        type=int,
        nargs="+",
        default=list(SIZES),
        help="PNG sizes in pixels (default: %(default)s)",
    )
    args = parser.parse_args(argv)
    app = _ensure_gui_application()
    try:
        written = render_theme(args.out, args.svg, args.name, args.sizes)
    except RenderError as error:
        print(f"render_icons: error: {error}", file=sys.stderr)
        return 1
    finally:
        del app
    for path in written:
        print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
