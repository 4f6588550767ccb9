"""The dialog that creates, edits and duplicates a task, and its editors."""
