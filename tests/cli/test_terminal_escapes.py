"""What the CLI prints of a task cannot steer the terminal.

A task's name, command, folder and environment come from whoever wrote it, or from
a crontab line whose comment became the name. The real program runs in a
subprocess here and its output is checked byte for byte: no ESC, C1 control or bidi
override reaches the terminal (they are shown as ``\\x1b``, ``\\x9b``, ``\\u202e``),
and ``--json`` still decodes to exactly the stored values.
"""

from __future__ import annotations

import json
import re
import unicodedata
from pathlib import Path

from taskgui.core.terminal_text import visible, visible_json
from tests.helpers.cli import program
from tests.helpers.unicode_sets import DEFAULT_IGNORABLE_NOT_FORMAT

# Retitles the terminal, clears the screen, then reverses the rest of the line; an
# 8-bit CSI and a line separator for the terminals that honour those.
NAME = "evil\x1b]0;pwned\x07\x1b[2J \u202eabc \x9b31m\u2028end back\u200bup\U000e0041"
COMMAND = "printf '\x1b[31mred\x1b[0m'\tdone"
FOLDER = "/tmp/\x1b[8mhidden"
# Every character a terminal could act on, except the newlines between lines.
# And what draws nothing at all, by Unicode's own list of format characters (Cf) that
# are not direction marks: a zero-width space makes "back\u200bup" read "backup".
RAW_CONTROL = re.compile(
    "[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069"
    "\u00ad\u180e\u200b-\u200d\u2060-\u2064\ufeff\ufff9-\ufffb\U000e0000-\U000e007f]"
)


def hostile_task(db: Path) -> None:
    added = program(
        db,
        "add",
        "--name",
        NAME,
        "--command",
        COMMAND,
        "--cwd",
        FOLDER,
        "--env",
        "GREETING=\x1b[5mblink",
        "--in",
        "1h",
    )
    assert added.returncode == 0, added.stderr


def assert_terminal_safe(text: str) -> None:
    found = RAW_CONTROL.findall(text)
    assert not found, f"raw control characters reach the terminal: {found!r}"


def test_list_and_show_print_escapes_instead_of_obeying_them(tmp_path: Path) -> None:
    db = tmp_path / "t.sqlite3"
    hostile_task(db)

    listed = program(db, "list")
    shown = program(db, "show", "1")

    assert listed.returncode == 0 and shown.returncode == 0, listed.stderr + shown.stderr
    for output in (listed.stdout, shown.stdout):
        assert_terminal_safe(output)
    assert "evil\\x1b]0;pwned\\x07\\x1b[2J" in listed.stdout  # cut to the column, whole escapes
    assert f"name:            {visible(NAME)}\n" in shown.stdout
    assert "\\u202eabc \\x9b31m\\u2028end" in shown.stdout
    assert "printf '\\x1b[31mred\\x1b[0m'\\tdone" in shown.stdout
    assert "/tmp/\\x1b[8mhidden" in shown.stdout and "GREETING=\\x1b[5mblink" in shown.stdout


def test_list_writes_a_tab_as_show_does_not_as_a_space(tmp_path: Path) -> None:
    """ "tab" TAB "here" beside a real "tab here": the table folded the tab into a space
    and the two rows read the same (``show`` wrote ``\\t``)."""
    db = tmp_path / "t.sqlite3"
    for name in ("tab\there", "tab here", "two  spaces"):
        assert program(db, "add", "--name", name, "--command", "true", "--in", "1h").returncode == 0
    rows = program(db, "list").stdout.splitlines()[1:]
    assert [row.split("  ")[1].strip() for row in rows] == ["tab\\there", "tab here", "two"]
    assert "two  spaces" in rows[2]


def test_json_escapes_them_too_and_keeps_every_value(tmp_path: Path) -> None:
    db = tmp_path / "t.sqlite3"
    hostile_task(db)

    outputs = [program(db, "list", "--json"), program(db, "show", "1", "--json")]
    outputs.append(program(db, "export"))
    for result in outputs:
        assert result.returncode == 0, result.stderr
        assert_terminal_safe(result.stdout.replace("\n", ""))
    listed = json.loads(outputs[0].stdout)[0]
    shown = json.loads(outputs[1].stdout)
    exported = json.loads(outputs[2].stdout)["tasks"][0]
    for task in (listed, shown):
        assert (task["name"], task["command"], task["cwd"]) == (NAME, COMMAND, FOLDER)
        assert task["env"] == {"GREETING": "\x1b[5mblink"}
    assert (exported["name"], exported["command"]["line"]) == (NAME, COMMAND)
    assert "\\u202e" in outputs[0].stdout  # written as an escape


def test_the_import_report_escapes_names_from_a_crontab(tmp_path: Path) -> None:
    db = tmp_path / "t.sqlite3"
    name = NAME.replace("\u2028", " ")  # a crontab is lines: a separator would end it
    crontab = f"# {name}\n*/5 * * * * echo '\x1b[41m'\n\x1b[2J broken line\n"

    dry = program(db, "import", "--crontab", "--dry-run", "-", stdin=crontab)
    done = program(db, "import", "--crontab", "-", stdin=crontab)

    for result in (dry, done):
        assert result.returncode == 0, result.stderr
        assert_terminal_safe(result.stdout)
    assert f"  + {visible(name)}: " in dry.stdout
    assert "echo '\\x1b[41m'" in dry.stdout
    assert "\\x1b[2J broken line" in dry.stdout  # the skipped line, shown as it was
    listed = json.loads(program(db, "list", "--json").stdout)
    assert [task["name"] for task in listed] == [name]  # stored exactly as written


def test_visible_writes_each_kind_of_control_the_python_way() -> None:
    assert visible("a\tb\nc\rd\x1b\x07\x7f\x85\x9b") == "a\\tb\\nc\\rd\\x1b\\x07\\x7f\\x85\\x9b"
    assert visible("\u202e\u2066\u2069\u200f\u061c\u2028\u2029") == (
        "\\u202e\\u2066\\u2069\\u200f\\u061c\\u2028\\u2029"
    )
    assert visible("\ud800") == "\\ud800"  # a lone surrogate could not even be printed
    assert visible("back\u200bup\u00ad\ufeff\U000e0041") == "back\\u200bup\\xad\\ufeff\\U000e0041"
    assert visible("plain é 名前 👍 back\\slash") == "plain é 名前 👍 back\\slash"


def test_visible_json_decodes_to_the_same_values() -> None:
    value = {"name": NAME, "lone": "\ud800", "plain": "é", "tag": "\U000e0041"}
    dumped = json.dumps(value, ensure_ascii=False)
    safe = visible_json(dumped)
    assert json.loads(safe) == value
    assert_terminal_safe(safe)
    assert "é" in safe  # readable text stays readable


def test_every_invisible_format_character_is_escaped() -> None:
    """Against Unicode's own category: every format character (Cf) in the planes a name
    can hold prints as an escape, so nothing in a name is there unseen. (Arabic number
    signs and the like, which draw a mark, are the only Cf left as they are.)"""
    drawn = {"\u0600", "\u0601", "\u0602", "\u0603", "\u0604", "\u0605", "\u06dd"}
    drawn |= {"\u070f", "\u0890", "\u0891", "\u08e2", "\U000110bd", "\U000110cd"}
    missed = [
        f"U+{code:04X}"
        for code in range(0x110000)
        if unicodedata.category(chr(code)) == "Cf"
        and chr(code) not in drawn
        and visible(chr(code)) == chr(code)
    ]
    assert missed == []


def test_every_character_that_draws_nothing_is_escaped_too() -> None:
    """Unicode's default ignorable characters that are not format characters: the
    variation selectors, the combining grapheme joiner, the Hangul fillers ("back"
    U+3164 "up" printed raw reads "back up")."""
    assert [
        f"U+{ord(c):04X}" for c in sorted(DEFAULT_IGNORABLE_NOT_FORMAT) if visible(c) == c
    ] == []
    assert visible("back\u3164up \u2764\ufe0f") == "back\\u3164up \u2764\\ufe0f"
