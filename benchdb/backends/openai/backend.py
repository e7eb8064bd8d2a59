"""The openai runner: an OpenAI-compatible endpoint measured under load, one load point a scenario.

A model's sweep runs against one server: benchdb starts it from ``--server`` (and stops its
process group after the sweep) or measures an existing ``--url``. Each scenario is one load point
-- a concurrency (closed loop) or a request rate (open loop) at an input and output token count
-- measured by :mod:`benchdb.backends.openai.loadgen` until the stopping rule holds. A server that never
becomes healthy fails every scenario of the model with its log tail; one that dies mid-sweep keeps
the finished points and fails the rest; the suite goes on either way.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from benchdb.backends.core_options import backend_option
from benchdb.backends.openai.options import OpenaiOptions
from benchdb.errors import BenchdbError
from benchdb.harness import hardware
from benchdb.harness.scenario import Conditions, Outcome, Row, RunOptions, Scenario
from benchdb.harness.verdict import error_text, fail_all, status_of
from benchdb.schema.identity import normalize_device
from benchdb.text import redact_secrets

NAME = "openai"
ENDPOINTS = ("completions", "chat")
_RATE = re.compile(r"^(poisson|constant|gamma):(\d+(?:\.\d+)?)(?::(\d+(?:\.\d+)?))?$")
#: Words generated prompts are made of (a prompt of N words; the server's usage gives its tokens).
_WORDS = ("the", "model", "serves", "tokens", "under", "load", "and", "every", "request", "streams",
          "a", "reply", "while", "others", "wait", "in", "line", "for", "their", "turn")


def software() -> dict:
    return {"httpx": hardware.package_version("httpx"), "benchdb-loadgen": "asyncio+httpx"}


#: The systems hardware files describe, by the device their scenarios name (set when planning:
#: a scenario's device is all the writer of its file is given).
_SYSTEMS: dict[str, dict] = {}
#: Names ending so are hardware files when given to --server-hardware.
HARDWARE_FILE_SUFFIXES = (".yaml", ".yml", ".json")


def hardware_of(device: str) -> dict:
    family, _, name = device.partition(":")
    if family == "remote":      # --url: what the user declared; this machine is only the client
        return dict(_SYSTEMS[device]) if device in _SYSTEMS else hardware.declared(name)
    return hardware.device_fingerprint(device)


def system_device(system: dict) -> str:
    """The device of a server on a described system: ``remote:`` and its name, else its accelerators
    (``remote:8x nvidia h200-sxm-141gb``), so the scenario label says where it ran."""
    name = system.get("system_name")
    if not name:
        per_node, nodes = system.get("accelerators_per_node"), int(system.get("nodes") or 1)
        count = "" if per_node in (None, 0, 1) and nodes == 1 else \
            f"{nodes}x{per_node}x " if nodes > 1 else f"{per_node}x "
        name = count + str(system.get("device_name") or "unknown")
    return "remote:" + " ".join(str(name).lower().split())


def server_system(opts: RunOptions, flag: str | None = None) -> tuple[dict, dict] | None:
    """(system, usage options) of a --url server described by a hardware file (--hardware-file, or a
    file given to --server-hardware); None for a bare --server-hardware name or none. A file that
    cannot be read is refused in one line naming it and the field, and ``flag``, the option the user
    gave it with (default: the one of these two that holds it)."""
    from benchdb.schema import system

    path, declared = backend_option(opts, "hardware_file"), backend_option(opts, "server_hardware")
    if path and declared:
        raise BenchdbError("give --hardware-file FILE or --server-hardware NAME, not both")
    if not path and declared and declared.strip().lower().endswith(HARDWARE_FILE_SUFFIXES):
        if not Path(declared).is_file():
            raise BenchdbError(f"--server-hardware {declared}: no such hardware file; give the path of a YAML or "
                               "JSON hardware file, or a name without .yaml/.yml/.json")
        path = declared
    if not path:
        return None
    flag = flag or ("--hardware-file" if backend_option(opts, "hardware_file") else "--server-hardware")
    try:
        return system.load_with_usage(path)
    except system.SystemError as exc:
        raise BenchdbError(f"{flag} {exc}") from None


def model_info(spec: str) -> dict:
    info: dict[str, Any] = {"model_id": spec, "revision": None, "model_type": "llm", "architecture": "openai-endpoint",
                            "family": None, "task": "text-generation", "num_parameters": None, "flops_per_item": None}
    config = Path(spec) / "config.json"
    if config.is_file():        # a local folder: what it holds
        try:
            cfg = json.loads(config.read_text(encoding="utf-8"))
            info["model_type"] = cfg.get("model_type") or "llm"
            info["architecture"] = (cfg.get("architectures") or ["openai-endpoint"])[0]
        except (OSError, ValueError):
            pass
    return info


def parse_rate(spec: str) -> tuple[str, float, float]:
    """``poisson:2`` -> (poisson, 2.0, 1.0); ``gamma:4:0.5`` -> (gamma, 4.0, 0.5) (shape < 1: bursty)."""
    m = _RATE.match(spec.strip().lower())
    if not m or float(m.group(2)) <= 0 or (m.group(3) is not None and float(m.group(3)) <= 0):
        raise BenchdbError(f"--request-rate {spec!r} is not poisson:R, constant:R or gamma:R:SHAPE with R > 0 "
                           "requests per second, e.g. poisson:2")
    kind, rate = m.group(1), float(m.group(2))
    shape = float(m.group(3)) if m.group(3) else 1.0
    if m.group(3) and kind != "gamma":
        raise BenchdbError(f"--request-rate {spec!r}: only gamma takes a shape (gamma:R:SHAPE)")
    return kind, rate, shape


def _loads(opts: RunOptions) -> list[tuple[str, str, int]]:
    """(label, spec, batch size) per load point: request rates, else concurrencies."""
    rates = backend_option(opts, "request_rate")
    if rates:
        for r in rates:
            parse_rate(r)
        return [(f"rate={r}", r, 1) for r in rates]
    return [(f"concurrency={c}", str(c), c) for c in backend_option(opts, "concurrency")]


def _check(opts: RunOptions) -> tuple[str, dict]:
    """The scenarios' device and the options that name the server's hardware and say how the server
    uses it; refuses contradictory options (before any request is sent)."""
    server, url = backend_option(opts, "server"), backend_option(opts, "url")
    declared = backend_option(opts, "server_hardware")
    described = backend_option(opts, "hardware_file")
    if bool(server) == bool(url):
        raise BenchdbError("backend openai needs --server COMMAND (benchdb starts it) or --url URL (one running "
                           "already), not both")
    if url and not (declared or described):
        raise BenchdbError("--url measures a server on other hardware: describe it with --hardware-file FILE "
                           "or name it with --server-hardware NAME")
    if server and (declared or described):
        raise BenchdbError(f"{'--hardware-file' if described else '--server-hardware'} describes a --url "
                           "server's hardware; a --server runs here, on this machine's")
    found = server_system(opts) if url else None
    # a hardware file is keyed by the system it describes (its hardware id, device and usage), not its path
    usage = dict(found[1]) if found else {"server_hardware": declared}
    if backend_option(opts, "parallelism"):
        usage["parallelism"] = parse_parallelism(backend_option(opts, "parallelism"))
    if server:
        from benchdb.backends.openai.launcher import render

        render(server, "model", "127.0.0.1", 1)     # refuses a template that cannot be filled in
    bad = [m for m in opts.modes if m not in (*ENDPOINTS, "eager")]
    if bad:
        raise BenchdbError(f"backend openai has no mode {bad[0]!r}; use --mode completions or chat")
    from benchdb.backends.openai.workers import resolve

    resolve(backend_option(opts, "client_workers"))          # refuses a bad --client-workers before any request
    if backend_option(opts, "slo"):
        from benchdb.schema.serving_metrics import parse_slo

        parse_slo(backend_option(opts, "slo"))
    if found:
        device = system_device(found[0])
        _SYSTEMS[device] = found[0]
        return device, usage
    return (f"remote:{declared.strip().lower()}" if url else normalize_device(opts.device)), usage


def parse_parallelism(text: str) -> dict[str, Any]:
    """``tp=8,ep=8`` or ``disaggregated=true,prefill.tp=4`` -> a parallelism record, checked
    (benchdb.schema.system.parallelism)."""
    from benchdb.schema import system

    doc: dict[str, Any] = {}
    for part in (p.strip() for p in text.split(",")):
        key, eq, value = part.partition("=")
        phase, dot, name = key.strip().lower().rpartition(".")
        if not eq or not name or (dot and not phase):
            raise BenchdbError(f"--parallelism {text!r}: write KEY=VALUE pairs, e.g. tp=8,ep=8 or "
                               f"prefill.tp=4 (found {part!r})")
        word = value.strip().lower()
        parsed: Any = True if word == "true" else False if word == "false" else \
            int(word) if word.isdigit() else word
        target = doc.setdefault(phase, {}) if dot else doc
        if name in target:
            raise BenchdbError(f"--parallelism {text!r}: {key.strip()} is given twice; give each key once")
        target[name] = parsed
    try:
        return system.parallelism(doc, f"--parallelism {text}")
    except system.SystemError as exc:
        raise BenchdbError(str(exc)) from None


def _prompts_hash(path: str | None) -> str | None:
    """The prompts file's content hash, once its prompts are read (a bad file is refused at
    planning, in one line, before any server starts)."""
    if not path:
        return None
    _read_prompts(path)
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()[:16]


def _read_prompts(path: str) -> list[str]:
    out = []
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise BenchdbError(f"--prompts {path}: {getattr(exc, 'strerror', None) or exc}") from None
    for n, line in enumerate(lines, 1):
        if line.strip():
            try:
                out.append(str(json.loads(line)["prompt"]))
            except (ValueError, KeyError, TypeError):
                raise BenchdbError(f"--prompts {path} line {n}: not a JSON object with \"prompt\"") from None
    if not out:
        raise BenchdbError(f"--prompts {path} holds no prompt")
    return out


def plan(opts: RunOptions) -> list[tuple[str, list[Scenario]]]:
    from benchdb.backends.openai.launcher import engine_of

    device, usage = _check(opts)
    server = backend_option(opts, "server")
    prompts = _prompts_hash(backend_option(opts, "prompts"))
    options = OpenaiOptions(threads=opts.thread_count, server=redact_secrets(server) if server else None,
                            engine=engine_of(server) if server else None,
                            server_hardware=usage.get("server_hardware"), ignore_eos=backend_option(opts, "ignore_eos"),
                            prompts=prompts, accelerators=usage.get("accelerators"),
                            parallelism=usage.get("parallelism")).as_dict()
    modes = ["completions" if m == "eager" else m for m in opts.modes]
    lens: tuple[int | None, ...] = (None,) if prompts else opts.seq_lens
    out = []
    for model in opts.models:
        out.append((model, [
            Scenario(model, NAME, device, mode, precision, batch,
                     f"in={'file' if sl is None else sl},out={opts.gen_tokens},{label}", dict(options),
                     {"seq_len": sl, "gen_tokens": opts.gen_tokens, "load": spec, "task": "text-generation"})
            for mode in dict.fromkeys(modes) for precision in _precisions(server, model, opts)
            for label, spec, batch in _loads(opts) for sl in lens]))
    return out


def _precisions(server: str | None, model: str, opts: RunOptions) -> tuple[str, ...]:
    """The server's own precision where benchdb starts it and can tell (precision.served)."""
    if not server:
        return opts.precisions
    from benchdb.backends.openai import precision

    return precision.served(server, model, opts.precisions, RunOptions.precisions)


def _prompts(opts: RunOptions, model: str, words: int | None, count: int, seed: int) -> list[str]:
    path = backend_option(opts, "prompts")
    if path:
        return _read_prompts(path)
    rng = random.Random(seed)
    texts = [" ".join(rng.choice(_WORDS) for _ in range(words or 1)) for _ in range(count)]
    return _to_tokens(texts, words or 1, model)


def _to_tokens(texts: list[str], n: int, model: str) -> list[str]:
    """Prompts of exactly ``n`` tokens where the model is a local folder with a tokenizer.json (cut
    to ``n`` token ids and decoded); elsewhere ``n`` words (the server's usage records the tokens)."""
    path = Path(model) / "tokenizer.json"
    if not path.is_file():
        return texts
    try:
        from tokenizers import Tokenizer

        tok = Tokenizer.from_file(str(path))
    except Exception:  # tokenizers missing or the file unreadable: words, as for a remote model
        return texts
    out = []
    for text in texts:
        ids = tok.encode(text * max(1, n), add_special_tokens=False).ids[:n]
        out.append(tok.decode(ids))
    return out


def run_model(spec: str, scenarios: list[Scenario], opts: RunOptions,
              on_start: Callable[[int], None] | None = None) -> Iterator[Outcome]:
    info = model_info(spec)
    template = backend_option(opts, "server")
    if not template:
        yield from _sweep(backend_option(opts, "url"), None, spec, scenarios, opts, info, on_start)
        return
    from benchdb.backends.openai.launcher import Server, ServerFailed

    try:
        server = Server(template, spec, startup_timeout_s=backend_option(opts, "server_timeout"))
    except BenchdbError as exc:
        yield from fail_all(scenarios, info, exc, on_start)
        return
    try:      # stopped (its whole process group) and its log closed however the sweep ends
        try:
            server.start()
        except ServerFailed as exc:
            yield from fail_all(scenarios, info, exc, on_start)
            return
        yield from _sweep(server.url, server, spec, scenarios, opts, info, on_start)
    finally:
        server.stop()
        server.cleanup()


def _sweep(url: str, server, spec: str, scenarios: list[Scenario], opts: RunOptions, info: dict,
           on_start: Callable[[int], None] | None) -> Iterator[Outcome]:
    from benchdb.backends.openai import workers
    from benchdb.schema import serving_metrics as metrics

    model = backend_option(opts, "served_model") or _served_model(url) or spec
    slo = metrics.parse_slo(backend_option(opts, "slo")) if backend_option(opts, "slo") else {}
    record = ({"command": redact_secrets(server.rendered.template), "engine": server.rendered.engine,
               "version": server.rendered.version} if server is not None else {"url": url})
    for i, sc in enumerate(scenarios):
        if on_start:
            on_start(i)
        started = datetime.now(timezone.utc).isoformat()
        if server is not None and not server.alive():
            yield Outcome(sc, info, status="failed", started_at=started, extra={"server": record},
                          error=f"the server exited (code {server.returncode()}) before this load point; its log "
                                f"ends: {server.tail(5) or '(empty)'}")
            continue
        try:
            load = _spec(url, model, sc, opts, i)
            cond = Conditions.now(opts.thread_count)
            metered_from = time.time()
            meter = _energy_meter(sc.device) if server is not None else None
            result = workers.run(load, workers.resolve(backend_option(opts, "client_workers"), load))
            joules = _joules(meter)
            metered_to = time.time()
        except Exception as exc:  # a load point's failure is its status, the sweep goes on
            yield Outcome(sc, info, status=status_of(exc), error=error_text(exc), started_at=started)
            continue
        summary = metrics.summary(result.records, result.window_s, slo)
        rows: list[Row] = [*metrics.rows(result.records, result.window_start),
                           *metrics.point_rows(summary, result.client_cpu_pct), *_energy_rows(joules, result)]
        extra: dict[str, Any] = {"server": {**record, **({"log_tail": server.tail()} if server is not None else {})},
                                 "errors": result.errors, "requests": summary.get("requests"),
                                 "client_cpu_pct": result.client_cpu_pct,
                                 "client_loop_cpu_pct": result.loop_cpu_pct, "slo": backend_option(opts, "slo")}
        if result.workers:    # how the client was split: not identity (the server's timings are the same)
            extra["client_workers"] = result.workers
        if joules is not None:
            # the energy counter's window (epoch seconds), so other meters can be set beside it
            extra["energy_window_s"] = [metered_from, metered_to]
        died = server is not None and not server.alive()
        status, error = _status(summary, died, server)
        yield Outcome(sc, info, status=status, error=error, rows=rows, primary_metric="ttft_s",
                      validity_reasons=validity(summary, opts, result), timing_method="host_clock",
                      stop_reason=result.stop_reason, conditions=cond, started_at=started, extra=extra)


def _energy_meter(device: str):
    """A counter of the server's device energy: NVML for CUDA, RAPL for the CPU; None when not
    measurable here (never estimated)."""
    from benchdb.harness import energy, monitors

    family, _, index = device.partition(":")
    try:
        meter: monitors.NvmlSource | energy.RaplSource | None = None
        if family == "cuda" and monitors.nvml_status()[0]:
            meter = monitors.NvmlSource(int(index or 0))
        elif family == "cpu":
            meter = energy.cpu_source([])
        if meter is not None:
            meter.sample()      # the count starts here: NVML's energy_j counts from the first sample
        return meter
    except Exception:  # a meter that cannot start measures nothing; the load point goes on
        return None


def _joules(meter) -> float | None:
    if meter is None:
        return None
    try:
        return next((v for metric, _, v in meter.sample() if metric == "energy_j"), None)
    except Exception:  # a counter that failed mid-way: no energy, rather than a wrong one
        return None


def _energy_rows(joules: float | None, result) -> list[Row]:
    """Energy over the load point and per output token (every request's tokens, warm-up included,
    as the energy was)."""
    tokens = sum(r.tokens_out for r in result.records if r.ok)
    if joules is None or joules <= 0 or tokens <= 0:
        return []
    return [("energy_j", "J", 0, 0.0, joules), ("energy_per_output_token_j", "J", 0, 0.0, joules / tokens)]


def _status(summary: dict, died: bool, server) -> tuple[str, str | None]:
    if summary.get("ok", 0) == 0:
        if died:
            return "failed", f"the server exited mid-sweep; its log ends: {server.tail(5)}"
        errors = summary.get("errors_by_message") or {}
        if not errors:
            return "failed", "every request failed"
        # The server's own answer says what to change (a refused field, an unknown model, ...).
        message, n = max(errors.items(), key=lambda kv: kv[1])
        total = summary.get("requests", n)
        share = "" if n == total else f" ({n} of them)"
        return "failed", f"all {total} requests failed: {message}{share}"
    return "ok", None


#: A load generator whose event loop is busy this much of the window measures its own queueing. TTFT
#: shows it long before ITL does: the streams' chunks arrive in bursts, and a first token waits behind
#: a burst. On an H200 machine's 16-core host against stubs of known timeline (20 ms to the first
#: token, then 10 ms; tests/fixtures/gpu/h200_client), loops busy 20-36 % read TTFT 2.7-4.7 % high
#: (the same 0.6 ms as at light load), 56-63 % read it 11-17 % high and 92 % 88 % high, while ITL
#: stayed within 0.3 % up to 92 %: half the window is where the first token starts to wait.
CLIENT_BOUND_PCT = 50.0
#: A window shorter than this is mostly per-request set-up: too short to call the client saturated.
CLIENT_BOUND_MIN_WINDOW_S = 1.0


def validity(summary: dict, opts: RunOptions, result) -> list[str]:
    """Why a load point is invalid: too few completed requests, or a client that was the bottleneck."""
    reasons = []
    ok = summary["ok"]
    if ok < opts.rule.min_iters:
        reasons.append(f"too_few_samples: {ok} completed requests < min_iters {opts.rule.min_iters}")
    busy = result.loop_cpu_pct
    if busy is not None and busy >= CLIENT_BOUND_PCT and result.window_s >= CLIENT_BOUND_MIN_WINDOW_S:
        which = "busiest worker's event loop" if getattr(result, "workers", None) else "event loop"
        reasons.append(f"client_bound: the load generator's {which} was busy {busy:.0f} % of the window "
                       f"(limit {CLIENT_BOUND_PCT:.0f} %); its timings include its own queueing: lower the "
                       "load or run the client on more cores (--client-workers auto)")
    return reasons


def _served_model(url: str) -> str | None:
    """The one model a server lists at /v1/models (servers pinned to one model expect its exact id)."""
    import urllib.request

    try:
        with urllib.request.urlopen(url.rstrip("/") + "/v1/models", timeout=10) as resp:
            data = json.loads(resp.read()).get("data") or []
    except (OSError, ValueError, AttributeError):
        return None
    ids = [d.get("id") for d in data if isinstance(d, dict) and d.get("id")]
    return str(ids[0]) if len(ids) == 1 else None


def _spec(url: str, model: str, sc: Scenario, opts: RunOptions, index: int):
    from benchdb.backends.openai.loadgen import LoadSpec

    load = str(sc.settings["load"])
    rate = arrival = None
    shape = 1.0
    concurrency = None
    if load.isdigit():
        concurrency = int(load)
    else:
        arrival, rate, shape = parse_rate(load)
    gen = int(sc.settings["gen_tokens"])
    extra = {"ignore_eos": True, "min_tokens": gen} if backend_option(opts, "ignore_eos") else {}
    rule = replace(opts.rule, max_iters=max(backend_option(opts, "max_requests"), opts.rule.min_iters))
    return LoadSpec(base_url=url, endpoint=sc.mode, model=model,
                    prompts=_prompts(opts, sc.model_id, sc.settings.get("seq_len"), 64, seed=index),
                    max_tokens=gen, concurrency=concurrency, rate=rate, arrival=arrival or "poisson",
                    burstiness=shape, warmup_requests=opts.rule.warmup_iters, rule=rule,
                    request_timeout_s=backend_option(opts, "request_timeout"), seed=index, extra_body=extra)
