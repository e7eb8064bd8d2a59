"""A model's sweep against one server: each load point measured by the load generator, its energy
metered where the server runs here, its status and validity (a client-bound load point is invalid)."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from datetime import datetime, timezone
from typing import Any

from benchdb.backends.core_options import backend_option
from benchdb.backends.openai.prompts import prompts_for, tokenizer_path
from benchdb.errors import BenchdbError
from benchdb.harness.scenario import Conditions, Outcome, Row, RunOptions, Scenario
from benchdb.harness.validity import error_text, status_of
from benchdb.text import recorded_url, redact_secrets

_RATE = re.compile(r"^(poisson|constant|gamma|trace):(\d+(?:\.\d+)?)(?::(\d+(?:\.\d+)?))?$")


def parse_rate(spec: str) -> tuple[str, float, float]:
    """``poisson:2`` -> (poisson, 2.0, 1.0); ``gamma:4:0.5`` -> (gamma, 4.0, 0.5) (shape < 1: bursty)."""
    m = _RATE.match(spec.strip().lower())
    if not m or float(m.group(2)) <= 0 or (m.group(3) is not None and float(m.group(3)) <= 0):
        raise BenchdbError(
            f"--request-rate {spec!r} is not poisson:R, constant:R or gamma:R:SHAPE with R > 0 "
            "requests per second, e.g. poisson:2 (or trace:SPEED, a trace workload's replay speed)"
        )
    kind, rate = m.group(1), float(m.group(2))
    shape = float(m.group(3)) if m.group(3) else 1.0
    if m.group(3) and kind != "gamma":
        raise BenchdbError(f"--request-rate {spec!r}: only gamma takes a shape (gamma:R:SHAPE)")
    return kind, rate, shape


def sweep(
    url: str,
    server,
    spec: str,
    scenarios: list[Scenario],
    opts: RunOptions,
    info: dict,
    on_start: Callable[[int], None] | None,
) -> Iterator[Outcome]:
    from benchdb.backends.openai import workers
    from benchdb.backends.openai.urls import Redirected
    from benchdb.schema import serving_metrics as metrics

    refused = None
    try:
        model = backend_option(opts, "served_model") or _served_model(url) or spec
    except Redirected as exc:  # fails every load point: nothing is sent where the user did not point
        model, refused = spec, str(exc)
    slo = metrics.parse_slo(backend_option(opts, "slo")) if backend_option(opts, "slo") else {}
    record = (
        {
            "command": redact_secrets(server.rendered.template),
            "engine": server.rendered.engine,
            "version": server.rendered.version,
        }
        if server is not None
        else {"url": recorded_url(url)}
    )
    if not refused and scenarios and str(scenarios[0].settings.get("load", "")).startswith("curve:"):
        try:
            scenarios = _curve(url, model, scenarios, opts)
        except Exception as exc:  # the probe failed: so would every point; each says why
            refused = f"the --curve probe failed: {error_text(exc)}"
    for i, sc in enumerate(scenarios):
        if on_start:
            on_start(i)
        started = datetime.now(timezone.utc).isoformat()
        if refused:
            yield Outcome(sc, info, status="failed", started_at=started, extra={"server": record}, error=refused)
            continue
        if server is not None and not server.alive():
            yield Outcome(
                sc,
                info,
                status="failed",
                started_at=started,
                extra={"server": record},
                error=f"the server exited (code {server.returncode()}) before this load point; its log "
                f"ends: {server.tail(5) or '(empty)'}",
            )
            continue
        try:
            load = _spec(url, model, sc, opts, i)
            cond = Conditions.now(opts.thread_count)
            meter = _energy_meter(sc.device) if server is not None else None
            metered_from = time.time()  # the counter counts from its first sample, just taken
            result = workers.run(load, workers.resolve(backend_option(opts, "client_workers"), load))
            joules = _joules(meter)
            metered_to = time.time()
        except Exception as exc:  # a load point's failure is its status, the sweep goes on
            yield Outcome(sc, info, status=status_of(exc), error=error_text(exc), started_at=started)
            continue
        summary = metrics.summary(result.records, result.window_s, slo)
        server_record = {**record, **({"log_tail": server.tail()} if server is not None else {})}
        slos = (slo, backend_option(opts, "slo"))
        rows, extra = _point_rows(result, load, summary, slos, (joules, metered_to - metered_from), server_record)
        if joules is not None:
            # the energy counter's window (epoch seconds), so other meters can be set beside it
            extra["energy_window_s"] = [metered_from, metered_to]
        died = server is not None and not server.alive()
        status, error = _status(summary, died, server)
        yield Outcome(
            sc,
            info,
            status=status,
            error=error,
            rows=rows,
            primary_metric="ttft_s",
            validity_reasons=validity(summary, opts, result),
            timing_method="host_clock",
            stop_reason=result.stop_reason,
            conditions=cond,
            started_at=started,
            extra=extra,
        )


def _curve(url: str, model: str, scenarios: list[Scenario], opts: RunOptions) -> list[Scenario]:
    from benchdb.backends.openai import curve

    def spec_for(sc: Scenario, c: int):
        # the probe's own load point numbers (after the curve's): its prompts are none of the points'
        return _spec(url, model, replace(sc, settings={**sc.settings, "load": str(c)}), opts, len(scenarios) + c)

    return curve.scenarios(scenarios, opts, spec_for)


def _turns(load) -> int:
    """Turns per conversation of the load point's workload (1: one-turn requests)."""
    from benchdb.backends.openai.workload import parse

    w = parse(load.workload, load.seq_len, load.max_tokens)
    return w.turns if w is not None else 1


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
            meter.sample()  # the count starts here: NVML's energy_j counts from the first sample
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


def _energy_rows(joules: float | None, result, seconds: float) -> list[Row]:
    """Energy over the load point, per output token (every request's tokens, warm-up included, as
    the energy was), and the server device's mean power over it (``device_power_w``, what the system
    power model starts from; not ``power_w``, which results_latest reads as a run's power per item)."""
    tokens = sum(r.tokens_out for r in result.records if r.ok)
    if joules is None or joules <= 0 or tokens <= 0:
        return []
    rows: list[Row] = [("energy_j", "J", 0, 0.0, joules), ("energy_per_output_token_j", "J", 0, 0.0, joules / tokens)]
    if seconds > 0:
        rows.append(("device_power_w", "W", 0, 0.0, joules / seconds))
    return rows


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
    """Why a load point is invalid: too few completed requests, too many failed ones (the rule every
    import's points share), or a client that was the bottleneck."""
    from benchdb.schema.serving_metrics import failed_share

    reasons = []
    ok = summary["ok"]
    if ok < opts.rule.min_iters:
        reasons.append(f"too_few_samples: {ok} completed requests < min_iters {opts.rule.min_iters}")
    if (failed := failed_share(summary)) is not None:
        reasons.append(failed)
    busy = result.loop_cpu_pct
    if busy is not None and busy >= CLIENT_BOUND_PCT and result.window_s >= CLIENT_BOUND_MIN_WINDOW_S:
        which = "busiest worker's event loop" if getattr(result, "workers", None) else "event loop"
        reasons.append(
            f"client_bound: the load generator's {which} was busy {busy:.0f} % of the window "
            f"(limit {CLIENT_BOUND_PCT:.0f} %); its timings include its own queueing: lower the "
            "load or run the client on more cores (--client-workers auto)"
        )
    return reasons


def _served_model(url: str) -> str | None:
    """The one model a server lists at /v1/models (servers pinned to one model expect its exact id);
    raises :class:`benchdb.backends.openai.urls.Redirected` where it answers with a redirect."""
    from benchdb.backends.openai import urls

    try:
        data = json.loads(urls.get(url, "/v1/models", timeout=10)).get("data") or []
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
    workload = backend_option(opts, "workload")
    return LoadSpec(
        base_url=url,
        endpoint=sc.mode,
        model=model,
        prompts=[] if workload else prompts_for(opts, sc.model_id, sc.settings.get("seq_len"), 64, seed=index),
        workload=workload,
        seq_len=sc.settings.get("seq_len"),
        tokenizer=tokenizer_path(sc.model_id),
        point=index,
        max_tokens=gen,
        concurrency=concurrency,
        rate=rate,
        arrival=arrival or "poisson",
        burstiness=shape,
        warmup_requests=opts.rule.warmup_iters,
        rule=rule,
        request_timeout_s=backend_option(opts, "request_timeout"),
        seed=index,
        extra_body=extra,
    )


def _point_rows(
    result, load, summary: dict, slo: tuple[dict, Any], energy: tuple[Any, float], server: dict
) -> tuple[list[Row], dict]:
    """A load point's rows (each request's timings, the point's summary, sessions, steady state,
    energy) and what its outcome records besides (the server, errors, client CPU, token counts);
    ``slo``: the parsed SLO and the option as given; ``energy``: the joules metered and over how long."""
    from benchdb.schema import serving_metrics as metrics
    from benchdb.schema import serving_sessions as sessions
    from benchdb.schema import steady_state

    slo_limits, slo_option = slo
    joules, metered_s = energy
    turns = _turns(load)
    steady_rows, steady = steady_state.of_point(result.records, result.window_start)
    rows: list[Row] = [
        *metrics.rows(result.records, result.window_start),
        *metrics.point_rows(summary, result.client_cpu_pct),
        *sessions.rows(result.records, result.window_start, turns),
        *sessions.point_rows(result.records, result.window_s, turns, slo_limits),
        *steady_rows,
        *_energy_rows(joules, result, metered_s),
    ]
    extra: dict[str, Any] = {
        "server": server,
        "errors": result.errors,
        "requests": summary.get("requests"),
        "client_cpu_pct": result.client_cpu_pct,
        "client_loop_cpu_pct": result.loop_cpu_pct,
        "slo": slo_option,
        "steady_state": steady,
        "token_counts": sessions.token_counts(result.records, load.endpoint),
    }
    if result.workers:  # how the client was split: not identity (the server's timings are the same)
        extra["client_workers"] = result.workers
    return rows, extra
