"""This user's seal: an HMAC that proves a document was written by this user's ntscope and not
edited since (metadata.json after a conversion, a kept compare side's side.json). The key is
32 random bytes in NTSCOPE_CACHE (KEY_FILE, mode 0600), made by the first ntscope that needs
it; a document sealed under another key (another user, another cache) does not verify and is
treated as not ours: its data is made again."""
import hashlib
import hmac
import json
import os

from . import inputs
from .errors import NtscopeError

KEY_FILE = "compare-side.key"   # the name it had when only compare sides were sealed


def key_path():
    from . import cache
    return os.path.join(cache.cache_dir(), KEY_FILE)


def key():
    """The key (32 bytes), made when missing, or None when it cannot be had (a cache folder
    that cannot be written, a key file of the wrong size)."""
    path = key_path()
    for _ in range(2):
        try:
            data = inputs.read_bytes(path, "seal key", 64, "remove it: ntscope makes another")
            return data if len(data) == 32 else None
        except NtscopeError:
            if os.path.lexists(path):
                return None
        try:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        except FileExistsError:
            continue   # made meanwhile by another ntscope: read it
        except OSError:
            return None
        try:
            os.write(fd, os.urandom(32))
        finally:
            os.close(fd)
    return None


def canonical(doc):
    return json.dumps(doc, sort_keys=True, separators=(",", ":"), default=str).encode()


def sign(doc, secret, field="seal"):
    """The seal of DOC: every field but FIELD itself."""
    return hmac.new(secret, canonical({k: v for k, v in doc.items() if k != field}), hashlib.sha256).hexdigest()


def verifies(doc, secret, field="seal"):
    """True when DOC carries FIELD and it is sign(DOC) under SECRET."""
    got = doc.get(field)
    return isinstance(got, str) and hmac.compare_digest(got, sign(doc, secret, field))
