"""The openai runner: an OpenAI-compatible endpoint measured under load, one load point a scenario.

A model's sweep runs against one server: benchdb starts it from ``--server`` (and stops its
process group after the sweep) or measures an existing ``--url``. Each scenario is one load point
-- a concurrency (closed loop) or a request rate (open loop) at an input and output token count
-- measured by :mod:`benchdb.backends.openai.loadgen` until the stopping rule holds. A server that never
becomes healthy fails every scenario of the model with its log tail; one that dies mid-sweep keeps
the finished points and fails the rest; the suite goes on either way.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from benchdb.backends.core_options import backend_option
from benchdb.backends.openai.options import OpenaiOptions
from benchdb.backends.openai.prompts import prompts_hash
from benchdb.backends.openai.server_hardware import parse_parallelism, server_system, system_device
from benchdb.backends.openai.sweep import parse_rate, sweep
from benchdb.backends.openai.workload import parse as parse_workload
from benchdb.errors import BenchdbError
from benchdb.harness import hardware
from benchdb.harness.scenario import Outcome, RunOptions, Scenario
from benchdb.harness.validity import fail_all
from benchdb.schema.identity import normalize_device
from benchdb.text import redact_secrets

NAME = "openai"
ENDPOINTS = ("completions", "chat")


def software() -> dict:
    return {"httpx": hardware.package_version("httpx"), "benchdb-loadgen": "asyncio+httpx"}


#: The systems hardware files describe, by the device their scenarios name (set when planning:
#: a scenario's device is all the writer of its file is given).
_SYSTEMS: dict[str, dict] = {}


def hardware_of(device: str) -> dict:
    family, _, name = device.partition(":")
    if family == "remote":  # --url: what the user declared; this machine is only the client
        return dict(_SYSTEMS[device]) if device in _SYSTEMS else hardware.declared(name)
    return hardware.device_fingerprint(device)


def model_info(spec: str) -> dict:
    info: dict[str, Any] = {
        "model_id": spec,
        "revision": None,
        "model_type": "llm",
        "architecture": "openai-endpoint",
        "family": None,
        "task": "text-generation",
        "num_parameters": None,
        "flops_per_item": None,
    }
    config = Path(spec) / "config.json"
    if config.is_file():  # a local folder: what it holds
        try:
            cfg = json.loads(config.read_text(encoding="utf-8"))
            info["model_type"] = cfg.get("model_type") or "llm"
            info["architecture"] = (cfg.get("architectures") or ["openai-endpoint"])[0]
        except (OSError, ValueError):
            pass
    return info


def _loads(opts: RunOptions) -> list[tuple[str, str, int]]:
    """(label, spec, batch size) per load point: request rates, else concurrencies."""
    rates = backend_option(opts, "request_rate")
    n = backend_option(opts, "curve")
    if n:
        from benchdb.backends.openai import curve

        curve.check(n, backend_option(opts, "curve_max"))
        if rates:
            raise BenchdbError("--curve chooses closed-loop load points: give it without --request-rate")
        # placeholders, one a point: the probe sets each one's concurrency when the server runs
        return [(f"curve={n},point={i}", f"curve:{i}/{n}", 1) for i in range(1, n + 1)]
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
        raise BenchdbError(
            "backend openai needs --server COMMAND (benchdb starts it) or --url URL (one running already), not both"
        )
    if url:
        from benchdb.backends.openai.urls import check_url

        check_url(url)
    if url and not (declared or described):
        raise BenchdbError(
            "--url measures a server on other hardware: describe it with --hardware-file FILE "
            "or name it with --server-hardware NAME"
        )
    if server and (declared or described):
        raise BenchdbError(
            f"{'--hardware-file' if described else '--server-hardware'} describes a --url "
            "server's hardware; a --server runs here, on this machine's"
        )
    found = server_system(opts) if url else None
    # a hardware file is keyed by the system it describes (its hardware id, device and usage), not its path
    usage = dict(found[1]) if found else {"server_hardware": declared}
    if backend_option(opts, "parallelism"):
        usage["parallelism"] = parse_parallelism(backend_option(opts, "parallelism"))
    if server:
        from benchdb.backends.openai.launcher import render

        render(server, "model", "127.0.0.1", 1)  # refuses a template that cannot be filled in
    bad = [m for m in opts.modes if m not in (*ENDPOINTS, "eager")]
    if bad:
        raise BenchdbError(f"backend openai has no mode {bad[0]!r}; use --mode completions or chat")
    from benchdb.backends.openai.workers import resolve

    resolve(backend_option(opts, "client_workers"))  # refuses a bad --client-workers before any request
    if backend_option(opts, "slo"):
        from benchdb.schema.serving_metrics import parse_slo

        parse_slo(backend_option(opts, "slo"))
    if found:
        device = system_device(found[0])
        _SYSTEMS[device] = found[0]
        return device, usage
    return (f"remote:{declared.strip().lower()}" if url else normalize_device(opts.device)), usage


def _check_workload(workloads: dict, prompts: str | None, opts: RunOptions) -> None:
    """A workload and a prompts file are two answers to one question; a trace replays only at a
    ``trace:SPEED`` load point, which replays only a trace."""
    w = next(iter(workloads.values()), None)
    if w is not None and prompts:
        raise BenchdbError("--workload and --prompts both say what to send: give one")
    trace_loads = [r for r in backend_option(opts, "request_rate") or () if r.strip().lower().startswith("trace")]
    if (w is not None and w.kind == "trace") != bool(trace_loads) or (
        trace_loads and len(trace_loads) != len(backend_option(opts, "request_rate"))
    ):
        raise BenchdbError(
            "a trace workload replays at its own clock: give --workload trace:file=PATH with "
            "--request-rate trace:SPEED (e.g. trace:1), and trace:SPEED only with a trace workload"
        )


def plan(opts: RunOptions) -> list[tuple[str, list[Scenario]]]:
    from benchdb.backends.openai.launcher import engine_of

    device, usage = _check(opts)
    server = backend_option(opts, "server")
    prompts = prompts_hash(backend_option(opts, "prompts"))
    options = OpenaiOptions(
        threads=opts.thread_count,
        server=redact_secrets(server) if server else None,
        engine=engine_of(server) if server else None,
        server_hardware=usage.get("server_hardware"),
        ignore_eos=backend_option(opts, "ignore_eos"),
        prompts=prompts,
        accelerators=usage.get("accelerators"),
        parallelism=usage.get("parallelism"),
    ).as_dict()
    modes = ["completions" if m == "eager" else m for m in opts.modes]
    lens: tuple[int | None, ...] = (None,) if prompts else opts.seq_lens
    workloads = {sl: parse_workload(backend_option(opts, "workload"), sl, opts.gen_tokens) for sl in lens}
    _check_workload(workloads, prompts, opts)
    if backend_option(opts, "curve") and (len(set(modes)) > 1 or len(opts.precisions) > 1 or len(lens) > 1):
        # one probe, one curve: the points of two modes or input lengths would share one probe's reading
        raise BenchdbError("--curve measures one curve a model: give one --mode, --precision and --seq-len")
    kinds = {sl: w.kind if w else None for sl, w in workloads.items()}
    defined = {sl: w.canonical() if w else None for sl, w in workloads.items()}
    out = []
    for model in opts.models:
        out.append(
            (
                model,
                [
                    Scenario(
                        model,
                        NAME,
                        device,
                        mode,
                        precision,
                        batch,
                        f"{_lengths(workloads[sl], sl, opts.gen_tokens)},{label}"
                        + (f",{kinds[sl]}" if kinds[sl] else ""),
                        # no workload: no key, so the ids of every run before workloads stay
                        {**options, **({"workload": defined[sl]} if defined[sl] else {})},
                        {"seq_len": sl, "gen_tokens": opts.gen_tokens, "load": spec, "task": "text-generation"},
                    )
                    for mode in dict.fromkeys(modes)
                    for precision in _precisions(server, model, opts)
                    for label, spec, batch in _loads(opts)
                    for sl in lens
                ],
            )
        )
    return out


def _lengths(workload, seq_len: int | None, gen_tokens: int) -> str:
    """The input shape's lengths: a workload's own (a distribution as it defines it; a trace's are its
    lines'), else the scenario's."""
    if workload is None:
        return f"in={'file' if seq_len is None else seq_len},out={gen_tokens}"
    if workload.kind == "trace":
        return "in=trace,out=trace"
    return f"in={workload.input.text},out={workload.output.text}"


def _precisions(server: str | None, model: str, opts: RunOptions) -> tuple[str, ...]:
    """The server's own precision where benchdb starts it and can tell (precision.served)."""
    if not server:
        return opts.precisions
    from benchdb.backends.openai import precision

    return precision.served(server, model, opts.precisions, RunOptions.precisions)


def run_model(
    spec: str, scenarios: list[Scenario], opts: RunOptions, on_start: Callable[[int], None] | None = None
) -> Iterator[Outcome]:
    info = model_info(spec)
    template = backend_option(opts, "server")
    if not template:
        yield from sweep(backend_option(opts, "url"), None, spec, scenarios, opts, info, on_start)
        return
    from benchdb.backends.openai.launcher import Server, ServerFailed

    try:
        server = Server(template, spec, startup_timeout_s=backend_option(opts, "server_timeout"))
    except BenchdbError as exc:
        yield from fail_all(scenarios, info, exc, on_start)
        return
    try:  # stopped (its whole process group) and its log closed however the sweep ends
        try:
            server.start()
        except ServerFailed as exc:
            yield from fail_all(scenarios, info, exc, on_start)
            return
        yield from sweep(server.url, server, spec, scenarios, opts, info, on_start)
    finally:
        server.stop()
        server.cleanup()
