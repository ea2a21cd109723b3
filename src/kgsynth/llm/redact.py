"""Secrets out of text before it is written: API keys and credentials a server (or a proxy)
echoed back in an error body, a URL's user:password, an ``Authorization`` header.

``redact(text)`` replaces, with ``[REDACTED]``:

* every secret passed in ``secrets`` and every API key a gateway of this process has read
  (``register_secret``), verbatim and as JSON-escaped, ``repr``-escaped and URL-encoded;
* the value of anything that looks like a credential header or parameter:
  ``Authorization: Bearer ...``, ``"authorization": "Basic ..."``, ``x-api-key=...``,
  ``api_key=...``, ``access_token=...``;
* any ``Bearer <token>`` (8+ characters with a digit, or 20+) and common API-key shapes (``sk-...``, ``sk-proj-...``,
  ``hf_...``, ``gsk_...``, ``AIza...``, ``xai-...``, ``pplx-...``) standing on their own;
* the ``user:password@`` part of a URL.

It is applied at the source (every error the gateway returns or raises) and is safe to apply
again on whole serialised lines (a JSON row stays valid JSON: the replacement has no quotes).
"""

from __future__ import annotations

import json
import re
import threading
import urllib.parse
from collections.abc import Iterable

REDACTED = "[REDACTED]"
_MIN_SECRET = 4  # shorter "keys" (e.g. "x" for a local server that wants none) are not secrets

_registered: set[str] = set()
_lock = threading.Lock()

# a credential-bearing name, its separator (header colon, JSON/dict quotes, '=' of a query or
# form), an optional auth scheme, then the value up to a quote, space, comma or bracket
_NAMED = re.compile(
    r"""(?ix)
    (\b(?:proxy-)?authorization|\bx-api-key|\bapi[-_]?key|\bapikey|\baccess[-_]token|\bx-goog-api-key)
    (\\?["']?\s*[:=]\s*\\?["']?\s*)
    (?>(?:(bearer|basic|token|digest)\s+)?)
    (?!\[REDACTED\])([^\s"'\\,;&)}\]]+)
    """
)
_BEARER = re.compile(r"(?i)\b(bearer)\s+([A-Za-z0-9\-._~+/=]{8,})")
_KEY_SHAPES = re.compile(
    r"""(?x)
    \bsk-[A-Za-z0-9_\-]{16,}                              # OpenAI (sk-proj-...), Anthropic (sk-ant-...)
    | \bsk_(?:live|test)_[A-Za-z0-9]{16,}
    | \bhf_[A-Za-z0-9]{20,}                                 # Hugging Face
    | \bgsk_[A-Za-z0-9]{20,}                                # Groq
    | \bAIza[0-9A-Za-z_\-]{30,}                             # Google
    | \bxai-[A-Za-z0-9]{20,}
    | \bpplx-[A-Za-z0-9]{20,}
    """
)
_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.\-]*://)[^/\s:@]+:[^/\s@]+@")


def register_secret(secret: str | None) -> None:
    """Remember ``secret`` (an API key read from the environment) so that every later
    ``redact`` call in this process removes it, whoever calls it."""
    if secret and len(secret) >= _MIN_SECRET:
        with _lock:
            _registered.add(secret)


def redact(text: str, secrets: Iterable[str | None] = ()) -> str:
    """``text`` with ``secrets``, the registered API keys and anything shaped like a
    credential replaced by ``[REDACTED]`` (see the module docstring). Idempotent."""
    if not text:
        return text
    text = redact_secrets(text, secrets)
    text = _USERINFO.sub(lambda m: f"{m.group(1)}{REDACTED}@", text)
    text = _NAMED.sub(_named, text)
    text = _BEARER.sub(_bearer, text)
    return _KEY_SHAPES.sub(REDACTED, text)


def redact_secrets(text: str, secrets: Iterable[str | None] = ()) -> str:
    """Only the exact secrets (given and registered) out of ``text``, no pattern: for a
    model's reply, whose content must otherwise stay as it came."""
    if not text:
        return text
    with _lock:
        known = set(_registered)
    known.update(s for s in secrets if s and len(s) >= _MIN_SECRET)
    for secret in sorted(known, key=len, reverse=True):  # a key that contains another goes first
        for form in _forms(secret):
            if form in text:
                text = text.replace(form, REDACTED)
    return text


def _forms(secret: str) -> set[str]:
    """How a secret may appear in an error text: as is, inside JSON, inside a Python repr
    (openai formats the parsed error body as a dict), URL-encoded."""
    return {
        secret,
        json.dumps(secret)[1:-1],
        json.dumps(secret, ensure_ascii=False)[1:-1],
        repr(secret)[1:-1],
        urllib.parse.quote(secret, safe=""),
        urllib.parse.quote_plus(secret, safe=""),
    }


def _bearer(match: re.Match) -> str:
    token = match.group(2)  # a token has a digit or is long: "Bearer bonds" is not one
    return f"{match.group(1)} {REDACTED}" if len(token) >= 20 or any(c.isdigit() for c in token) else match.group(0)


def _named(match: re.Match) -> str:
    name, separator, scheme, _ = match.groups()
    return f"{name}{separator}{scheme + ' ' if scheme else ''}{REDACTED}"
