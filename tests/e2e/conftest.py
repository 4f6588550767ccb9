"""Fixtures of the end-to-end tests on a shared (PostgreSQL) schedule."""

from __future__ import annotations

from tests.helpers.postgres import pytest_runtest_makereport  # noqa: F401 - the hook
from tests.helpers.shared_nodes import dsn, nodes, postgres  # noqa: F401 - fixtures
