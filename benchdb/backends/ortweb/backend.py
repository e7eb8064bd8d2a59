"""The browser runner: onnxruntime-web in headless Chromium, on WASM, WebGPU or WebNN.

``benchdb run --backend ort-web --device wasm|webgpu|webnn`` measures the same models, the same
cached ONNX exports (:mod:`benchdb.backends.export`) and the same deterministic inputs
(:mod:`benchdb.backends.inputs`) as the native backends; the first output is checked against
PyTorch fp32 like the onnxruntime backend's.

How a scenario runs: one browser per model (:mod:`benchdb.backends.ortweb.browser`), a fresh page
per scenario loaded from a 127.0.0.1-only server (:mod:`benchdb.backends.ortweb.server`) that
closes with the model; the page imports onnxruntime-web (:mod:`benchdb.backends.ortweb.assets`),
creates the session and answers calls from Python through playwright.

Timing: every sample is timed inside the page with ``performance.now()`` around ``k`` calls
(Chromium coarsens that clock to 5 us, so ``k`` is chosen from the first calls to make a sample
last at least :data:`RESOLUTIONS_PER_SAMPLE` clock steps; ``k`` = 1 for calls that long already).
The loop itself is benchdb's: :func:`benchdb.harness.timing.measure` consumes the page's samples
one by one (fetched through playwright in chunks of about :data:`CHUNK_S` seconds), with a timer
that returns the page's own measurement of each, so the warm-up and the stopping rule
(``StopCheck``) are exactly those of every other runner; a round trip to the page adds wall
time between chunks, never to a sample. The timing
method, the clock's resolution and ``k`` are recorded with each result.

Identity: the device key is ``wasm`` / ``webgpu`` / ``webnn``; the options hold the execution
provider, the browser and the WASM thread count. WASM runs on the CPU, so its results carry the
CPU's hardware fingerprint (the same hardware id as native CPU results: browser and native
compare on one machine). A WebGPU adapter has its own fingerprint (vendor, architecture,
fallback flag, the browser as its driver); a software adapter (SwiftShader) is recorded as such
(``emulated``) and its results carry an ``emulated`` warning. WebNN where the browser has none is
``unsupported`` with the browser's own reason. The browser's version, user agent, SIMD, threads
and cross-origin isolation go in every result's ``extra``.
"""

from __future__ import annotations

import base64
import math
import subprocess
import time
from collections.abc import Iterator
from datetime import datetime, timezone
from functools import cache, lru_cache
from typing import Any

from benchdb.backends.ortweb import BACKEND, assets, browser, missing  # noqa: F401 (BACKEND, missing: re-exported)
from benchdb.errors import BenchdbError
from benchdb.harness import hardware
from benchdb.harness.scenario import Conditions, Outcome, RunOptions, Scenario
from benchdb.harness.verdict import error_text, fail_all, judge, measurement_rows

NAME = "ort-web"
DEVICES = ("wasm", "webgpu", "webnn")
MODES = ("opt-all",)
#: A sample lasts at least this many steps of the page's clock (5 us steps: 0.5 ms, <= 1 % error).
RESOLUTIONS_PER_SAMPLE = 100
TIMING_METHOD = "page_performance_now"
#: Seconds of samples the page times per round trip to Python (at most MAX_CHUNK samples).
CHUNK_S = 0.05
MAX_CHUNK = 200
EMULATED = ("emulated: software WebGPU adapter ({arch}, isFallbackAdapter); measures correctness, "
            "not GPU speed")
@lru_cache(maxsize=1)
def browser_version() -> str | None:
    """``Chromium 156.0.8078.79``: from ``--version``, without starting a page."""
    path = browser.find()
    if path is None:
        return None
    try:
        out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30)
        return out.stdout.strip().split(" built on")[0] or None
    except (OSError, subprocess.SubprocessError):
        return None


def software() -> dict:
    import playwright  # noqa: F401 (the backend library: unavailable when it fails to import)

    return {"onnxruntime-web": assets.VERSION, "browser": browser_version(),
            "browser_path": browser.find(), "playwright": hardware.package_version("playwright"),
            "torch": hardware.package_version("torch"), "onnx": hardware.package_version("onnx"),
            "onnxscript": hardware.package_version("onnxscript")}


@cache
def environment(device: str) -> dict:
    """What the browser, started with ``device``'s flags, says about itself (one short launch)."""
    from benchdb.backends.ortweb.server import Server

    with Server(assets.folder()) as srv:
        b = browser.Browser(device)
        try:
            page = b.page(srv.url, 60)
            env = page.evaluate("() => window.benchdb.environment()")
            env["browser"] = f"Chromium {b.version}"
            return env
        finally:
            b.close()


def hardware_of(device: str) -> dict:
    cpu = hardware.cpu_fingerprint()
    if device == "wasm":
        return cpu                      # WASM runs on this CPU: its results share the CPU's hardware id
    env = environment(device)
    common = {"cpu_model": cpu["cpu_model"], "cores_logical": cpu["cores_logical"],
              "cores_physical": cpu["cores_physical"], "arch": cpu["arch"], "os": cpu["os"],
              "browser": env["browser"], "driver": env["browser"]}
    if device == "webgpu":
        gpu = env.get("webgpu") or {}
        if "error" in gpu:
            return {"kind": "gpu", "vendor": None, "device_name": "WebGPU (no adapter)", "memory_bytes": None,
                    "adapter_error": gpu["error"], **common}
        fallback = bool(gpu.get("isFallbackAdapter"))
        arch = gpu.get("architecture") or gpu.get("description") or gpu.get("device") or "adapter"
        return {"kind": "gpu", "vendor": gpu.get("vendor") or None,
                "device_name": f"WebGPU {arch}" + (" (software fallback adapter)" if fallback else ""),
                "memory_bytes": None, "compute_capability": None, "adapter": gpu,
                "is_fallback_adapter": fallback, "emulated": fallback, **common}
    nn = env.get("webnn") or {}
    return {"kind": "webnn", "vendor": None, "device_name": "WebNN (cpu)", "memory_bytes": None,
            "webnn_error": nn.get("error"), **common}


def model_info(spec: str) -> dict:
    from benchdb.backends.shared import models

    return models.resolve(spec).info()


def plan(opts: RunOptions) -> list[tuple[str, list[Scenario]]]:
    from dataclasses import replace

    from benchdb.backends.ortweb.options import OrtwebOptions
    from benchdb.backends.shared import inputs

    device = (opts.device or "").lower()
    if device not in DEVICES:
        raise BenchdbError(f"--device {opts.device} is not a device of ort-web; use one of {', '.join(DEVICES)}")
    modes = opts.modes if opts.modes != ("eager",) else MODES
    for mode in modes:
        if mode not in MODES:
            raise BenchdbError(f"mode {mode!r} is not valid for ort-web; use {', '.join(MODES)}")
    for p in opts.precisions:
        if p != "fp32":
            raise BenchdbError(f"precision {p!r} is not valid for ort-web; use fp32")
    from benchdb.backends.ortweb import fetch

    fetch()                                   # the pinned npm files, on first use
    return inputs.expand_scenarios(replace(opts, modes=modes), NAME, device,
                                   lambda mode, precision: OrtwebOptions(threads=opts.thread_count, ep=device,
                                                                         browser="chromium"))


class _PageSamples:
    """measure()'s call and timer over samples timed in the page.

    ``call()`` takes the next sample, asking the page for a chunk of ``n`` samples (of ``k``
    calls each) when none is left; ``stop()`` returns that sample's in-page time. measure() so
    sees, one by one, exactly the samples the page timed, and its warm-up and stopping rule
    decide as for any other runner; samples the page timed after the rule stopped are dropped
    (counted in ``dropped``). ``start()`` is the host clock (offsets, elapsed time: wall time).
    """

    method = TIMING_METHOD

    def __init__(self, page, k: int, n: int):
        self.page, self.k, self.n = page, k, n
        self.queue: list[float] = []
        self.current = 0.0
        self.round_trips = 0

    def __call__(self) -> None:
        if not self.queue:
            self.queue = list(self.page.evaluate("a => window.benchdb.samples(a.k, a.n)", {"k": self.k, "n": self.n}))
            self.queue.reverse()
            self.round_trips += 1
        self.current = self.queue.pop()

    @property
    def dropped(self) -> int:
        return len(self.queue)

    def start(self) -> float:
        return time.perf_counter()

    def stop(self) -> float:
        return self.current


def _feeds(fwd: dict) -> list[dict]:
    out = []
    for name, t in fwd.items():
        arr = t.detach().contiguous().numpy()
        dtype = {"float32": "float32", "int64": "int64", "int32": "int32", "bool": "bool",
                 "float64": "float64", "uint8": "uint8"}.get(str(arr.dtype))
        if dtype is None:
            raise BenchdbError(f"input {name} has dtype {arr.dtype}, which benchdb's page cannot pass")
        if dtype == "bool":
            arr = arr.astype("uint8")
        out.append({"name": name, "dtype": dtype, "dims": list(arr.shape),
                    "b64": base64.b64encode(arr.tobytes()).decode()})
    return out


def _external_files(path) -> list[str]:
    """The external-data files an ONNX graph names (the dynamo exporter writes ``model.onnx.data``)."""
    import onnx

    graph = onnx.load(str(path), load_external_data=False).graph
    names = {e.value for t in graph.initializer if t.data_location == onnx.TensorProto.EXTERNAL
             for e in t.external_data if e.key == "location"}
    return sorted(names)


def _status_of(exc: BaseException, timeout_s: float | None = None) -> tuple[str, str]:
    """A scenario's status from what ended it; ``timeout_s``: the deadline killed the browser."""
    if timeout_s is not None:
        return "timeout", f"scenario exceeded --timeout {timeout_s:g} s in the browser (the browser was ended)"
    text = f"{type(exc).__name__} {exc}".lower()
    if type(exc).__name__ == "TimeoutError" or "timeout" in text and "exceeded" in text:
        return "timeout", f"scenario exceeded --timeout in the page: {error_text(exc)}"
    if "crash" in text or "target closed" in text or "has been closed" in text:
        return "failed", f"page crashed: {error_text(exc)}"
    if "out of memory" in text or "memory access out of bounds" in text or "std::bad_alloc" in text:
        return "oom", error_text(exc)
    return "failed", error_text(exc)


def run_model(spec: str, scenarios: list[Scenario], opts: RunOptions, on_start=None) -> Iterator[Outcome]:
    from benchdb.backends.ortweb.server import Server
    from benchdb.backends.shared import models

    model, net, load_s, failure = models.load_for_run(spec, opts.task, opts.thread_count)
    if failure is not None:
        yield from fail_all(scenarios, model.info(), failure, on_start)
        return
    info = model.info(num_parameters=sum(p.numel() for p in net.parameters()))
    device = scenarios[0].device
    with Server(assets.folder()) as srv:           # 127.0.0.1 only; closed with this model's scenarios
        b = None
        try:
            b = browser.Browser(device)
        except Exception as exc:
            yield from fail_all(scenarios, info, exc, on_start)
            return
        try:
            yield from _scenarios(b, srv, model, net, scenarios, opts, info, load_s, on_start)
        finally:
            b.close()


def _scenarios(b, srv, model, net, scenarios, opts, info, load_s, on_start) -> Iterator[Outcome]:
    from benchdb.backends.shared import onnx_export as export

    env: dict | None = None
    failed: export.ExportFailed | None = None       # an export that failed once fails for every shape
    for i, sc in enumerate(scenarios):
        if on_start:
            on_start(i)
        started = datetime.now(timezone.utc).isoformat()
        page = None
        deadline = {"fired": False}
        try:
            b.revive()                                 # the browser died or was ended: a new one
            with b.deadline(opts.timeout_s) as deadline:
                page = b.page(srv.url, opts.timeout_s)
                if env is None:
                    env = page.evaluate("() => window.benchdb.environment()")
                    env["browser"] = f"Chromium {b.version}"
                unsupported = _unsupported(sc.device, env)
                if unsupported:
                    outcome = Outcome(sc, info, status="unsupported", error=unsupported, started_at=started,
                                      extra=_identity(env, sc))
                else:
                    if failed is not None:
                        raise failed
                    outcome = _scenario(page, srv, model, net, sc, opts, info, load_s, started, env)
        except export.ExportFailed as exc:
            failed = exc
            outcome = Outcome(sc, info, status="unsupported", error=export.describe_failure(exc), started_at=started)
        except Exception as exc:
            status, text = _status_of(exc, opts.timeout_s if deadline["fired"] else None)
            outcome = Outcome(sc, info, status=status, error=text, started_at=started,
                              extra=_identity(env, sc) if env else {})
        finally:
            if page is not None and b.alive():
                try:
                    page.close()
                except Exception:
                    pass
        yield outcome


def _unsupported(device: str, env: dict) -> str | None:
    if device == "webnn" and (env.get("webnn") or {}).get("error"):
        return f"WebNN unavailable in {env['browser']}: {env['webnn']['error']}"
    if device == "webgpu" and (env.get("webgpu") or {}).get("error"):
        return f"WebGPU unavailable in {env['browser']}: {env['webgpu']['error']}"
    if device == "wasm" and not env.get("simd"):
        return f"WebAssembly SIMD is disabled in {env['browser']} (onnxruntime-web needs it)"
    return None


def _identity(env: dict, sc: Scenario) -> dict:
    gpu = env.get("webgpu") or {}
    out = {"browser": env.get("browser"), "user_agent": env.get("userAgent"), "onnxruntime_web": assets.VERSION,
           "execution_provider": sc.device, "wasm_simd": env.get("simd"),
           "cross_origin_isolated": env.get("crossOriginIsolated"),
           "shared_array_buffer": env.get("sharedArrayBuffer"), "hardware_concurrency": env.get("hardwareConcurrency"),
           "timer_resolution_s": env.get("timerResolution"), "browser_flags": browser.flags(sc.device)}
    if sc.device == "webgpu" and "error" not in gpu:
        out["adapter"] = gpu
        out["emulated"] = bool(gpu.get("isFallbackAdapter"))
    return out


def _scenario(page, srv, model, net, sc: Scenario, opts: RunOptions, info: dict, load_s: float, started: str,
              env: dict) -> Outcome:
    import numpy as np

    from benchdb.backends.shared import inputs
    from benchdb.backends.shared import onnx_export as export
    from benchdb.harness.timing import measure

    inp = inputs.make(model, net, sc.batch_size, sc.settings.get("seq_len") or 1, new_tokens=opts.gen_tokens)
    fwd = inp.forward
    exported = export.onnx(model, net, fwd)
    reference = export.reference_output(export.flat_module(model, net, list(fwd)), fwd)
    threads = sc.options.get("threads") or opts.thread_count
    page.evaluate("a => window.benchdb.init(a)", {"entry": f"/ort/{assets.ENTRY[sc.device]}",
                                                   "ortBase": f"{srv.url}/ort/", "threads": threads})
    t0 = time.perf_counter()
    url = srv.serve_model(exported.path)
    loaded = page.evaluate("a => window.benchdb.load(a)", {
        "modelUrl": url, "ep": sc.device, "inputs": _feeds(fwd),
        "externalData": [{"path": name, "data": url.rsplit("/", 1)[0] + "/" + name}
                         for name in _external_files(exported.path)]})
    session_s = time.perf_counter() - t0
    first = page.evaluate("() => window.benchdb.firstCall()")
    out = np.frombuffer(base64.b64decode(first["b64"]), dtype=np.float32).reshape(first["dims"])
    status, error, base_rows, checked = export.check_outcome(reference, out, sc.precision)
    identity = _identity(env, sc)
    identity["wasm_threads"] = loaded.get("threads")
    extra: dict[str, Any] = {"route": exported.route, "dynamic_batch": exported.dynamic_batch,
                             "export_cached": exported.cached, **checked, "precision_used": "fp32", **identity}
    if identity.get("emulated"):
        extra["warnings"] = [EMULATED.format(arch=(env.get("webgpu") or {}).get("architecture") or "software")]
    if model.kind.generative:
        extra["decode"] = ("decode metrics unsupported: the exported graph is the prefill forward "
                           "(no KV-cache graph); see the pytorch backend for TTFT/TPOT")
    base_rows += [("load_s", "s", 0, 0.0, load_s), ("session_create_s", "s", 0, 0.0, session_s)]
    if exported.export_s is not None:
        base_rows.append(("export_s", "s", 0, 0.0, exported.export_s))
    if opts.verify_only:
        return Outcome(sc, info, status=status, error=error, rows=base_rows, timing_method="none",
                       started_at=started, extra={**extra, "verify_only": True}, primary_metric="max_rel_err")
    # Calls per sample: enough that a sample spans RESOLUTIONS_PER_SAMPLE steps of the page's clock;
    # samples per round trip: a chunk of about CHUNK_S seconds (a round trip costs milliseconds).
    resolution = float(env.get("timerResolution") or 5e-6)
    single = min(page.evaluate("k => window.benchdb.batch(k)", 1) for _ in range(3))
    k = max(1, math.ceil(RESOLUTIONS_PER_SAMPLE * resolution / max(single, resolution)))
    n = max(1, min(MAX_CHUNK, int(CHUNK_S / max(single * k, resolution))))
    calls = _PageSamples(page, k, n)
    cond = Conditions.now(opts.thread_count)
    m = measure(calls, opts.rule, timer=calls)
    m.first_call_s = float(first["seconds"])       # the session's real first call (measure's was a warm-up)
    method = TIMING_METHOD if k == 1 else f"{TIMING_METHOD}_batched"
    extra.update({"ci_rel": m.ci_rel, "calls_per_sample": k, "samples_per_round_trip": n,
                  "round_trips": calls.round_trips, "dropped_samples": calls.dropped,
                  "timer_resolution_s": resolution,
                  "timing": f"performance.now() in the page around {k} awaited session.run call(s) per sample, "
                            f"{n} samples per round trip; warm-up and stopping rule: benchdb.harness.timing.measure "
                            "over those samples in order"})
    rows = measurement_rows(m) + base_rows
    return Outcome(sc, info, status=status, error=error, rows=rows,
                   validity_reasons=judge(m, opts.rule, cond, opts.max_background_cpu),
                   timing_method=method, stop_reason=m.stop_reason, conditions=cond,
                   started_at=started, extra=extra)


__all__ = ["BACKEND", "DEVICES", "software", "hardware_of", "plan", "run_model", "model_info", "missing"]
