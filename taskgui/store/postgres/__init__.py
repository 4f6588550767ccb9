"""The PostgreSQL store: one schedule shared by several machines.

``schema`` holds the versioned migrations, ``connection`` opens and translates errors,
``repository`` implements the store protocols, ``feed`` is the change feed over
LISTEN/NOTIFY. psycopg is an optional dependency (the ``postgres`` extra): nothing here
is imported unless a ``postgresql://`` DSN is chosen.
"""
