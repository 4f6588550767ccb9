"""Reading an import, bounded (``system.files.read_bounded_text``): a stream that never
ends is refused after the limit instead of taking memory without end (before: 8.5 GB in
10 s on /dev/zero), and what is within it reads as before."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from taskgui.core.errors import InvalidTaskError, TaskguiError
from taskgui.system.files import MAX_IMPORT_BYTES, read_bounded_text, read_import_file


def test_text_within_the_limit_reads_whole() -> None:
    text = "é" * 500  # 1,000 bytes of UTF-8
    assert read_bounded_text("f", io.BytesIO(text.encode()), limit=1_000) == text


def test_one_byte_past_the_limit_is_refused_naming_the_input() -> None:
    with pytest.raises(InvalidTaskError, match=r"^f is larger than"):
        read_bounded_text("f", io.BytesIO(b"x" * 1_001), limit=1_000)


def test_an_endless_stream_stops_at_the_limit() -> None:
    class Endless:
        read_bytes = 0

        def read(self, size: int = -1, /) -> bytes:
            self.read_bytes += size
            return b"\0" * size

    endless = Endless()
    with pytest.raises(InvalidTaskError, match="larger than"):
        read_bounded_text("stdin", endless, limit=3 * 1024 * 1024)
    assert endless.read_bytes == 3 * 1024 * 1024 + 1  # the limit and one byte, not more


def test_not_utf8_is_refused() -> None:
    with pytest.raises(InvalidTaskError, match=r"^f is not UTF-8 text$"):
        read_bounded_text("f", io.BytesIO(b"\xff\xfe"), limit=10)


def test_a_missing_file_says_why(tmp_path: Path) -> None:
    missing = tmp_path / "gone.json"
    with pytest.raises(TaskguiError, match="no such file or directory"):
        read_import_file(str(missing))


def test_the_limit_holds_a_large_export() -> None:
    assert MAX_IMPORT_BYTES >= 200 * 1024 * 1024  # an export of 100,000 tasks is ~54 MB
