"""What the exported-graph runners (ONNX Runtime, OpenVINO) share: plan, export, verify, measure.

A runner supplies an Engine: ``prepare(exported, scenario, opts) -> session`` and
``session.run(feeds) -> list of outputs`` plus a few facts (name, modes, precisions). Model
loading and inputs come from the same modules as the PyTorch runner, so every backend sees the
same models and identical inputs; each output is checked against the PyTorch fp32 reference.

A session may also carry ``options_used`` (options known once it exists, merged into the
scenario's options: identity), ``extra`` (recorded in the scenario's extra) and its own
``measure(feeds, rule, items) -> (Measurement, extra rows)`` (OpenVINO's throughput hint runs
a queue of asynchronous requests); otherwise ``session.run`` is timed by the shared loop.

Memory: the PyTorch reference is computed before the session exists and the process RSS is
taken then (``rss_before_bytes``); ``peak_rss_increment_bytes`` is what the session added at its
peak, beside the whole-process ``peak_rss_bytes`` (which includes PyTorch and the model kept
for verification).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Protocol

from benchdb.backends.shared import inputs, models, quantize
from benchdb.backends.shared import onnx_export as export
from benchdb.errors import BenchdbError
from benchdb.harness.monitors import Monitor, RssSource, rss_rows, settled_rss
from benchdb.harness.scenario import Conditions, Outcome, RunOptions, Scenario
from benchdb.harness.timing import measure
from benchdb.harness.validity import error_text, fail_all, judge, measurement_rows, status_of


class Session(Protocol):
    input_names: list[str]
    precision_used: str

    def run(self, feeds: dict[str, Any]) -> list: ...


@dataclass
class Engine:
    name: str  # backend name
    modes: tuple[str, ...]  # valid --mode values (first is the default)
    precisions: tuple[str, ...]
    artifact: Callable[[models.ResolvedModel, Any, dict], export.Exported]
    prepare: Callable[[export.Exported, Scenario, RunOptions], Session]
    software: Callable[[], dict]
    #: ``quantize(exported, scenario, method, calibration inputs) -> Exported``: the
    #: fp32 artifact made int8/int4 (benchdb.backends.shared.quantize); None: no quantized precision.
    quantize: Callable[..., export.Exported] | None = None
    decode_note: str = (
        "decode metrics unsupported: the exported graph is the prefill forward "
        "(no KV-cache graph); see the pytorch backend for TTFT/TPOT"
    )


def plan(
    engine: Engine, opts: RunOptions, device: str, options: Callable[[str, str], Any]
) -> list[tuple[str, list[Scenario]]]:
    for mode in opts.modes:
        if mode not in engine.modes:
            raise BenchdbError(f"mode {mode!r} is not valid for {engine.name}; use one of {', '.join(engine.modes)}")
    for p in opts.precisions:
        if p not in engine.precisions:
            raise BenchdbError(
                f"precision {p!r} is not valid for {engine.name}; use one of {', '.join(engine.precisions)}"
            )
    return quantize.per_method(
        opts,
        lambda o: inputs.expand_scenarios(
            o,
            engine.name,
            device,
            lambda mode, precision: _with_quantization(options(mode, precision), engine.name, precision, o),
        ),
    )


def _with_quantization(option_set: Any, backend: str, precision: str, opts: RunOptions) -> Any:
    """The option set with a quantized precision's method and calibration (its identity)."""
    return replace(option_set, **quantize.options(backend, precision, opts.quantization))


def feeds_for(session: Session, fwd: dict) -> dict:
    """Graph inputs by name (dynamo keeps the keyword names; positional exports keep the order)."""
    return inputs.feeds(session.input_names, fwd)


def run_model(
    engine: Engine, spec: str, scenarios: list[Scenario], opts: RunOptions, on_start=None
) -> Iterator[Outcome]:
    model, net, load_s, failure = models.load_for_run(spec, opts.task, opts.thread_count)
    if failure is not None:
        yield from fail_all(scenarios, model.info(), failure, on_start)
        return
    info = model.info(num_parameters=sum(p.numel() for p in net.parameters()))
    failed: export.ExportFailed | None = None  # an export that failed once fails for every shape
    for i, sc in enumerate(scenarios):
        if on_start:
            on_start(i)
        started = datetime.now(timezone.utc).isoformat()
        try:
            if failed is not None:
                raise failed
            yield _scenario(engine, model, net, sc, opts, info, load_s, started, opts.verify_only)
        except export.ExportFailed as exc:
            failed = exc
            yield Outcome(sc, info, status="unsupported", error=export.describe_failure(exc), started_at=started)
        except quantize.Unsupported as exc:
            yield Outcome(sc, info, status="unsupported", error=str(exc), started_at=started)
        except Exception as exc:
            yield Outcome(sc, info, status=status_of(exc), error=error_text(exc), started_at=started)


def _scenario(
    engine: Engine,
    model,
    net,
    sc: Scenario,
    opts: RunOptions,
    info: dict,
    load_s: float,
    started: str,
    verify_only: bool,
) -> Outcome:
    inp = inputs.make(model, net, sc.batch_size, sc.settings.get("seq_len") or 1, new_tokens=opts.gen_tokens)
    fwd = inp.forward
    exported = engine.artifact(model, net, fwd)
    export_s = exported.export_s
    quantize_s = None
    if sc.precision in quantize.QUANTIZED:
        method = quantize.method_for(engine.name, sc.precision, sc.options.get("quantization"))
        if engine.quantize is None:
            raise quantize.Unsupported(f"{engine.name} has no {sc.precision} route in benchdb")
        calib = (
            quantize.calibration_inputs(model, net, sc.batch_size, sc.settings.get("seq_len") or 1)
            if method == "static"
            else []
        )
        exported = engine.quantize(exported, sc, method, calib)
        quantize_s = exported.export_s
    # The PyTorch reference first (its activations are freed before the baseline is taken), so
    # verification never counts in the measured backend's memory.
    reference = export.reference_output(export.flat_module(model, net, list(fwd)), fwd)
    rss_before = settled_rss()
    session = engine.prepare(exported, sc, opts)
    if session.precision_used != sc.precision:
        # The key holds the precision the engine runs; the requested one stays in the options.
        sc = replace(sc, precision=session.precision_used)
    used = getattr(session, "options_used", None)
    if used:
        # Options only the compiled model knows (OpenVINO's number of requests): what ran.
        sc = replace(sc, options={**sc.options, **used})
    feeds = feeds_for(session, fwd)
    status, error, base_rows, checked = export.check_outcome(
        reference, session.run(feeds)[0], sc.precision, model.kind.task, model.kind.generative
    )
    extra: dict[str, Any] = {
        "route": exported.route,
        "dynamic_batch": exported.dynamic_batch,
        "export_cached": exported.cached,
        **checked,
        "precision_used": session.precision_used,
        **(getattr(session, "extra", None) or {}),
    }
    if model.kind.generative:
        extra["decode"] = engine.decode_note
    if opts.sts:
        names = session.input_names
        base_rows += sts_rows(model, list(fwd), sc, opts, lambda f: session.run(inputs.feeds(names, f))[0], extra)
    base_rows.append(("load_s", "s", 0, 0.0, load_s))
    if export_s is not None:
        base_rows.append(("export_s", "s", 0, 0.0, export_s))
    if quantize_s is not None:
        base_rows.append(("quantize_s", "s", 0, 0.0, quantize_s))
    if verify_only:
        return Outcome(
            sc,
            info,
            status=status,
            error=error,
            rows=base_rows,
            timing_method="none",
            started_at=started,
            extra={**extra, "verify_only": True},
            primary_metric="max_rel_err",
        )
    cond = Conditions.now(opts.thread_count)
    own_loop = getattr(session, "measure", None)
    more: list = []
    with Monitor([RssSource()]) as mon:
        if own_loop is not None:
            m, more = own_loop(feeds, opts.rule, sc.batch_size)
        else:
            m = measure(lambda: session.run(feeds), opts.rule)
    rows = measurement_rows(m) + more + base_rows + mon.rows + rss_rows(mon, rss_before)
    return Outcome(
        sc,
        info,
        status=status,
        error=error,
        rows=rows,
        validity_reasons=judge(m, opts.rule, cond, opts.max_background_cpu),
        timing_method="host_clock",
        stop_reason=m.stop_reason,
        conditions=cond,
        started_at=started,
        extra={**extra, "ci_rel": m.ci_rel},
    )


def sts_rows(model, names: list[str], sc: Scenario, opts: RunOptions, run, extra: dict) -> list:
    """The sts_spearman row of the --sts check (benchdb.backends.shared.similarity), run through
    the measured callable; a check that cannot run records why in extra, never fails the result."""
    from benchdb.backends.shared import similarity

    assert opts.sts is not None
    try:
        value = similarity.score(
            model, names, sc.batch_size, sc.settings.get("seq_len") or 128, similarity.load_pairs(opts.sts), run
        )
    except Exception as exc:
        extra["sts_error"] = error_text(exc)
        return []
    extra["sts"] = {"file": Path(opts.sts).name, "sha256": similarity.digest(opts.sts)}
    return [("sts_spearman", "ratio", 0, 0.0, value)]
