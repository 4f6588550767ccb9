"""The PostgreSQL store: one schedule shared by several machines.

``schema`` holds the versioned migrations, ``connection`` opens and translates errors,
``repository`` implements the store protocols, ``feed`` is the change feed over
LISTEN/NOTIFY, ``conninfo`` reads the keyword/value form of a DSN. psycopg is an
optional dependency (the ``postgres`` extra): nothing that imports it is imported unless
a DSN (``postgresql://...`` or ``host=... dbname=...``) is chosen.
"""
