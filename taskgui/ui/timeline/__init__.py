"""The timeline: a lane per task, past runs, running ones and upcoming occurrences."""
