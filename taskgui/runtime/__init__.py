"""QtCore runtime: the scheduler service, the worker pool and the command runner (no widgets)."""
