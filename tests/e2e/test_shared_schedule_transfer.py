"""``taskgui export`` and ``taskgui import`` on a shared (PostgreSQL) schedule, by the
CLI as a new user runs it: a file's schedule exported, imported into PostgreSQL and
exported again reads the same; an import while a node leads is scheduled by it, and
``--replace`` has the replaced task deleted by the leader's engine.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

from taskgui.store.sqlite.repository import SqliteRepository
from tests.helpers.factories import at
from tests.helpers.shared_nodes import LOG_LINE, Nodes, wait_for
from tests.helpers.store import Driver, rich_specs


def _ok(nodes: Nodes, *args: str, db: str | None = None) -> str:
    result = nodes.cli(*args, db=db)
    assert result.returncode == 0, result.stderr
    return result.stdout


def _document(path: Path) -> dict[str, Any]:
    document: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    document.pop("exported_at")
    return document


def test_a_file_schedule_exported_imported_into_postgres_and_exported_reads_the_same(
    nodes: Nodes, tmp_path: Path
) -> None:
    source = tmp_path / "old.sqlite3"
    sqlite = SqliteRepository(source)
    driver = Driver(sqlite)
    for spec in rich_specs().values():  # every field away from its default
        driver.add_one(replace(spec, first_run_at=at(10**6)))
    sqlite.close()
    first, second = tmp_path / "first.json", tmp_path / "second.json"
    _ok(nodes, "export", str(first), db=str(source))
    said = _ok(nodes, "import", "--json", str(first))  # no node runs it: one transaction
    assert json.loads(said)["ids"] == list(range(1, len(rich_specs()) + 1))
    _ok(nodes, "export", str(second))
    assert _document(second) == _document(first)
    assert len(_document(second)["tasks"]) == len(rich_specs())
    again = nodes.cli("import", str(first))  # every name exists now: all skipped
    assert again.returncode == 0 and "Added no tasks." in again.stdout, again.stdout
    _ok(nodes, "export", str(second))
    assert _document(second) == _document(first)


def test_an_import_while_a_node_leads_is_scheduled_and_replace_deletes_there(
    nodes: Nodes, tmp_path: Path
) -> None:
    log = tmp_path / "runs.log"
    source = str(tmp_path / "elsewhere.sqlite3")
    _ok(nodes, "add", "--name", "nightly", "--every", "1h", "--in", "1h", "--command", "echo new",
        db=source)  # fmt: skip
    _ok(nodes, "add", "--name", "now", "--command", LOG_LINE.format(log=log), db=source)
    exported = tmp_path / "elsewhere.json"
    _ok(nodes, "export", str(exported), db=source)
    nodes.join("a")
    old = nodes.add("--name", "nightly", "--every", "1h", "--in", "1h", "--command", "echo old")
    dry = _ok(nodes, "import", "--replace", "--dry-run", "--json", str(exported))
    assert "ids" not in json.loads(dry) and nodes.state(old) == "pending"
    said = json.loads(_ok(nodes, "import", "--replace", "--json", str(exported)))
    nightly, now = said["ids"]
    assert nodes.cli("show", str(old)).returncode == 1  # deleted by the leader's engine
    wait_for(lambda: log.exists() and len(log.read_text().splitlines()) == 1, 30)
    wait_for(lambda: nodes.state(now) == "succeeded", 30)
    assert nodes.state(nightly) == "pending"
    _ok(nodes, "export", "--with-history", str(exported))
    document = json.loads(exported.read_text(encoding="utf-8"))
    assert [task["name"] for task in document["tasks"]] == ["nightly", "now"]
    assert [run["outcome"] for run in document["runs"][str(now)]] == ["succeeded"]
