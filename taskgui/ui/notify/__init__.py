"""Telling a person what matters: the in-window banner and desktop notifications."""
