"""Import and export in the window: the same as the CLI's, with a preview."""
