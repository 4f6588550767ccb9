"""``--after`` / ``--only-after``: adding, showing, listing, cycles, deleting an upstream,
and export/import keeping the links with the ids remapped."""

from __future__ import annotations

import json
import re
from pathlib import Path

from taskgui.core.dependencies import PLACEHOLDER_BASE
from tests.cli.test_cli import add, program, show
from tests.cli.test_cli import run as run  # noqa: PLC0414  (the fixture, by name)
from tests.helpers.cli import Run, on_a_terminal


def test_add_after_and_show_both_ways(run: Run) -> None:
    a = add(run, "--every", "1h", name="fetch")
    c = add(run, name="build")
    b = add(run, "--after", str(a), "--after", f"{c}:finished", "--only-after", name="upload")
    upload = show(run, b)
    assert upload["after"] == [
        {"id": a, "name": "fetch", "on": "succeeded", "completed": False},
        {"id": c, "name": "build", "on": "finished", "completed": False},
    ]
    assert upload["only_after"] is True
    assert upload["next_run_at"] is None
    assert upload["waiting"] == "upstream"
    assert upload["definition"]["after"]["tasks"] == [
        {"id": a, "on": "succeeded"},
        {"id": c, "on": "finished"},
    ]
    assert show(run, a)["downstream"] == [{"id": b, "name": "upload"}]
    text = run("show", str(b)).out
    assert f"pending (waiting for fetch ({a}), build ({c}))" in text
    assert f"after fetch ({a}) succeeds, after build ({c}) finishes (all of them)" in text
    assert re.search(rf"^runs before: +upload \({b}\)$", run("show", str(a)).out, re.M)
    listing = run("list").out
    assert f"for fetch ({a}), build" in listing


def test_bad_after_values_are_refused_with_a_reason(run: Run) -> None:
    a = add(run)
    missing = run("add", "--name", "x", "--command", "true", "--after", "99")
    assert missing.code == 2 and "task 99, which does not exist" in missing.err
    for value, why in [
        (f"{a}:sometimes", "is not an outcome"),
        ("x", "is not ID or ID:OUTCOME"),
        ("0", "a whole number from 1"),
        ("99999999999999999999", "a whole number from 1"),
    ]:
        result = run("add", "--name", "x", "--command", "true", "--after", value)
        assert result.code == 2 and why in result.err, result.err
    only = run("add", "--name", "x", "--command", "true", "--only-after")
    assert only.code == 2 and "--only-after goes with --after" in only.err
    both = run(
        "add", "--name", "x", "--command", "t", "--after", str(a), "--only-after", "--every", "1h"
    )
    assert both.code == 2 and "drop --at, --in, --every and --cron" in both.err
    assert run("list", "--json").json() and len(run("list", "--json").json()) == 1


def test_deleting_or_cancelling_an_upstream_asks_and_refuses_without_a_terminal(run: Run) -> None:
    a = add(run, "--every", "1h", name="fetch")
    b = add(run, "--after", str(a), "--only-after", name="upload")
    refused = run("delete", str(a))
    assert refused.code == 1
    assert f"upload ({b}) run(s) after fetch ({a})" in refused.err
    assert "--force" in refused.err
    assert run("cancel", str(a)).code == 1
    assert show(run, a)["state"] == "pending"
    assert run("delete", str(b)).code == 0  # nothing runs after it
    b = add(run, "--after", str(a), "--only-after", name="upload")
    assert run("delete", str(a), "--force").code == 0
    text = run("show", str(b)).out
    assert f"waiting for task {a} (deleted)" in text


def test_export_and_import_keep_the_links_with_new_ids(run: Run, tmp_path: Path) -> None:
    a = add(run, "--every", "1h", name="fetch")
    c = add(run, "--every", "1h", name="build")
    b = add(run, "--after", str(a), "--after", f"{c}:failed", "--only-after", name="upload")
    d = add(run, "--after", str(b), name="notify")
    out = tmp_path / "tasks.json"
    assert run("export", str(out)).code == 0
    other = tmp_path / "other.sqlite3"

    def there(*args: str) -> str:
        result = run("--db", str(other), *args)
        assert result.code == 0, result.err
        return result.out

    there("add", "--name", "unrelated", "--command", "true")  # ids move up by one
    there("add", "--name", "another", "--command", "true")
    report = json.loads(there("import", str(out), "--json"))
    new = dict(zip(["fetch", "build", "upload", "notify"], report["ids"], strict=True))
    assert new["fetch"] != a
    tasks = {t["name"]: t for t in json.loads(there("list", "--json"))}
    upload = json.loads(there("show", str(new["upload"]), "--json"))
    assert [(e["id"], e["on"]) for e in upload["after"]] == [
        (new["fetch"], "succeeded"),
        (new["build"], "failed"),
    ]
    assert upload["only_after"] is True
    notify = json.loads(there("show", str(new["notify"]), "--json"))
    assert [e["id"] for e in notify["after"]] == [new["upload"]]
    assert all(
        e["id"] < PLACEHOLDER_BASE
        for t in tasks.values()
        for e in t["definition"].get("after", {}).get("tasks", [])
    )
    assert d  # the source ids are untouched
    assert [e["id"] for e in show(run, b)["after"]] == [a, c]


def test_an_import_skips_tasks_whose_upstream_is_not_imported_and_cycles(
    run: Run, tmp_path: Path
) -> None:
    def task(task_id: int, name: str, after: list[int]) -> dict[str, object]:
        value: dict[str, object] = {
            "id": task_id,
            "name": name,
            "command": {"v": 1, "line": "true"},
            "first_run_at": "2026-01-01T12:00:00+00:00",
            "state": "pending",
        }
        if after:
            value["after"] = {"v": 1, "tasks": [{"id": u} for u in after], "only": True}
        return value

    document = {
        "format": "taskgui-export",
        "version": 1,
        "tasks": [
            task(1, "alone", []),
            task(2, "after a missing one", [9]),
            task(3, "after that", [2]),
            task(4, "ping", [5]),
            task(5, "pong", [4]),
            task(6, "after alone", [1]),
            task(1, "a second id 1", []),  # which does "after 1" mean? the first
            task(7, "a second id 7", []),
            task(7, "an id no task names", []),  # only a number: both are kept
        ],
    }
    path = tmp_path / "hand.json"
    path.write_text(json.dumps(document))
    result = run("import", str(path), "--json")
    assert result.code == 0, result.err
    report = result.json()
    reasons = {item["text"]: item["reason"] for item in report["skipped"]}
    assert "task 9 of the file, which is not imported" in reasons["after a missing one"]
    assert "task 2 of the file" in reasons["after that"]
    assert "cycle: task 4 -> task 5 -> task 4" in reasons["ping"]
    assert reasons["a second id 1"] == (
        "id 1 is given to an earlier task of the file too, which is imported"
    )
    names = sorted(t["name"] for t in run("list", "--json").json())
    assert names == ["a second id 7", "after alone", "alone", "an id no task names"]


def test_edit_rewires_and_refuses_a_cycle_naming_it(run: Run) -> None:
    a = add(run, "--every", "1h", name="fetch")
    b = add(run, "--after", str(a), "--only-after", name="build")
    c = add(run, "--after", str(b), "--only-after", name="upload")
    cycle = run("edit", str(a), "--after", str(c))
    assert cycle.code == 2
    assert f"cycle: fetch ({a}) -> upload ({c}) -> build ({b}) -> fetch ({a})" in cycle.err
    assert show(run, a)["after"] == []  # unchanged
    done = run("edit", str(c), "--after", f"{a}:failed")
    assert done.code == 0 and f"runs after {a}:failed only" in done.out
    assert [(e["id"], e["on"]) for e in show(run, c)["after"]] == [(a, "failed")]
    assert show(run, b)["downstream"] == []
    assert run("edit", str(c), "--no-after").code == 0
    cleared = show(run, c)
    assert cleared["after"] == [] and cleared["only_after"] is False
    missing = run("edit", str(c), "--after", "99")
    assert missing.code == 2 and "task 99, which does not exist" in missing.err


def test_on_a_terminal_delete_asks_and_takes_no_for_an_answer(db: Path) -> None:
    for args in (["--name", "fetch"], ["--name", "upload", "--after", "1", "--only-after"]):
        assert program(db, "add", "--command", "true", *args).returncode == 0
    code, text = on_a_terminal(db, "n", "delete", "1")
    assert code == 1 and "upload (2) run(s) after fetch (1); delete it anyway? [y/N]" in text
    assert "not deleted" in text
    assert program(db, "show", "1").returncode == 0
    code, text = on_a_terminal(db, "y", "delete", "1")
    assert code == 0 and "task 1 deleted" in text
    assert program(db, "show", "1").returncode == 1


def test_only_after_says_it_drops_a_schedule_and_needs_upstreams(run: Run) -> None:
    """A trial found `--only-after yes` then `no` turning an every-15-minutes task into
    a one-off without a word, and `yes` on a task with no upstream answering exit 0."""
    a = add(run, name="fetch")
    b = add(run, "--every", "15m", name="report")
    lonely = run("edit", str(b), "--only-after", "yes")
    assert lonely.code == 2
    assert f"task {b} runs after no task, so --only-after yes has nothing" in lonely.err
    assert show(run, b)["recurrence"]["kind"] == "every"  # unchanged
    assert run("edit", str(b), "--after", str(a)).code == 0  # keeps its schedule
    assert show(run, b)["recurrence"]["kind"] == "every"
    only = run("edit", str(b), "--only-after", "yes")
    assert only.code == 0, only.err
    assert f"task {b}'s own schedule (every 15 minutes) is dropped" in only.err
    assert "--only-after no will not bring it back" in only.err
    back = run("edit", str(b), "--only-after", "no")
    assert back.code == 0, back.err
    assert f"task {b} has no schedule of its own (only-after dropped it)" in back.err
