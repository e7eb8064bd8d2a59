"""The prompts a load point sends: a --prompts file (JSON lines with "prompt"), else generated ones of
a given length in tokens (where the model's tokenizer is at hand) or words."""

from __future__ import annotations

import hashlib
import json
import random
from pathlib import Path

from benchdb.backends.core_options import backend_option
from benchdb.backends.openai.workload import TRACE_BYTES, WORDS
from benchdb.errors import BenchdbError
from benchdb.harness.scenario import RunOptions
from benchdb.schema import documents


def prompts_hash(path: str | None) -> str | None:
    """The prompts file's content hash, once its prompts are read (a bad file is refused at
    planning, in one line, before any server starts)."""
    if not path:
        return None
    read_prompts(path)
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()[:16]


#: The largest --prompts file read: as a trace's (its prompts are held in memory, every one sent).
PROMPTS_BYTES = TRACE_BYTES


def read_prompts(path: str) -> list[str]:
    out = []
    try:
        lines = documents.read_text(path, max_bytes=PROMPTS_BYTES).splitlines()
    except documents.DocumentError as exc:
        raise BenchdbError(f"--prompts {path} is {exc.problem}") from None
    except OSError as exc:
        raise BenchdbError(f"--prompts {path}: {exc.strerror or exc}") from None
    for n, line in enumerate(lines, 1):
        if line.strip():
            try:
                out.append(str(json.loads(line)["prompt"]))
            except (ValueError, KeyError, TypeError):
                raise BenchdbError(f'--prompts {path} line {n}: not a JSON object with "prompt"') from None
    if not out:
        raise BenchdbError(f"--prompts {path} holds no prompt")
    return out


def prompts_for(opts: RunOptions, model: str, words: int | None, count: int, seed: int) -> list[str]:
    path = backend_option(opts, "prompts")
    if path:
        return read_prompts(path)
    rng = random.Random(seed)
    texts = [" ".join(rng.choice(WORDS) for _ in range(words or 1)) for _ in range(count)]
    return _to_tokens(texts, words or 1, model)


def tokenizer_path(model: str) -> str | None:
    """The model's tokenizer.json where the model is a local folder that has one; else None."""
    path = Path(model) / "tokenizer.json"
    return str(path) if path.is_file() else None


def load_tokenizer(path: str | None):
    """The tokenizer at ``path``; None without one, without the tokenizers package, or for a file it
    cannot read (then text is words, as for a remote model, and the server's counts stand alone)."""
    if not path:
        return None
    try:
        from tokenizers import Tokenizer

        return Tokenizer.from_file(path)
    except Exception:  # tokenizers missing or the file unreadable
        return None


def _to_tokens(texts: list[str], n: int, model: str) -> list[str]:
    """Prompts of exactly ``n`` tokens where the model is a local folder with a tokenizer.json (cut
    to ``n`` token ids and decoded); elsewhere ``n`` words (the server's usage records the tokens)."""
    tok = load_tokenizer(tokenizer_path(model))
    if tok is None:
        return texts
    out = []
    for text in texts:
        ids = tok.encode(text * max(1, n), add_special_tokens=False).ids[:n]
        out.append(tok.decode(ids))
    return out
