"""A task pinned to a node or a node tag (``--on-node`` / ``--on-tag``, for a shared
schedule): its pin lives in the ``rules`` JSON and in the task object, round-trips
through both, and an unpinned task's text is what it was before pins existed."""

from __future__ import annotations

from dataclasses import replace

import pytest

from taskgui.core.errors import InvalidTaskError
from taskgui.core.shape.rules import decode_rules_text, rules_text
from taskgui.core.shape.task import TaskDecoder, task_json
from tests.helpers.factories import make_spec


def test_a_pin_round_trips_through_the_rules_column_and_the_task_object() -> None:
    spec = make_spec(3, on_node="backup-box", on_tag="disk")
    text = rules_text(spec)
    assert text is not None and '"on_node":"backup-box"' in text
    assert decode_rules_text(text)[5:] == ("backup-box", "disk")
    value = task_json(spec)
    assert (value["on_node"], value["on_tag"]) == ("backup-box", "disk")
    decoded, _ = TaskDecoder().task(value)
    assert decoded == spec


def test_an_unpinned_task_writes_nothing_new() -> None:
    spec = make_spec(3)
    assert rules_text(spec) is None
    assert "on_node" not in task_json(spec) and "on_tag" not in task_json(spec)


def test_a_pin_is_stripped_and_checked_like_a_key() -> None:
    assert make_spec(1, on_node="  laptop ").on_node == "laptop"
    assert make_spec(1, on_tag="   ").on_tag is None
    with pytest.raises(InvalidTaskError, match="the node tag is longer than 200"):
        make_spec(1, on_tag="x" * 201)
    with pytest.raises(InvalidTaskError, match="node name"):
        replace(make_spec(1), on_node="a\x00b")
