"""One JSON shape for a task, written once: the store, the export file, requests and
the CLI's JSON all use it.

- ``values``: a command, a schedule and a retry policy (versioned objects; their
  compact text is what the store keeps in its columns).
- ``task``: a task's definition and one run of its history.
- ``stored``: reading a value back from text a taskgui wrote (a column, a payload).
- ``fields``: typed access to a JSON object's keys, errors that name the field.

Plain dicts and the standard library's ``json``, not a schema library:
``benchmarks/bench_shape.py`` measured msgspec beside it, and the store's hot paths
are hand-written text already (see that script's docstring for the figures).
"""
