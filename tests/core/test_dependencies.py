"""The "run after" rules: which completions trigger whom, fan-in, coalescing, cycles."""

from __future__ import annotations

from graphlib import CycleError, TopologicalSorter
from itertools import pairwise

import pytest
from hypothesis import given
from hypothesis import strategies as st

from taskgui.core.dependencies import (
    After,
    Dependencies,
    Upstream,
    check_upstreams,
    cycle_through,
)
from taskgui.core.errors import InvalidTaskError
from taskgui.core.states import RunOutcome

A, B, C, D = 1, 2, 3, 4


@pytest.mark.parametrize(
    ("after", "outcome", "expected"),
    [
        (After.SUCCEEDED, RunOutcome.SUCCEEDED, True),
        (After.SUCCEEDED, RunOutcome.FAILED, False),
        (After.FAILED, RunOutcome.FAILED, True),
        (After.FAILED, RunOutcome.TIMED_OUT, True),
        (After.FAILED, RunOutcome.INTERRUPTED, True),
        (After.FAILED, RunOutcome.SUCCEEDED, False),
        (After.FINISHED, RunOutcome.SUCCEEDED, True),
        (After.FINISHED, RunOutcome.FAILED, True),
        # Nothing ran to its end: no trigger, whatever the edge says.
        (After.FINISHED, RunOutcome.CANCELLED, False),
        (After.FINISHED, RunOutcome.MISSED, False),
    ],
)
def test_which_ends_qualify(after: After, outcome: RunOutcome, expected: bool) -> None:
    assert after.matches(outcome) is expected


def test_a_chain_of_three_runs_in_order() -> None:
    graph = Dependencies()
    graph.set(B, [Upstream(A)])
    graph.set(C, [Upstream(B)])
    assert graph.completed(A, RunOutcome.SUCCEEDED) == [B]
    assert graph.completed(B, RunOutcome.SUCCEEDED) == [C]
    assert graph.completed(C, RunOutcome.SUCCEEDED) == []


def test_fan_in_waits_for_every_upstream_since_the_last_run() -> None:
    graph = Dependencies()
    graph.set(C, [Upstream(A), Upstream(B)])
    assert graph.completed(A, RunOutcome.SUCCEEDED) == []
    assert graph.completed(A, RunOutcome.SUCCEEDED) == []  # A twice is still A once
    assert graph.satisfied(C) == {A}
    assert graph.completed(B, RunOutcome.SUCCEEDED) == [C]
    assert graph.satisfied(C) == set()  # cleared: the next run needs both again
    assert graph.completed(B, RunOutcome.SUCCEEDED) == []


def test_fan_out_starts_every_follower() -> None:
    graph = Dependencies()
    graph.set(B, [Upstream(A)])
    graph.set(C, [Upstream(A, After.FINISHED)])
    graph.set(D, [Upstream(A, After.FAILED)])
    assert graph.completed(A, RunOutcome.SUCCEEDED) == [B, C]
    assert graph.completed(A, RunOutcome.FAILED) == [C, D]


def test_a_failure_does_not_satisfy_a_success_edge() -> None:
    graph = Dependencies()
    graph.set(C, [Upstream(A), Upstream(B)])
    graph.completed(A, RunOutcome.FAILED)
    assert graph.satisfied(C) == set()


def test_marks_survive_a_restart_and_stale_ones_are_dropped() -> None:
    graph = Dependencies()
    graph.set(C, [Upstream(A), Upstream(B)], satisfied=[A, D])
    assert graph.satisfied(C) == {A}
    assert graph.completed(B, RunOutcome.SUCCEEDED) == [C]


def test_editing_the_edges_keeps_the_followers() -> None:
    graph = Dependencies()
    graph.set(B, [Upstream(A)])
    graph.set(C, [Upstream(B)])
    graph.set(B, [Upstream(D)])  # B now runs after D instead of A
    assert graph.completed(A, RunOutcome.SUCCEEDED) == []
    assert graph.completed(D, RunOutcome.SUCCEEDED) == [B]
    assert graph.downstream(B) == {C}


def test_removing_an_upstream_clears_its_marks_but_not_the_edge() -> None:
    graph = Dependencies()
    graph.set(C, [Upstream(A), Upstream(B)])
    graph.completed(A, RunOutcome.SUCCEEDED)
    graph.remove(A)
    assert graph.satisfied(C) == set()
    assert graph.upstreams(C) == (Upstream(A), Upstream(B))
    assert graph.downstream(A) == {C}


def test_a_cycle_is_named_in_order() -> None:
    graph = Dependencies()
    graph.set(B, [Upstream(A)])
    graph.set(C, [Upstream(B)])
    # A after C would close A <- B <- C <- A: A runs after C, C after B, B after A.
    assert graph.cycle_if(A, [Upstream(C)]) == [A, C, B, A]
    assert graph.cycle_if(A, [Upstream(D)]) is None


def test_check_upstreams_refuses_nonsense() -> None:
    with pytest.raises(InvalidTaskError, match="itself"):
        check_upstreams(A, [Upstream(A)])
    with pytest.raises(InvalidTaskError, match="twice"):
        check_upstreams(B, [Upstream(A), Upstream(A, After.FAILED)])
    with pytest.raises(InvalidTaskError, match="no task"):
        check_upstreams(B, [Upstream(0)])
    with pytest.raises(InvalidTaskError, match="at most"):
        check_upstreams(1000, [Upstream(i) for i in range(1, 100)])
    assert check_upstreams(D, [Upstream(C), Upstream(A)]) == (Upstream(A), Upstream(C))


edges = st.dictionaries(
    st.integers(1, 12), st.lists(st.integers(1, 12), max_size=4, unique=True), max_size=12
)


@given(graph=edges, task=st.integers(1, 12), new=st.lists(st.integers(1, 12), max_size=4))
def test_cycles_agree_with_the_standard_librarys_sorter(
    graph: dict[int, list[int]], task: int, new: list[int]
) -> None:
    """graphlib (not ours) says whether the graph with the new edges has any cycle."""
    # Start from an acyclic graph: the store never holds a cycle.
    acyclic: dict[int, list[int]] = {}
    for node, ups in graph.items():
        kept = [u for u in ups if cycle_through(node, [u], acyclic) is None]
        acyclic[node] = kept
    after = {**acyclic, task: new}
    try:
        tuple(TopologicalSorter(after).static_order())
        has_cycle = False
    except CycleError:
        has_cycle = True
    found = cycle_through(task, new, acyclic)
    assert (found is not None) == has_cycle
    if found is not None:
        assert found[0] == found[-1] == task
        for runs_after, upstream in pairwise(found):
            assert upstream in after.get(runs_after, [])
