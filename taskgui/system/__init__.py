"""Qt-free helpers for what the operating system does: process groups and ``/proc``,
stopping what a dead scheduler left running, private file writes, user accounts, the
cyclic collector. Any layer above ``core`` may use them.
"""
