"""The SQLite backend: one file, its schema and migrations, the scheduler lock, the
file checks, WAL checkpoints, and the repository over it all.
"""
