"""Running one schedule on several nodes (PostgreSQL): the membership loop of a node.

Qt-free: a daemon runs it on a thread of its own, a test or a benchmark in a process.
"""
