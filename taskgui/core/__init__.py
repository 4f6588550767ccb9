"""The scheduling core: task model, indexed heaps, recurrence, retry and the engine.

Pure Python (the standard library only, cron included): no Qt, no sqlite3, no I/O, and no
clock reads outside ``clock.py``. Every other layer stands on this one.
"""
