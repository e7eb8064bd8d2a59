"""Small wording helpers shared by the command line, the reports and the runners, and how a value
that may be a secret is recorded (a run's files are published: a token must never be in them)."""

from __future__ import annotations

import hashlib
import re
import shlex
import urllib.parse


def plural(n: int, one: str, many: str | None = None) -> str:
    """'1 scenario', '2 scenarios' ('many': an irregular plural)."""
    return f"{n} {one if n == 1 else (many or one + 's')}"


#: Recorded reasons (validity, verdicts) as a reader says them.
_PROSE = (
    ("CI of the median +-", "95 % interval of the median ±"),
    ("CI of the median", "95 % interval of the median"),
    ("+-", "±"),
)


def prose(text: str) -> str:
    """A recorded reason in words: 'CI of the median +-0.0%' reads '95 % interval of the median ±0.0%'
    (what is stored keeps its own spelling)."""
    for old, new in _PROSE:
        text = text.replace(old, new)
    return text


def hashed(value: str) -> str:
    """How a private value (an --ab-env value, a token on a command line) is recorded: enough to
    tell two values apart, not to read one."""
    return "sha256:" + hashlib.sha256(value.encode()).hexdigest()[:16]


#: One shell word as written (quotes kept), so a value is replaced where it stands.
_WORD = r"""(?:"(?:[^"\\]|\\.)*"|'[^']*'|\\.|[^\s"'\\])+"""
_FLAG = re.compile(rf"(?<!\S)(--?[A-Za-z][\w-]*)(=|\s+)({_WORD})")
_PAIR = re.compile(rf"(?<!\S)([A-Za-z_]\w*)=({_WORD})")
#: Whole words of a flag's or a variable's name that make its value a secret (``--hf-token``,
#: ``OPENAI_API_KEY``), but not ``--max-num-batched-tokens``, ``--tokenizer`` or ``--password-file``.
_SECRET_WORDS = frozenset(
    {"key", "apikey", "token", "secret", "password", "passwd", "pwd", "credential", "credentials"}
)


def _secret_name(name: str) -> bool:
    words = re.split(r"[-_]+", name.strip("-").lower())
    return words[-1] not in ("file", "path") and any(w in _SECRET_WORDS for w in words)  # a path is no secret


def _hash_word(word: str) -> str:
    try:
        parts = shlex.split(word)
    except ValueError:
        parts = [word]
    return hashed(parts[0] if len(parts) == 1 else word)


def redact_secrets(command: str) -> str:
    """A command line as it may be recorded: the value after a flag that names a secret
    (``--api-key V``, ``--token=V``, ``--hf-token V``, ``--password V``) and of a ``NAME=V`` pair whose
    name does (``HF_TOKEN=V``, ``OPENAI_API_KEY=V``) replaced by :func:`hashed` of it, and every URL in
    it as :func:`recorded_url` records it; the rest as written (a command without one is returned
    unchanged)."""

    def flag(m: re.Match) -> str:
        name, sep, value = m.groups()
        if not _secret_name(name) or value.startswith("-"):
            return m.group(0)
        return f"{name}{sep}{_hash_word(value)}"

    def pair(m: re.Match) -> str:
        name, value = m.groups()
        return f"{name}={_hash_word(value)}" if _secret_name(name) else m.group(0)

    return _URL.sub(lambda m: recorded_url(m.group(0)), _PAIR.sub(pair, _FLAG.sub(flag, command)))


#: A URL in text (a command line, a config value, a message), up to a space or a quote.
_URL = re.compile(r"""\b[A-Za-z][A-Za-z0-9+.-]*://[^\s'"<>]+""")


def recorded_url(url: str) -> str:
    """A URL as it may be recorded: its userinfo (``user:password@``) and each query and fragment
    value (``?api_key=V``) replaced by :func:`hashed` of it; the scheme, host, port, path and
    parameter names as written. The same URL is always recorded the same, and two hosts stay two."""
    try:
        parts = urllib.parse.urlsplit(url)
    except ValueError:
        return hashed(url)
    userinfo, at, host = parts.netloc.rpartition("@")
    netloc = f"{hashed(userinfo)}@{host}" if at else parts.netloc

    def values(text: str) -> str:
        pairs = (p.partition("=") for p in text.split("&"))
        return "&".join(f"{k}={hashed(v)}" if v else (f"{k}=" if eq else hashed(k)) for k, eq, v in pairs if k or eq)

    return urllib.parse.urlunsplit(
        (parts.scheme, netloc, parts.path, values(parts.query) if parts.query else "", values(parts.fragment))
    )


#: Config keys whose value is an endpoint as given: recorded whole, since a quote or a space in its
#: password would end a URL found in running text before the secret.
_URL_KEYS = frozenset({"url", "ab_url"})


def redact_config(value, key: str | None = None):
    """A run's config as its files record it (they are published): the value of a ``url`` or
    ``ab_url`` key (or each of a list of them) through :func:`recorded_url`, every other string
    through :func:`redact_secrets`."""
    if isinstance(value, dict):
        return {k: redact_config(v, k) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [redact_config(v, key) for v in value]
    if not isinstance(value, str):
        return value
    return recorded_url(value) if key in _URL_KEYS else redact_secrets(value)
