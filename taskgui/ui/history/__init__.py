"""A task's run history and what each run printed."""
