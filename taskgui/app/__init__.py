"""The composition roots: the window and the daemon, their logging and POSIX signals.

The only package that sees every layer and picks the implementations (which store,
which scheduler, which notifier) and passes them down through constructors.
"""
