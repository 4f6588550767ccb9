"""Qt-free use cases that the CLI, the daemon and the scheduler service share.

The engine decides, the repository commits, then anyone acts (``operations``);
picking up after a crash (``recovery``); import and export against a store
(``transfer``).
"""
