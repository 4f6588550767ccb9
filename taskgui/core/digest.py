"""BLAKE2b, without loading OpenSSL.

``import hashlib`` loads OpenSSL's libcrypto for its other algorithms: 3.7 MB of the
daemon's resident set (about 8% of an empty one), for two hashes that are BLAKE2b,
which CPython implements itself in ``_blake2``. ``hashlib.blake2b`` *is*
``_blake2.blake2b``, so the digests are the same bytes (the run mark of a command
started before an upgrade is still found after it; a spread offset stays where it was).
"""

from __future__ import annotations

try:
    from _blake2 import blake2b
except ImportError:  # an interpreter built without it: hashlib's, with what it loads
    from hashlib import blake2b

__all__ = ["blake2b"]
