"""Small wording helpers shared by the command line, the reports and the runners, and how a value
that may be a secret is recorded (a run's files are published: a token must never be in them)."""

from __future__ import annotations

import hashlib
import re
import shlex


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
    name does (``HF_TOKEN=V``, ``OPENAI_API_KEY=V``) replaced by :func:`hashed` of it; the rest as
    written (a command without one is returned unchanged)."""

    def flag(m: re.Match) -> str:
        name, sep, value = m.groups()
        if not _secret_name(name) or value.startswith("-"):
            return m.group(0)
        return f"{name}{sep}{_hash_word(value)}"

    def pair(m: re.Match) -> str:
        name, value = m.groups()
        return f"{name}={_hash_word(value)}" if _secret_name(name) else m.group(0)

    return _PAIR.sub(pair, _FLAG.sub(flag, command))
