"""Password hashes (PBKDF2-SHA256 from the standard library); passwords are never stored."""

from __future__ import annotations

import hashlib
import hmac

_ITERATIONS = 1000  # mock services: enough to never store clear text, cheap to generate


def hash_password(password: str, salt: str) -> str:
    """`pbkdf2_sha256$<iterations>$<salt>$<hex>`; the salt comes from the world's RNG so the
    world stays reproducible."""
    digest = hashlib.pbkdf2_hmac("sha256", password.encode(), salt.encode(), _ITERATIONS).hex()
    return f"pbkdf2_sha256${_ITERATIONS}${salt}${digest}"


def verify_password(password: str, stored: str) -> bool:
    try:
        _, iterations, salt, digest = stored.split("$")
    except ValueError:
        return False
    check = hashlib.pbkdf2_hmac("sha256", password.encode(), salt.encode(), int(iterations)).hex()
    return hmac.compare_digest(check, digest)
