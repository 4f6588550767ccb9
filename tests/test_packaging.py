"""Desktop integration and packaging files: valid, consistent, and complete.

The external validators (``desktop-file-validate`` from desktop-file-utils,
``appstreamcli`` from appstream) are optional; without them those two tests skip and
the structural checks below still run. The PyInstaller build itself is too slow for
the suite: ``make dist && make dist-check`` covers it.
"""

from __future__ import annotations

import configparser
import importlib.metadata
import importlib.util
import re
import shutil
import subprocess
import sys
import tomllib
import xml.etree.ElementTree as ET
from pathlib import Path
from types import ModuleType

import pytest
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QApplication

import taskgui

ROOT = Path(__file__).resolve().parents[1]
LINUX = ROOT / "packaging" / "linux"
APP_ID = "io.github.taskgui.TaskGui"
DESKTOP = LINUX / f"{APP_ID}.desktop"
METAINFO = LINUX / f"{APP_ID}.metainfo.xml"
APP_SVG = ROOT / "taskgui" / "resources" / "icons" / "taskgui.svg"
ICON_SIZES = (16, 24, 32, 48, 64, 128, 256, 512)


def _load_script(name: str) -> ModuleType:
    """Import one of packaging/linux's scripts, which are not part of any package."""
    spec = importlib.util.spec_from_file_location(f"packaging_{name}", LINUX / f"{name}.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


render_icons = _load_script("render_icons")
desktop_install = _load_script("desktop_install")


class _DesktopEntryParser(configparser.ConfigParser):
    """Desktop entry keys are case-sensitive; ConfigParser lowercases them by default."""

    def optionxform(self, optionstr: str) -> str:
        return optionstr


def _desktop_entry(path: Path = DESKTOP) -> dict[str, str]:
    parser = _DesktopEntryParser(interpolation=None, strict=True)
    parser.read(path, encoding="utf-8")
    return dict(parser["Desktop Entry"])


def _tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        pytest.skip(f"{name} is not installed (Debian/Ubuntu: apt-get install {_PACKAGES[name]})")
    return path


_PACKAGES = {"desktop-file-validate": "desktop-file-utils", "appstreamcli": "appstream"}


def _project_version() -> str:
    """The version as the installed package's metadata says it (pyproject.toml takes
    it from ``taskgui.__version__``)."""
    with (ROOT / "pyproject.toml").open("rb") as file:
        project = tomllib.load(file)["project"]
    assert "version" in project["dynamic"]
    return importlib.metadata.version("taskgui")


def test_the_metadata_and_the_package_say_the_same_version() -> None:
    assert _project_version() == taskgui.__version__
    # As check_dist.sh reads it (a sed over this line): one plain assignment.
    source = (ROOT / "taskgui" / "__init__.py").read_text(encoding="utf-8")
    assert re.findall(r'^__version__ = "(.*)"$', source, re.MULTILINE) == [taskgui.__version__]


# ------------------------------------------------------------------ desktop entry


def test_desktop_file_passes_desktop_file_validate() -> None:
    tool = _tool("desktop-file-validate")
    result = subprocess.run(
        [tool, "--no-hints", str(DESKTOP)], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "error" not in result.stdout + result.stderr


def test_desktop_file_has_the_required_keys() -> None:
    entry = _desktop_entry()
    assert entry["Type"] == "Application"
    assert entry["Name"] == "taskgui"
    assert entry["Comment"]
    assert entry["Exec"] == "taskgui"  # make install-desktop points it at the venv
    assert entry["Icon"] == APP_ID
    assert entry["Terminal"] == "false"
    assert entry["StartupWMClass"] == "taskgui"
    assert entry["Categories"].split(";") == ["Utility", "System", "Monitor", ""]
    keywords = entry["Keywords"]
    assert keywords.endswith(";")
    assert {"scheduler", "cron", "task"} <= set(keywords.split(";"))


# ------------------------------------------------------------------ AppStream metainfo


def test_metainfo_passes_appstreamcli_validate() -> None:
    tool = _tool("appstreamcli")
    result = subprocess.run(
        [tool, "validate", "--no-net", "--no-color", str(METAINFO)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_metainfo_describes_the_app() -> None:
    component = ET.parse(METAINFO).getroot()
    assert component.tag == "component"
    assert component.get("type") == "desktop-application"

    def text(path: str) -> str:
        element = component.find(path)
        assert element is not None, f"<{path}> is missing"
        return (element.text or "").strip()

    assert text("id") == APP_ID
    assert text("metadata_license") == "CC0-1.0"
    assert text("project_license") == "MIT"
    assert text("name") == "taskgui"
    assert text("summary")
    assert len(component.findall("description/p")) >= 2
    launchable = component.find("launchable")
    assert launchable is not None
    assert launchable.get("type") == "desktop-id"
    assert launchable.text == DESKTOP.name
    assert text("provides/binary") == "taskgui"
    assert component.find("content_rating") is not None
    assert text("url[@type='homepage']").startswith("https://")
    releases = component.findall("releases/release")
    assert releases, "no <release>"
    assert releases[0].get("version") == _project_version()
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", releases[0].get("date") or "")
    assert [r.get("date") for r in releases if r.get("version") == "0.1.0"] == ["2026-11-30"]


# ------------------------------------------------------------------ icons


def test_one_app_id_everywhere() -> None:
    assert render_icons.APP_ID == APP_ID
    assert desktop_install.APP_ID == APP_ID
    assert desktop_install.DESKTOP_FILE == DESKTOP
    assert desktop_install.METAINFO_FILE == METAINFO
    assert render_icons.SOURCE_SVG == APP_SVG


def test_every_hicolor_size_is_rendered_and_installed() -> None:
    assert tuple(render_icons.SIZES) == ICON_SIZES
    assert tuple(desktop_install.ICON_SIZES) == ICON_SIZES
    names = {str(path) for path in desktop_install.icon_files()}
    assert names == {f"{n}x{n}/apps/{APP_ID}.png" for n in ICON_SIZES} | {
        f"scalable/apps/{APP_ID}.svg"
    }


def test_the_app_icon_ships_as_package_data() -> None:
    assert APP_SVG.is_file()
    with (ROOT / "pyproject.toml").open("rb") as file:
        package_data = tomllib.load(file)["tool"]["setuptools"]["package-data"]["taskgui"]
    assert "resources/**/*.svg" in package_data
    assert "resources/**/*.png" in package_data


def test_render_script_draws_a_48px_icon(qapp: QApplication, tmp_path: Path) -> None:
    out = render_icons.render_png(APP_SVG, 48, tmp_path / "icon.png")
    image = QImage(str(out))
    assert not image.isNull()
    assert (image.width(), image.height()) == (48, 48)
    assert image.hasAlphaChannel()
    alphas = [image.pixelColor(x, y).alpha() for x in range(48) for y in range(48)]
    opaque = sum(alpha == 255 for alpha in alphas)
    assert opaque > 48 * 48 // 2, "the icon should fill most of its square"
    assert image.pixelColor(0, 0).alpha() == 0, "the corners should stay transparent"
    # The blue rim, the white face and the green badge all made it into the PNG.
    colors = {image.pixelColor(x, y).name() for x in range(48) for y in range(48)}
    assert {"#2563eb", "#ffffff", "#16a34a"} <= colors


def test_render_theme_writes_a_hicolor_tree(qapp: QApplication, tmp_path: Path) -> None:
    written = render_icons.render_theme(tmp_path)
    assert {path.relative_to(tmp_path) for path in written} == set(desktop_install.icon_files())
    for size in ICON_SIZES:
        image = QImage(str(tmp_path / f"{size}x{size}" / "apps" / f"{APP_ID}.png"))
        assert (image.width(), image.height()) == (size, size)


@pytest.mark.qt_log_ignore("Cannot read file")  # Qt's own complaint about the broken file
def test_render_script_reports_a_broken_svg(qapp: QApplication, tmp_path: Path) -> None:
    broken = tmp_path / "broken.svg"
    broken.write_text("<svg", encoding="utf-8")
    with pytest.raises(render_icons.RenderError, match="not a valid SVG"):
        render_icons.render_png(broken, 16, tmp_path / "out.png")


# ------------------------------------------------------------------ install / uninstall


@pytest.mark.parametrize(
    ("program", "expected"),
    [
        ("/home/ann/taskgui/.venv/bin/taskgui", "/home/ann/taskgui/.venv/bin/taskgui"),
        ("/home/ann/my code/.venv/bin/taskgui", '"/home/ann/my code/.venv/bin/taskgui"'),
        ("/srv/100%/taskgui", "/srv/100%%/taskgui"),
        ("/srv/a $b/taskgui", '"/srv/a \\\\$b/taskgui"'),
    ],
)
def test_exec_value_quotes_and_escapes(program: str, expected: str) -> None:
    assert desktop_install.exec_value(Path(program)) == expected


def test_data_home_follows_xdg_and_ignores_relative_paths(tmp_path: Path) -> None:
    assert desktop_install.data_home({"XDG_DATA_HOME": str(tmp_path)}) == tmp_path
    default = Path.home() / ".local" / "share"
    assert desktop_install.data_home({"XDG_DATA_HOME": "relative/dir"}) == default
    assert desktop_install.data_home({}) == default


def test_install_then_uninstall(qapp: QApplication, tmp_path: Path) -> None:
    icons = tmp_path / "build" / "hicolor"
    render_icons.render_theme(icons)
    data = tmp_path / "data"
    program = tmp_path / "my checkout" / ".venv" / "bin" / "taskgui"

    written = desktop_install.install(data, icons, program)

    assert written == desktop_install.installed_paths(data)
    assert all(path.is_file() for path in written)
    installed = data / "applications" / DESKTOP.name
    assert _desktop_entry(installed)["Exec"] == f'"{program}"'
    assert (data / "metainfo" / METAINFO.name).read_bytes() == METAINFO.read_bytes()
    if shutil.which("desktop-file-validate"):
        result = subprocess.run(
            ["desktop-file-validate", "--no-hints", str(installed)],
            capture_output=True,
            text=True,
            check=False,
        )
        assert result.returncode == 0, result.stdout

    assert desktop_install.uninstall(data) == written
    assert not any(path.exists() for path in written)
    assert desktop_install.uninstall(data) == []  # nothing left is not an error


def test_install_refuses_an_unrendered_icon_tree(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="render_icons"):
        desktop_install.install(tmp_path / "data", tmp_path / "empty", None)
    assert not (tmp_path / "data").exists()


# ------------------------------------------------------------------ build files


def test_makefile_has_the_packaging_targets() -> None:
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    for target in ("install-desktop", "uninstall-desktop", "dist", "dist-check"):
        assert re.search(rf"^{re.escape(target)}:", makefile, re.MULTILINE), target
    test_rule = re.search(r"^test:(.*)$", makefile, re.MULTILINE)
    assert test_rule is not None
    assert "dist" not in test_rule.group(1), "the slow dist build must stay out of make test"


def test_pyinstaller_is_a_build_only_extra() -> None:
    with (ROOT / "pyproject.toml").open("rb") as file:
        project = tomllib.load(file)["project"]
    assert any(dep.startswith("pyinstaller") for dep in project["optional-dependencies"]["dist"])
    assert not any("pyinstaller" in dep.lower() for dep in project["dependencies"])


def test_pyinstaller_spec_and_check_script_parse() -> None:
    spec = ROOT / "packaging" / "pyinstaller" / "taskgui.spec"
    compile(spec.read_text(encoding="utf-8"), str(spec), "exec")
    check = ROOT / "packaging" / "pyinstaller" / "check_dist.sh"
    assert check.stat().st_mode & 0o111, "check_dist.sh must be executable"
    result = subprocess.run(["sh", "-n", str(check)], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
