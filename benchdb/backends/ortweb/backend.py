"""The browser runner: onnxruntime-web in headless Chromium, on WASM, WebGPU or WebNN.

``benchdb run --backend ort-web --device wasm|webgpu|webnn`` measures the same models, the same
cached ONNX exports (:mod:`benchdb.backends.shared.onnx_export`) and the same deterministic inputs
(:mod:`benchdb.backends.shared.inputs`) as the native backends; the first output is checked against
PyTorch fp32 like the onnxruntime backend's.

How a scenario runs: one browser per model (:mod:`benchdb.backends.ortweb.browser`), a fresh page
per scenario loaded from a 127.0.0.1-only server (:mod:`benchdb.backends.ortweb.server`) that
closes with the model; the page imports onnxruntime-web (:mod:`benchdb.backends.ortweb.assets`),
creates the session and answers calls from Python through playwright.

Timing: every sample is timed inside the page with ``performance.now()`` around ``k`` calls
(Chromium coarsens that clock to 5 us, so ``k`` is chosen from the first calls to make a sample
last at least :data:`~benchdb.backends.ortweb.page_run.RESOLUTIONS_PER_SAMPLE` clock steps; ``k`` =
1 for calls that long already). The loop itself is benchdb's: :func:`benchdb.harness.timing.measure`
consumes the page's samples one by one (fetched through playwright in chunks of about
:data:`~benchdb.backends.ortweb.page_run.CHUNK_S` seconds), with a timer that returns the page's
own measurement of each, so the warm-up and the stopping rule (``StopCheck``) are exactly those of
every other runner; a round trip to the page adds wall time between chunks, never to a sample (see
:mod:`benchdb.backends.ortweb.page_run`). The timing
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

import subprocess
from collections.abc import Iterator
from datetime import datetime, timezone
from functools import cache, lru_cache

from benchdb.backends.ortweb import BACKEND, assets, browser, missing  # noqa: F401 (BACKEND, missing: re-exported)
from benchdb.backends.ortweb.page_run import run_scenario, scenario_identity
from benchdb.errors import BenchdbError
from benchdb.harness import hardware
from benchdb.harness.scenario import Outcome, RunOptions, Scenario
from benchdb.harness.validity import error_text, fail_all

NAME = "ort-web"
DEVICES = ("wasm", "webgpu", "webnn")
MODES = ("opt-all",)


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

    return {
        "onnxruntime-web": assets.VERSION,
        "browser": browser_version(),
        "browser_path": browser.find(),
        "playwright": hardware.package_version("playwright"),
        "torch": hardware.package_version("torch"),
        "onnx": hardware.package_version("onnx"),
        "onnxscript": hardware.package_version("onnxscript"),
    }


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
        return cpu  # WASM runs on this CPU: its results share the CPU's hardware id
    env = environment(device)
    common = {
        "cpu_model": cpu["cpu_model"],
        "cores_logical": cpu["cores_logical"],
        "cores_physical": cpu["cores_physical"],
        "arch": cpu["arch"],
        "os": cpu["os"],
        "browser": env["browser"],
        "driver": env["browser"],
    }
    if device == "webgpu":
        gpu = env.get("webgpu") or {}
        if "error" in gpu:
            return {
                "kind": "gpu",
                "vendor": None,
                "device_name": "WebGPU (no adapter)",
                "memory_bytes": None,
                "adapter_error": gpu["error"],
                **common,
            }
        fallback = bool(gpu.get("isFallbackAdapter"))
        arch = gpu.get("architecture") or gpu.get("description") or gpu.get("device") or "adapter"
        return {
            "kind": "gpu",
            "vendor": gpu.get("vendor") or None,
            "device_name": f"WebGPU {arch}" + (" (software fallback adapter)" if fallback else ""),
            "memory_bytes": None,
            "compute_capability": None,
            "adapter": gpu,
            "is_fallback_adapter": fallback,
            "emulated": fallback,
            **common,
        }
    nn = env.get("webnn") or {}
    return {
        "kind": "webnn",
        "vendor": None,
        "device_name": "WebNN (cpu)",
        "memory_bytes": None,
        "webnn_error": nn.get("error"),
        **common,
    }


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

    fetch()  # the pinned npm files, on first use
    return inputs.expand_scenarios(
        replace(opts, modes=modes),
        NAME,
        device,
        lambda mode, precision: OrtwebOptions(threads=opts.thread_count, ep=device, browser="chromium"),
    )


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
    with Server(assets.folder()) as srv:  # 127.0.0.1 only; closed with this model's scenarios
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
    failed: export.ExportFailed | None = None  # an export that failed once fails for every shape
    for i, sc in enumerate(scenarios):
        if on_start:
            on_start(i)
        started = datetime.now(timezone.utc).isoformat()
        page = None
        deadline = {"fired": False}
        try:
            b.revive()  # the browser died or was ended: a new one
            page = b.blank_page(opts.timeout_s)  # outside the deadline: see Browser.blank_page
            with b.deadline(opts.timeout_s) as deadline:
                b.load(page, srv.url)
                if env is None:
                    env = page.evaluate("() => window.benchdb.environment()")
                    env["browser"] = f"Chromium {b.version}"
                unsupported = _unsupported(sc.device, env)
                if unsupported:
                    outcome = Outcome(
                        sc,
                        info,
                        status="unsupported",
                        error=unsupported,
                        started_at=started,
                        extra=scenario_identity(env, sc),
                    )
                else:
                    if failed is not None:
                        raise failed
                    outcome = run_scenario(page, srv, model, net, sc, opts, info, load_s, started, env)
        except export.ExportFailed as exc:
            failed = exc
            outcome = Outcome(sc, info, status="unsupported", error=export.describe_failure(exc), started_at=started)
        except Exception as exc:
            status, text = _status_of(exc, opts.timeout_s if deadline["fired"] else None)
            outcome = Outcome(
                sc, info, status=status, error=text, started_at=started, extra=scenario_identity(env, sc) if env else {}
            )
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


__all__ = ["BACKEND", "DEVICES", "software", "hardware_of", "plan", "run_model", "model_info", "missing"]
