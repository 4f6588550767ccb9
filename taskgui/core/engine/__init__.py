"""The scheduling state machine and its private structures.

``engine`` is the state machine (frozen, past-tense events; no clock, no I/O); the
others are what it keeps: an entry per task, the time and ready queues over indexed
heaps, and the deferred load of a cold start.
"""
