"""Notification channels that leave the desktop: a webhook and e-mail.

Qt-free, so the window and the headless daemon send the same messages; ``dispatcher``
runs every send on its own thread, off the GUI and the scheduler service threads.
"""
