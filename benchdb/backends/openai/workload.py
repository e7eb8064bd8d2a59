"""What a serving load point sends, as data: a workload (``--workload``), one definition each, part of
the scenario's identity and printed in its reproduce command.

Kinds (``KIND:key=value,...`` on the command line, or the same keys in a YAML/JSON file):

- ``single``: independent one-turn requests (today's traffic). Keys: ``input``, ``output`` (lengths,
  below), ``never-cached=true`` (every prompt starts with a word of its own and of this run's, so no
  two prompts share even a first token, in one run or two: no prefix cache can serve any of it).
- ``shared-prefix``: ``prefix`` tokens shared by groups of ``group`` requests, on a ``share`` (0-1) of
  the requests; the rest carry no shared prefix. Keys as ``single`` besides.
- ``multi-turn``: conversations of ``turns`` turns; a user thinks ``think`` seconds between a reply
  and the next turn; each turn sends the whole conversation so far (its earlier messages and the
  server's replies, exactly as it streamed them) plus a new message of ``input`` tokens; ``prefix``
  (with ``group``) gives conversations a shared system prompt.
- ``trace``: a JSONL trace replayed on its own clock (load point ``trace:SPEED``): one request per
  line with ``timestamp`` (ms), ``input_length``, ``output_length`` and ``hash_ids`` (the Mooncake
  trace format: block ``h`` of ``block`` tokens is the same text wherever it appears, so requests
  that share hash ids share a prefix).

Lengths: ``N`` (fixed), ``uniform:LO:HI``, ``normal:MEAN:SD`` (rounded, at least 1) or
``file:PATH`` (one whole number a line, drawn with replacement). Every draw comes from ``seed``
and the request's (or conversation's) own number, so two runs send the same requests whatever the
number of client workers. Text is made of words; the server's usage counts its tokens.
"""

from __future__ import annotations

import hashlib
import math
import random
import secrets
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchdb.errors import BenchdbError, first_line
from benchdb.schema import documents

KINDS = ("single", "shared-prefix", "multi-turn", "trace")
#: The keys each kind takes (besides ``seed``).
_KEYS = {
    "single": {"input", "output", "never-cached"},
    "shared-prefix": {"input", "output", "prefix", "group", "share"},
    "multi-turn": {"input", "output", "turns", "think", "prefix", "group"},
    "trace": {"file", "block"},
}
#: The longest prompt or reply a workload asks for, in words or tokens (a million: past any context).
MAX_LENGTH = 1 << 20
#: Words prompts are made of (one token each in most vocabularies).
WORDS = (
    "the model serves tokens under load and every request streams a reply while others wait in line for their turn"
).split()


@dataclass(frozen=True)
class Lengths:
    """A distribution of token counts."""

    kind: str = "fixed"
    a: float = 1
    b: float = 0
    values: tuple[int, ...] = ()
    text: str = "1"

    @classmethod
    def parse(cls, text: str, what: str) -> Lengths:
        parts = str(text).strip().split(":")
        try:
            if len(parts) == 1:
                n = int(parts[0])
                if 1 <= n <= MAX_LENGTH:
                    return cls("fixed", n, 0, (), str(n))
            elif parts[0] == "uniform" and len(parts) == 3:
                lo, hi = int(parts[1]), int(parts[2])
                if 1 <= lo <= hi <= MAX_LENGTH:
                    return cls("uniform", lo, hi, (), f"uniform:{lo}:{hi}")
            elif parts[0] == "normal" and len(parts) == 3:
                mean, sd = float(parts[1]), float(parts[2])
                if 1 <= mean <= MAX_LENGTH and 0 <= sd <= MAX_LENGTH:
                    return cls("normal", mean, sd, (), f"normal:{mean:g}:{sd:g}")
            elif parts[0] == "file" and len(parts) >= 2:
                return cls._from_file(":".join(parts[1:]), what)
        except ValueError:
            pass
        raise BenchdbError(
            f"--workload {what}={text!r}: give N, uniform:LO:HI, normal:MEAN:SD or file:PATH (1 to 2^20 tokens)"
        )

    @classmethod
    def _from_file(cls, path: str, what: str) -> Lengths:
        try:
            lines = documents.read_text(path, max_bytes=TRACE_BYTES).split()
            values = tuple(int(x) for x in lines)
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            raise BenchdbError(f"--workload {what}=file:{path}: {getattr(exc, 'strerror', None) or exc}") from None
        if not values or min(values) < 1 or max(values) > MAX_LENGTH:
            raise BenchdbError(f"--workload {what}=file:{path}: needs whole numbers >= 1, one a line")
        digest = hashlib.sha256(" ".join(map(str, values)).encode()).hexdigest()[:12]
        return cls("file", 0, 0, values, f"file:{digest}")

    def draw(self, rng: random.Random) -> int:
        if self.kind == "fixed":
            return int(self.a)
        if self.kind == "uniform":
            return rng.randint(int(self.a), int(self.b))
        if self.kind == "normal":
            return min(MAX_LENGTH, max(1, round(rng.gauss(self.a, self.b))))
        return rng.choice(self.values)


@dataclass(frozen=True)
class Turn:
    text: str
    max_tokens: int
    #: Seconds the user waits after the previous reply (0 for a conversation's first turn).
    think_s: float = 0.0
    #: Trace replay: seconds from the window's start at which it is sent (speed applied later).
    at_s: float | None = None


@dataclass(frozen=True)
class Workload:
    kind: str = "single"
    input: Lengths = field(default_factory=Lengths)
    output: Lengths = field(default_factory=Lengths)
    never_cached: bool = False
    prefix: int = 0
    group: int = 1
    share: float = 1.0
    turns: int = 1
    think_s: float = 0.0
    seed: int = 0
    trace: tuple[dict[str, Any], ...] = ()
    trace_hash: str = ""
    block: int = 512
    #: never-cached: this run's own word (random, not seeded), so that a second run against the same
    #: server finds nothing of the first in its cache; the one part of a workload a seed does not fix.
    nonce: str = field(default_factory=lambda: secrets.token_hex(4), compare=False)

    # -- the definition ------------------------------------------------------------------------
    def canonical(self) -> str:
        """The definition as one line, every key that is not its default, in a fixed order: the
        identity's form and the reproduce command's ``--workload``."""
        keys: list[tuple[str, Any]] = []
        if self.kind == "trace":
            keys = [("file", f"sha256:{self.trace_hash}"), ("block", self.block)]
        else:
            keys = [("input", self.input.text), ("output", self.output.text)]
            if self.kind == "multi-turn":
                keys += [("turns", self.turns), ("think", f"{self.think_s:g}s")]
            if self.prefix:
                keys += [("prefix", self.prefix), ("group", self.group)]
                if self.kind == "shared-prefix":
                    keys.append(("share", f"{self.share:g}"))
            if self.never_cached:
                keys.append(("never-cached", "true"))
        keys.append(("seed", self.seed))
        return f"{self.kind}:" + ",".join(f"{k}={v}" for k, v in keys)

    @property
    def sessions(self) -> bool:
        return self.kind == "multi-turn"

    # -- what it sends -------------------------------------------------------------------------
    def conversation(self, number: int) -> tuple[str, list[Turn]]:
        """Conversation (or, for the one-turn kinds, request) ``number``: its shared prefix (empty
        when it has none) and its turns."""
        rng = random.Random(f"{self.seed}:{number}")
        prefix = ""
        grouped = self.kind == "multi-turn" or rng.random() < self.share
        if self.prefix and grouped:
            prefix = _words(random.Random(f"{self.seed}:prefix:{number // self.group}"), self.prefix)
        turns = []
        for t in range(self.turns if self.kind == "multi-turn" else 1):
            text = _words(rng, self.input.draw(rng))
            if self.never_cached:  # a first word no other prompt has, in this run or any other
                text = " ".join([f"r{self.nonce}x{number}q", *text.split()[1:]])
            turns.append(Turn(text, self.output.draw(rng), self.think_s if t else 0.0))
        return prefix, turns

    def replayed(self, number: int) -> Turn:
        """Trace line ``number`` as one request: its blocks' text, cut to its input length."""
        line = self.trace[number]
        blocks = [_words(random.Random(f"{self.seed}:block:{h}"), self.block) for h in line["hash_ids"]]
        words = " ".join(blocks).split()[: line["input_length"]]
        if len(words) < line["input_length"]:
            words += _words(random.Random(f"{self.seed}:tail:{number}"), line["input_length"] - len(words)).split()
        return Turn(" ".join(words), line["output_length"], at_s=line["timestamp"] / 1000.0)


def _words(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


def parse(text: str | None, seq_len: int | None = None, gen_tokens: int | None = None) -> Workload | None:
    """``--workload`` (an inline definition or a YAML/JSON file of the same keys) -> a workload whose
    lengths default to the scenario's (``seq_len`` input, ``gen_tokens`` output); None: none given."""
    if not text:
        return None
    return _build(*_definition(str(text).strip()), seq_len, gen_tokens)


def kind_of(text: str | None) -> str | None:
    """The kind ``--workload`` names, its keys checked but nothing built (a trace is not read)."""
    return _definition(str(text).strip())[0] if text else None


def _definition(text: str) -> tuple[str, dict[str, Any]]:
    """(kind, keys) of an inline definition or a YAML/JSON file, both checked against the kinds."""
    if Path(text).suffix.lower() in (".yaml", ".yml", ".json") and ":" not in text and not Path(text).is_file():
        raise BenchdbError(f"--workload {text}: no such file")
    if Path(text).suffix.lower() in (".yaml", ".yml", ".json") and Path(text).is_file():
        doc = _read_file(text)
        kind = str(doc.pop("kind", "single"))
        keys = {str(k).replace("_", "-"): v for k, v in doc.items()}
    else:
        kind, _, rest = text.partition(":")
        keys = {}
        for item in filter(None, (x.strip() for x in rest.split(","))):
            k, eq, v = item.partition("=")
            if not eq:
                raise BenchdbError(f"--workload {text!r}: {item!r} is not key=value")
            keys[k.strip()] = v.strip()
    kind = kind.strip().lower()
    if kind not in KINDS:
        raise BenchdbError(f"--workload {text!r}: unknown kind {kind!r}; expected one of {', '.join(KINDS)}")
    unknown = sorted(set(keys) - _KEYS[kind] - {"seed"})
    if unknown:
        raise BenchdbError(
            f"--workload {kind}: unknown key {unknown[0]!r}; it takes {', '.join(sorted(_KEYS[kind] | {'seed'}))}"
        )
    return kind, keys


def _build(kind: str, keys: dict[str, Any], seq_len: int | None, gen_tokens: int | None) -> Workload:
    def num(key: str, default: float, cast=int, low: float = 0, high: float | None = None) -> Any:
        raw = keys.get(key, default)
        value: float | None
        try:
            value = float(str(raw).removesuffix("s")) if cast is float else float(raw)
            if cast is int and value != int(value):
                value = None  # 2.7 turns is not 2
            elif cast is int:
                value = int(value)
        except (TypeError, ValueError, OverflowError):
            value = None
        if value is None or not math.isfinite(value) or value < low or (high is not None and value > high):
            bound = f" and at most {high:g}" if high is not None else ""
            raise BenchdbError(f"--workload {kind}: {key}={raw} must be a number >= {low:g}{bound}")
        return value

    seed = num("seed", 0)
    if kind == "trace":
        if "file" not in keys:
            raise BenchdbError("--workload trace: give file=PATH (a JSONL trace: timestamp, input_length, ...)")
        lines, digest = read_trace(str(keys["file"]))
        return Workload("trace", seed=seed, trace=lines, trace_hash=digest, block=num("block", 512, int, 1))
    never_text = str(keys.get("never-cached", "false")).lower()
    if never_text not in ("true", "false", "1", "0", "yes", "no"):
        raise BenchdbError(f"--workload {kind}: never-cached={keys['never-cached']} must be true or false")
    never = never_text in ("true", "1", "yes")
    prefix = num("prefix", 0)
    if kind == "shared-prefix" and prefix < 1:
        raise BenchdbError("--workload shared-prefix: give prefix=TOKENS (>= 1), the length of the shared prefix")
    return Workload(
        kind,
        input=Lengths.parse(keys.get("input", seq_len or 1), "input"),
        output=Lengths.parse(keys.get("output", gen_tokens or 1), "output"),
        never_cached=never,
        prefix=prefix,
        group=num("group", 1, int, 1),
        share=num("share", 1.0, float, 0, 1),
        turns=num("turns", 1, int, 1) if kind == "multi-turn" else 1,
        think_s=num("think", 0.0, float) if kind == "multi-turn" else 0.0,
        seed=seed,
    )


def _read_file(path: str) -> dict[str, Any]:
    try:
        text = documents.read_text(path)
        parse = documents.parse_json if path.lower().endswith(".json") else documents.parse_yaml
        doc = parse(text, path)
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise BenchdbError(f"--workload {path}: {getattr(exc, 'strerror', None) or first_line(exc)}") from None
    if not isinstance(doc, dict):
        raise BenchdbError(f"--workload {path}: expected a mapping of keys (kind, input, output, ...)")
    return dict(doc)


#: The most a trace or a lengths file may hold (a public agentic trace of a day is tens of MiB).
TRACE_BYTES = 256 << 20
#: The keys a trace line needs, and their checks.
_TRACE_KEYS = ("timestamp", "input_length", "output_length")


def read_trace(path: str) -> tuple[tuple[dict[str, Any], ...], str]:
    """A Mooncake-format JSONL trace -> its lines (sorted by timestamp) and its content hash; one
    line naming the file, the line and the field for anything that cannot be replayed."""
    try:
        raw = documents.read_bytes(path, max_bytes=TRACE_BYTES)
        text = raw.decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise BenchdbError(f"--workload trace file {path}: {getattr(exc, 'strerror', None) or exc}") from None
    out: list[dict[str, Any]] = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            doc = documents.parse_json(line, path)
        except (ValueError, documents.DocumentError):
            raise BenchdbError(f"--workload trace file {path} line {n}: not JSON (or nested too deep)") from None
        if not isinstance(doc, dict):
            raise BenchdbError(f"--workload trace file {path} line {n}: not a JSON object")
        for key in _TRACE_KEYS:
            v = doc.get(key)
            count = key != "timestamp"
            ok = isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
            if not ok or not isinstance(v, (int, float)) or v < int(count) or (count and (v != int(v) or v > 1 << 24)):
                raise BenchdbError(f"--workload trace file {path} line {n}: {key} {v!r} is not a count or time")
        hashes = doc.get("hash_ids", [])
        if not isinstance(hashes, list) or not all(isinstance(h, (int, str)) for h in hashes):
            raise BenchdbError(f"--workload trace file {path} line {n}: hash_ids must be a list of ids")
        out.append(
            {
                "timestamp": float(doc["timestamp"]),
                "input_length": int(doc["input_length"]),
                "output_length": int(doc["output_length"]),
                "hash_ids": hashes,
            }
        )
    if not out:
        raise BenchdbError(f"--workload trace file {path} holds no request")
    out.sort(key=lambda d: d["timestamp"])
    first = out[0]["timestamp"]  # a trace of wall-clock times starts at its first line
    for d in out:
        d["timestamp"] -= first
    return tuple(out), hashlib.sha256(raw).hexdigest()[:16]
