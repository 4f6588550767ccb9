"""Icons come from package data, cover every state, and follow the palette."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
from PySide6.QtCore import QSize
from PySide6.QtGui import QColor, QGuiApplication, QIcon, QImage, QPalette
from pytestqt.qtbot import QtBot

from taskgui.core.states import TaskState
from taskgui.ui import icons
from taskgui.ui.window.window_actions import VERB_ICONS

ROOT = Path(__file__).resolve().parents[2]


def opaque_colors(image: QImage) -> set[str]:
    return {
        image.pixelColor(x, y).name()
        for x in range(image.width())
        for y in range(image.height())
        if image.pixelColor(x, y).alpha() == 255
    }


@pytest.mark.parametrize("state", list(TaskState))
def test_every_state_has_a_legible_icon(qtbot: QtBot, state: TaskState) -> None:
    icon = icons.state_icon(state)
    assert not icon.isNull()
    assert icons.state_icon(state) is icon  # cached
    image = icon.pixmap(16, 16).toImage()
    colors = opaque_colors(image)
    assert "#ffffff" in colors  # the white glyph
    assert len(colors) >= 2  # on a coloured disc


def test_state_icons_differ_in_colour(qtbot: QtBot) -> None:
    def disc(state: TaskState) -> str:
        return icons.state_icon(state).pixmap(16, 16).toImage().pixelColor(8, 1).name()

    assert len({disc(state) for state in TaskState}) == len(TaskState)


def test_action_icons_are_drawn_in_the_palette_text_colour(qtbot: QtBot) -> None:
    app = QGuiApplication.instance()
    assert isinstance(app, QGuiApplication)
    original = app.palette()
    try:
        for text in ("#101010", "#f0f0f0"):  # a light theme, then a dark one
            palette = QPalette(original)
            palette.setColor(QPalette.ColorRole.ButtonText, QColor(text))
            app.setPalette(palette)
            image = icons.action_icon("pause").pixmap(QSize(32, 32)).toImage()
            assert opaque_colors(image) == {text}
    finally:
        app.setPalette(original)
    disabled = icons.action_icon("pause").pixmap(QSize(32, 32), QIcon.Mode.Disabled).toImage()
    expected = original.color(QPalette.ColorGroup.Disabled, QPalette.ColorRole.ButtonText)
    assert opaque_colors(disabled) == {expected.name()}


def test_every_action_icon_and_theme_name_exists(qtbot: QtBot) -> None:
    for name in {*icons.THEME_NAMES, *VERB_ICONS.values()}:
        assert icons.svg_bytes(f"action-{name}").startswith(b"<svg")
        assert not icons.action_icon(name).isNull()


def test_the_tray_icon_is_badged_when_something_failed(qtbot: QtBot) -> None:
    calm = icons.tray_icon(False).pixmap(22, 22).toImage()
    alarmed = icons.tray_icon(True).pixmap(22, 22).toImage()
    assert calm != alarmed
    assert icons.BADGE_COLOR.name() in opaque_colors(alarmed)
    assert icons.BADGE_COLOR.name() not in opaque_colors(calm)


def test_icons_ship_as_package_data() -> None:
    folder = ROOT / "taskgui" / "resources" / "icons"
    shipped = {path.name for path in folder.glob("*.svg")}
    assert {f"state-{state.value}.svg" for state in TaskState} <= shipped
    assert "taskgui.svg" in shipped
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    patterns = config["tool"]["setuptools"]["package-data"]["taskgui"]
    assert any(
        Path("resources/icons/x.svg").match(p) or p == "resources/**/*.svg" for p in patterns
    )
    assert Path(icons.app_icon_file()).name == "taskgui.svg"
