"""A sentence-similarity check of an embedding model at the scenario's precision (``--sts FILE``):
real accuracy where a real model is at hand (e.g. all-MiniLM-L6-v2's weights).

FILE is JSON lines ``{"a": sentence, "b": sentence, "score": gold similarity}``. Every sentence is
tokenized with the model folder's tokenizer to the scenario's sequence length and run through the
same callable that was timed, in batches of the scenario's batch size (an exported graph has a
fixed shape); embeddings are mean-pooled over the attention mask (sentence-transformers' pooling
for this model), and the score is the Spearman correlation between the pairs' cosine similarities
and the gold scores (``sts_spearman``), as STS benchmarks report it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchdb.errors import BenchdbError


def load_pairs(path: str) -> list[tuple[str, str, float]]:
    """The pairs of an --sts file; a bad file is one clear error naming the line."""
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise BenchdbError(f"--sts {path}: {exc.strerror or exc}") from None
    pairs = []
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            doc = json.loads(line)
            pairs.append((str(doc["a"]), str(doc["b"]), float(doc["score"])))
        except (ValueError, KeyError, TypeError):
            raise BenchdbError(f'--sts {path}: line {n} is not {{"a": ..., "b": ..., "score": number}}') from None
    if len(pairs) < 3:
        raise BenchdbError(f"--sts {path}: {len(pairs)} pair(s); a rank correlation needs at least 3")
    return pairs


def digest(path: str) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()[:16]


def _ranks(values) -> Any:
    """Ranks with ties averaged (as Spearman's rho needs)."""
    import numpy as np

    values = np.asarray(values, dtype=np.float64)
    order = np.argsort(values, kind="mergesort")
    ranks = np.empty(len(values))
    ranks[order] = np.arange(1, len(values) + 1)
    for v in np.unique(values):
        tied = values == v
        if tied.sum() > 1:
            ranks[tied] = ranks[tied].mean()
    return ranks


def spearman(x, y) -> float:
    import numpy as np

    rx, ry = _ranks(x), _ranks(y)
    return float(np.corrcoef(rx, ry)[0, 1])


def score(
    model, names: list[str], batch: int, seq_len: int, pairs: list[tuple[str, str, float]], run: Callable[[dict], Any]
) -> float:
    """sts_spearman of ``run`` (forward inputs of ``batch`` x ``seq_len`` torch tensors keyed like
    the timed ones -> the first output, token embeddings, as an array)."""
    import numpy as np
    from transformers import AutoTokenizer

    if model.path is None:
        raise BenchdbError("--sts needs a model folder with a tokenizer (a tiny: model has none)")
    tokenizer = AutoTokenizer.from_pretrained(model.path)
    sentences = [s for a, b, _ in pairs for s in (a, b)]
    vectors = []
    for start in range(0, len(sentences), batch):
        chunk = sentences[start : start + batch]
        chunk += [""] * (batch - len(chunk))  # a fixed-shape graph takes whole batches
        enc = tokenizer(chunk, padding="max_length", truncation=True, max_length=seq_len, return_tensors="pt")
        fwd = {n: enc[n] for n in names if n in enc}
        hidden = np.asarray(run(fwd), dtype=np.float64)
        mask = enc["attention_mask"].numpy()[..., None].astype(np.float64)
        pooled = (hidden * mask).sum(axis=1) / np.maximum(mask.sum(axis=1), 1e-9)
        vectors.extend(pooled[: len(sentences) - start])
    emb = np.asarray(vectors[: len(sentences)])
    emb /= np.maximum(np.linalg.norm(emb, axis=1, keepdims=True), 1e-12)
    cosines = [float(emb[2 * i] @ emb[2 * i + 1]) for i in range(len(pairs))]
    return spearman(cosines, [g for _, _, g in pairs])
