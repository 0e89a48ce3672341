"""HTTP basic auth against bcrypt hashes (`basic_auth_users` of the web config file).

Why a cache: bcrypt at cost 10 takes ~50 ms by design, and Prometheus scrapes every few seconds
with the same credentials; exporter-toolkit caches successful checks the same way. Only successes
are cached, keyed by a SHA-256 of user, password and hash, so a changed hash invalidates them.
Unknown users still pay one bcrypt check, so timing does not reveal which names exist.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import threading
from collections.abc import Mapping

import bcrypt

__all__ = ["BasicAuth"]

_CACHE_LIMIT = 1024
# A valid hash of a random password, checked for unknown users to keep timing uniform.
_DUMMY_HASH = b"$2b$10$4RwCQJUzJ5lB8lC0kC2oJeq5xS2pW3bJ1xq0FZb1kq8o8w9gJvJ1e"


class BasicAuth:
    """Checks an `Authorization` header value against user -> bcrypt-hash pairs."""

    def __init__(self, users: Mapping[str, str]) -> None:
        self._users = {user: hashed.encode("ascii") for user, hashed in users.items()}
        self._verified: set[bytes] = set()
        self._lock = threading.Lock()

    def is_authorized(self, header: str | None) -> bool:
        """True when the header carries Basic credentials of a configured user."""
        credentials = _decode_basic(header)
        if credentials is None:
            return False
        user, password = credentials
        hashed = self._users.get(user)
        key = hashlib.sha256(b"\0".join((user.encode(), password, hashed or b""))).digest()
        with self._lock:
            if key in self._verified:
                return True
        try:
            ok = bcrypt.checkpw(password, hashed or _DUMMY_HASH) and hashed is not None
        except ValueError:  # malformed stored hash: refuse rather than crash the request thread
            ok = False
        if ok:
            with self._lock:
                if len(self._verified) >= _CACHE_LIMIT:
                    self._verified.clear()
                self._verified.add(key)
        return ok


def _decode_basic(header: str | None) -> tuple[str, bytes] | None:
    if not header:
        return None
    scheme, _, encoded = header.partition(" ")
    if scheme.lower() != "basic":
        return None
    try:
        decoded = base64.b64decode(encoded.strip(), validate=True)
    except (binascii.Error, ValueError):
        return None
    user, sep, password = decoded.partition(b":")
    if not sep:
        return None
    return user.decode("utf-8", "replace"), password
