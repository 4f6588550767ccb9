"""Qt widgets: main window, task table model and proxy, dialogs and tray; reads the service."""
