"""Icons shipped in the package: task states, toolbar actions, the app and its tray badge.

All of them are SVG files under ``taskgui/resources/icons`` read through
``importlib.resources``, so an installed, zipped or frozen app finds them the same way.

Two kinds, because they meet different backgrounds:

* **State icons** are a disc in the state's colour with a white glyph. White on a
  saturated disc reads on light and dark panels alike, so they never depend on the
  palette, and the disc colour alone tells states apart at 16 px.
* **Action icons** are monochrome line glyphs drawn in ``currentColor``. They are
  rendered on demand in the palette's text colour (a disabled action in the disabled
  text colour), so they follow a dark theme, and a change of theme while the app runs.
  The desktop's icon theme wins where it has the icon (``QIcon.fromTheme``).
"""

from __future__ import annotations

from functools import cache
from importlib.resources import files
from pathlib import Path

from PySide6.QtCore import QByteArray, QPoint, QRect, QRectF, QSize, Qt
from PySide6.QtGui import (
    QColor,
    QFont,
    QGuiApplication,
    QIcon,
    QIconEngine,
    QImage,
    QPainter,
    QPalette,
    QPixmap,
)
from PySide6.QtSvg import QSvgRenderer

from taskgui.core.states import TaskState

ICON_SIZES = (16, 20, 22, 24, 32, 48, 64)
TRAY_SIZES = (16, 22, 24, 32, 48, 64)
BADGE_COLOR = QColor("#dc2626")

# Freedesktop icon-naming-spec names tried first, then our SVG.
THEME_NAMES = {
    "new": "document-new",
    "run": "system-run",
    "cancel": "process-stop",
    "retry": "view-refresh",
    "pause": "media-playback-pause",
    "resume": "media-playback-start",
    "edit": "document-edit",
    "duplicate": "edit-copy",
    "delete": "edit-delete",
    "history": "document-open-recent",
    "settings": "preferences-system",
    "quit": "application-exit",
    "window": "window-new",
    "dismiss": "window-close",
}


def svg_bytes(name: str) -> bytes:
    """The bytes of ``resources/icons/<name>.svg``; FileNotFoundError if there is none."""
    return _read(name)


@cache
def _read(name: str) -> bytes:
    return (files("taskgui") / "resources" / "icons" / f"{name}.svg").read_bytes()


def render_svg(svg: bytes, size: int) -> QImage:
    """``svg`` drawn into a transparent ``size`` x ``size`` image."""
    image = QImage(size, size, QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(Qt.GlobalColor.transparent)
    renderer = QSvgRenderer(QByteArray(svg))
    painter = QPainter(image)
    try:
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        renderer.render(painter, QRectF(0, 0, size, size))
    finally:
        painter.end()
    return image


def _icon_from_svg(svg: bytes, sizes: tuple[int, ...] = ICON_SIZES) -> QIcon:
    icon = QIcon()
    for size in sizes:
        icon.addPixmap(QPixmap.fromImage(render_svg(svg, size)))
    return icon


# QIcons may only be made once a QGuiApplication exists, hence caches filled on use.
_state_icons: dict[TaskState, QIcon] = {}
_app_icons: dict[bool, QIcon] = {}


def app_icon_file() -> str:
    """A path to the app icon SVG for other programs (a notification server), or ""."""
    resource = files("taskgui") / "resources" / "icons" / "taskgui.svg"
    try:
        path = Path(str(resource))
    except TypeError:
        return ""
    return str(path) if path.is_file() else ""


def state_icon(state: TaskState) -> QIcon:
    """The icon of a task state (a coloured disc with a glyph), cached per state."""
    icon = _state_icons.get(state)
    if icon is None:
        icon = _state_icons[state] = _icon_from_svg(svg_bytes(f"state-{state.value}"))
    return icon


def app_icon() -> QIcon:
    """The taskgui icon, from the package (the installed theme icon is the same file)."""
    icon = _app_icons.get(False)
    if icon is None:
        icon = _app_icons[False] = _icon_from_svg(svg_bytes("taskgui"), (*TRAY_SIZES, 128))
    return icon


def tray_icon(failed: bool) -> QIcon:
    """The app icon, with a red badge when something failed."""
    if not failed:
        return app_icon()
    icon = _app_icons.get(True)
    if icon is None:
        icon = _app_icons[True] = badged(svg_bytes("taskgui"), TRAY_SIZES)
    return icon


def badged(svg: bytes, sizes: tuple[int, ...] = TRAY_SIZES) -> QIcon:
    """``svg`` with a red "!" badge over its bottom-right corner, at every size."""
    icon = QIcon()
    for size in sizes:
        image = render_svg(svg, size)
        painter = QPainter(image)
        try:
            painter.setRenderHint(QPainter.RenderHint.Antialiasing)
            diameter = max(7, round(size * 0.56))
            badge = QRect(size - diameter, size - diameter, diameter, diameter)
            # A white ring keeps the badge apart from the icon behind it on any panel.
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(QColor("#ffffff"))
            painter.drawEllipse(badge)
            ring = max(1, round(diameter / 10))
            painter.setBrush(BADGE_COLOR)
            painter.drawEllipse(badge.adjusted(ring, ring, -ring, -ring))
            if diameter >= 10:  # smaller, a plain red dot reads better than a glyph
                font = QFont()
                font.setBold(True)
                font.setPixelSize(round(diameter * 0.72))
                painter.setFont(font)
                painter.setPen(QColor("#ffffff"))
                painter.drawText(badge, Qt.AlignmentFlag.AlignCenter, "!")
        finally:
            painter.end()
        icon.addPixmap(QPixmap.fromImage(image))
    return icon


def glyph_color(mode: QIcon.Mode, palette: QPalette | None = None) -> QColor:
    """The colour a monochrome glyph is drawn in for ``mode``, from the palette."""
    palette = palette or QGuiApplication.palette()
    if mode == QIcon.Mode.Disabled:
        return palette.color(QPalette.ColorGroup.Disabled, QPalette.ColorRole.ButtonText)
    if mode == QIcon.Mode.Selected:
        return palette.color(QPalette.ColorGroup.Active, QPalette.ColorRole.HighlightedText)
    return palette.color(QPalette.ColorGroup.Active, QPalette.ColorRole.ButtonText)


class TintedSvgEngine(QIconEngine):
    """Draws a ``currentColor`` SVG in the current palette's text colour, per mode.

    Rendering happens when Qt asks for a pixmap, so a palette change (a switch to dark
    mode) is picked up by the next repaint; pixmaps are cached per size, mode and colour.
    """

    def __init__(self, svg: bytes) -> None:
        super().__init__()
        self._svg = svg
        self._cache: dict[tuple[int, int, int, int], QPixmap] = {}

    def pixmap(self, size: QSize, mode: QIcon.Mode, state: QIcon.State) -> QPixmap:
        color = glyph_color(mode)
        side = max(1, min(size.width(), size.height()))
        key = (size.width(), size.height(), int(mode.value), color.rgba())
        cached = self._cache.get(key)
        if cached is not None:
            return cached
        svg = self._svg.replace(b"currentColor", color.name().encode())
        image = QImage(size, QImage.Format.Format_ARGB32_Premultiplied)
        image.fill(Qt.GlobalColor.transparent)
        glyph = render_svg(svg, side)
        painter = QPainter(image)
        try:
            painter.drawImage(
                QPoint((size.width() - side) // 2, (size.height() - side) // 2), glyph
            )
        finally:
            painter.end()
        if len(self._cache) > 64:
            self._cache.clear()
        pixmap = self._cache[key] = QPixmap.fromImage(image)
        return pixmap

    def paint(self, painter: QPainter, rect: QRect, mode: QIcon.Mode, state: QIcon.State) -> None:
        ratio = painter.device().devicePixelRatioF() if painter.device() else 1.0
        pixmap = self.pixmap(rect.size() * ratio, mode, state)
        painter.drawPixmap(rect, pixmap)

    def clone(self) -> QIconEngine:
        return TintedSvgEngine(self._svg)

    def availableSizes(  # noqa: N802
        self, mode: QIcon.Mode = QIcon.Mode.Normal, state: QIcon.State = QIcon.State.Off
    ) -> list[QSize]:
        return [QSize(size, size) for size in ICON_SIZES]


def action_icon(name: str) -> QIcon:
    """An action's icon: the desktop theme's where it has one, else our tinted SVG."""
    fallback = QIcon(TintedSvgEngine(svg_bytes(f"action-{name}")))
    theme_name = THEME_NAMES.get(name)
    if theme_name and QIcon.hasThemeIcon(theme_name):
        return QIcon.fromTheme(theme_name, fallback)
    return fallback
