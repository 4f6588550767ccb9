"""Persistence: sqlite3 connection, pragmas, migrations and the task repository (no Qt)."""
