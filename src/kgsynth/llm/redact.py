"""Secrets out of text before it is written: API keys and credentials a server (or a proxy)
echoed back in an error body, a URL's user:password, an ``Authorization`` header.

``redact(text)`` replaces, with ``[REDACTED]``:

* every secret passed in ``secrets`` and every API key or password this process has read
  (``register_secret``), and every piece of one of 8 characters or more (a reply or page
  cut short elsewhere may hold part of one): as is and percent-encoded (either case),
  HTML-escaped, JSON- and ``repr``-escaped, or any mix of those;
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

import html
import re
import threading
from collections.abc import Iterable, Sequence

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
    """Only the secrets (given and registered) and their pieces out of ``text``, no pattern:
    for a model's reply, whose content must otherwise stay as it came."""
    if not text:
        return text
    with _lock:
        known = set(_registered)
    known.update(s for s in secrets if s and len(s) >= _MIN_SECRET)
    if not known:
        return text
    spans = _secret_spans(text, text, range(len(text) + 1), known)
    if _ESCAPE.search(text):
        for plus in ("+", " "):  # "+" is a space only in a URL's query
            decoded, starts = _decoded(text, plus)
            spans += _secret_spans(text, decoded, starts, known)
    for start, end in reversed(_merged(spans)):
        text = text[:start] + REDACTED + text[end:]
    return text


_PIECE = 8  # the shortest run of a secret's characters taken for a leak (shorter ones are ordinary words)
# one escaped character: a "+" (maybe a space), percent-encoded (either case), an HTML
# character reference, a JSON or repr escape
_ESCAPE = re.compile(r"(\+)|%([0-9A-Fa-f]{2})|&(#[0-9]{1,7}|#[xX][0-9A-Fa-f]{1,6}|[A-Za-z]{2,6});|\\(?:u([0-9A-Fa-f]{4})|x([0-9A-Fa-f]{2})|([\"'/\\]))")


def _decoded(text: str, plus: str) -> tuple[str, list[int]]:
    """``text`` with every escaped character (``_ESCAPE``) decoded, "+" as ``plus``, and
    where each decoded character starts in ``text`` (with ``len(text)`` last)."""
    chars: list[str] = []
    starts: list[int] = []
    at = 0
    for match in _ESCAPE.finditer(text):
        chars.append(text[at:match.start()])
        starts.extend(range(at, match.start()))
        char = plus if match.group(1) else _unescaped(match)
        chars.append(char)
        starts.extend([match.start()] * len(char))  # a reference to an unknown entity is left as it was
        at = match.end()
    chars.append(text[at:])
    starts.extend(range(at, len(text) + 1))
    return "".join(chars), starts


def _unescaped(match: re.Match) -> str:
    _, percent, entity, unicode, hexa, plain = match.groups()
    if percent or unicode or hexa:
        code = int(percent or unicode or hexa, 16)
        return chr(code) if percent is None or code < 0x80 else match.group(0)  # a byte of UTF-8: left as it is
    if entity:
        char = html.unescape(f"&{entity};")
        return char if len(char) == 1 else match.group(0)
    return plain


def _secret_spans(text: str, searched: str, starts: Sequence[int], secrets: set[str]) -> list[tuple[int, int]]:
    """Spans of ``text`` holding a secret, or a piece of one of ``_PIECE`` characters or more
    in any case (a server may lower-case what it echoes), found in ``searched`` (``text``
    itself or decoded; ``starts`` maps its positions to ``text``)."""
    folded = searched.lower()
    if len(folded) != len(searched):  # a character whose lower case is longer: positions would shift
        folded = searched
    spans = []
    for secret in secrets:
        if len(secret) <= _PIECE:
            found = [(m.start(), m.end()) for m in re.finditer(re.escape(secret), searched)]
        else:
            found = _pieces(folded, secret.lower() if folded is not searched else secret)
        spans += [(starts[start], starts[end]) for start, end in found]
    return spans


def _pieces(text: str, secret: str) -> list[tuple[int, int]]:
    """Spans of ``text`` that are pieces of ``secret`` of ``_PIECE`` characters or more, each as long as it goes."""
    found = []
    for gram in {secret[i:i + _PIECE] for i in range(len(secret) - _PIECE + 1)}:
        at = text.find(gram)
        while at != -1:
            end = at + _PIECE
            while end < len(text) and text[at:end + 1] in secret:
                end += 1
            found.append((at, end))
            at = text.find(gram, at + 1)
    return found


def _merged(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


def _bearer(match: re.Match) -> str:
    token = match.group(2)  # a token has a digit or is long: "Bearer bonds" is not one
    return f"{match.group(1)} {REDACTED}" if len(token) >= 20 or any(c.isdigit() for c in token) else match.group(0)


def _named(match: re.Match) -> str:
    name, separator, scheme, _ = match.groups()
    return f"{name}{separator}{scheme + ' ' if scheme else ''}{REDACTED}"
