"""What makes the window a desktop app: the shell, the tray, autostart at login, one
window per schedule, and the settings.
"""
