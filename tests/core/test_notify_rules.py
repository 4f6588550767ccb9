"""The notification rules: which finished attempts notify, streaks, snoozes, quiet hours."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from datetime import time as wall_time

import pytest

from taskgui.core.errors import InvalidTaskError
from taskgui.core.notify_rules import (
    DEFAULT_RULE,
    NotifyGate,
    NotifyRule,
    NotifyWhen,
    QuietHours,
    Trigger,
    parse_quiet_hours,
    parse_rule,
)

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
NOON = wall_time(12, 0)


@pytest.mark.parametrize(
    ("text", "rule"),
    [
        ("on-failure", NotifyRule(when=NotifyWhen.FAILURE)),
        (" After:3 ", NotifyRule(when=NotifyWhen.AFTER, count=3)),
        ("on-recovery", NotifyRule(when=NotifyWhen.RECOVERY)),
        ("on-give-up", DEFAULT_RULE),
        ("never", NotifyRule(when=NotifyWhen.NEVER)),
    ],
)
def test_every_rule_reads_back_from_its_text(text: str, rule: NotifyRule) -> None:
    assert parse_rule(text) == rule
    assert parse_rule(rule.text) == rule


@pytest.mark.parametrize(
    "text",
    ["", "sometimes", "after:", "after:0", "after:-1", "after:x", "after:9999999", "after:\u0661"],
)
def test_a_rule_that_is_not_one_of_the_five_is_a_clear_error(text: str) -> None:
    with pytest.raises(InvalidTaskError, match=r"after|notification rule"):
        parse_rule(text)


def test_only_after_takes_a_count() -> None:
    with pytest.raises(InvalidTaskError):
        NotifyRule(when=NotifyWhen.NEVER, count=2)


def run(gate: NotifyGate, rule: NotifyRule, outcomes: str, **kw: object) -> list[Trigger | None]:
    """Feed attempts: f = failed and retried, x = failed and gave up, s = succeeded."""
    return [
        gate.attempt_finished(
            1,
            rule,
            failed=o != "s",
            gave_up=o == "x",
            now=kw.get("now", NOW),  # type: ignore[arg-type]
            local=kw.get("local", NOON),  # type: ignore[arg-type]
        )
        for o in outcomes
    ]


F, G, R, X = Trigger.FAILED, Trigger.FAILING, Trigger.RECOVERED, Trigger.GAVE_UP


@pytest.mark.parametrize(
    ("rule", "outcomes", "expected"),
    [
        ("on-failure", "ffxs", [F, F, X, None]),
        ("after:3", "ffssfffffx", [None, None, None, None, None, None, G, None, None, None]),
        ("after:1", "fsf", [G, None, G]),
        ("on-recovery", "sffsss", [None, None, None, R, None, None]),
        ("on-give-up", "ffxsfx", [None, None, X, None, None, X]),
        ("never", "ffxs", [None] * 4),
    ],
)
def test_each_rule_notifies_exactly_where_it_says(
    rule: str, outcomes: str, expected: list[Trigger | None]
) -> None:
    assert run(NotifyGate(), parse_rule(rule), outcomes) == expected


def test_quiet_hours_across_midnight_hold_back_and_let_through() -> None:
    quiet = parse_quiet_hours("22:00-07:00")
    assert quiet == QuietHours(start=wall_time(22), end=wall_time(7))
    assert [quiet.contains(wall_time(h)) for h in (21, 22, 23, 0, 6, 7, 12)] == [
        False, True, True, True, True, False, False,
    ]  # fmt: skip
    gate = NotifyGate(quiet)
    rule = parse_rule("on-failure")
    assert run(gate, rule, "f", local=wall_time(23, 30)) == [None]
    assert run(gate, rule, "f", local=wall_time(7, 0)) == [F]


def test_a_same_day_span_and_an_empty_one() -> None:
    quiet = parse_quiet_hours("12:00-13:00")
    assert quiet is not None and quiet.contains(NOON) and not quiet.contains(wall_time(13))
    empty = parse_quiet_hours("08:00-08:00")
    assert empty is not None and not empty.contains(wall_time(8))
    assert parse_quiet_hours("  ") is None
    for bad in ("22-7", "22:00", "25:00-07:00", "a-b-c"):
        with pytest.raises(InvalidTaskError, match="22:00-07:00"):
            parse_quiet_hours(bad)


def test_a_snooze_holds_one_task_back_until_it_ends_but_keeps_counting() -> None:
    gate = NotifyGate()
    rule = parse_rule("after:2")
    gate.snooze(1, NOW + timedelta(hours=1))
    assert run(gate, rule, "f", now=NOW) == [None]
    assert gate.streak(1) == 1
    assert run(gate, rule, "f", now=NOW + timedelta(minutes=59)) == [None]  # second: snoozed
    assert (
        gate.attempt_finished(2, rule, failed=True, gave_up=False, now=NOW, local=NOON) is None
    )  # other tasks are not snoozed, this is their first failure
    assert gate.snoozed_until(1, NOW + timedelta(hours=1)) is None
    gate.forget(1)
    assert run(gate, rule, "ff", now=NOW + timedelta(hours=2)) == [None, G]
