"""The ort-web backend: onnxruntime-web in headless Chromium (WASM, WebGPU on SwiftShader, WebNN).

End to end with the real browser, the real onnxruntime-web files (fetched on first use, pinned and
integrity-checked), real tiny models exported to ONNX and verified against PyTorch fp32, ingested
into a real DuckDB file. Skipped where there is no Chromium or playwright, and failed under CI=true
(CI installs both): conftest.need_browser.
"""

from __future__ import annotations

import json

import duckdb
import pytest
from click.testing import CliRunner
from conftest import benchdb_cmd, have_browser, need_browser
from support import shared_exports

from benchdb.backends.ortweb import assets

QUICK = [
    "--min-time",
    "0.2",
    "--max-time",
    "1.5",
    "--warmup",
    "2",
    "--min-iters",
    "12",
    "--target-ci",
    "0.5",
    "--max-background-cpu",
    "100%",
    "--timeout",
    "240",
]


needs_browser = pytest.mark.usefixtures("browser_needed")


def invoke(*args):
    from benchdb.cli import main

    return CliRunner().invoke(main, list(args))


# --- unavailable: a missing browser or missing npm files, with the exact install command ---------


def test_missing_browser_or_files_is_unavailable_with_the_install_command(tmp_path):
    no_browser = {"BENCHDB_CHROMIUM": str(tmp_path / "no-chromium")}
    hw = benchdb_cmd("hardware", "--format", "json", env=no_browser, check=True)
    (web,) = [b for b in json.loads(hw.stdout)["backends"] if b["name"] == "ort-web"]
    assert web["status"] == "unavailable" and web["hint"].startswith("apt-get install -y chromium")
    run = benchdb_cmd(
        "run",
        "--backend",
        "ort-web",
        "--device",
        "wasm",
        "--model",
        "tiny:bert",
        "--out",
        str(tmp_path / "res"),
        env=no_browser,
    )
    assert run.returncode == 2
    assert run.stderr.count("\n") == 1 and "backend ort-web is unavailable: no Chromium browser found" in run.stderr
    assert "install it with: apt-get install -y chromium" in run.stderr
    assert not (tmp_path / "res").exists()
    if have_browser():  # the npm files missing (an empty folder named by BENCHDB_ORTWEB_DIR)
        text = benchdb_cmd("hardware", env={"BENCHDB_ORTWEB_DIR": str(tmp_path)}, check=True).stdout
        (line,) = [ln for ln in text.splitlines() if ln.strip().startswith("ort-web")]
        assert "unavailable" in line and "-m benchdb.backends.ortweb.assets" in line


def test_a_device_ort_web_does_not_have_is_one_line(tmp_path):
    r = benchdb_cmd("run", "--backend", "ort-web", "--device", "cuda", "--model", "tiny:bert", "--out", str(tmp_path))
    need_browser()  # without it ort-web is unavailable and the device is never checked
    assert (
        r.returncode == 2
        and "--device cuda is not a device of ort-web; use one of wasm, webgpu, webnn" in r.stderr
        and r.stderr.count("\n") == 1
    )


# --- end to end: WASM ok and verified, WebGPU emulated, WebNN unsupported, reports -----------------


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    """The session's shared export cache (tests/support/shared_exports.py): tiny:bert and tiny:vit
    at batch 1 and seq len 128 are test_shared_graph.py's sweep's exports too."""
    with shared_exports.used(tmp_path_factory) as path:
        yield path


@pytest.fixture(scope="module")
def warehouse(cache, tmp_path_factory):
    need_browser()
    tmp = tmp_path_factory.mktemp("ortweb")
    out, db = tmp / "res", tmp / "w.duckdb"
    wasm = invoke(
        "run",
        "--backend",
        "ort-web",
        "--device",
        "wasm",
        "--model",
        "tiny:bert",
        "--model",
        "tiny:vit",
        "--out",
        str(out),
        *QUICK,
    )
    assert wasm.exit_code == 0, wasm.output + repr(wasm.exception)
    gpu = invoke(
        "run",
        "--backend",
        "ort-web",
        "--device",
        "webgpu",
        "--model",
        "tiny:vit",
        "--out",
        str(out),
        "--no-isolation",
        *QUICK,
    )
    assert gpu.exit_code == 0, gpu.output + repr(gpu.exception)
    nn = invoke(
        "run",
        "--backend",
        "ort-web",
        "--device",
        "webnn",
        "--model",
        "tiny:vit",
        "--out",
        str(out),
        "--no-isolation",
        *QUICK,
    )
    assert nn.exit_code == 3 and "1 unsupported" in nn.output, nn.output
    assert invoke("ingest", str(out), "--db", str(db)).exit_code == 0
    con = duckdb.connect(str(db), read_only=True)
    yield con, db
    con.close()


def _results(con, device):
    rows = con.execute(
        """
        select r.model_id, r.status, r.error, r.timing_method, r.extra, r.options, h.fingerprint, r.hardware_id,
               (select count(*) from samples s where s.result_id = r.result_id and s.metric = 'latency_s'),
               (select median from result_metrics m where m.result_id = r.result_id and m.metric = 'max_rel_err')
        from results r join hardware h using (hardware_id)
        where r.backend = 'ort-web' and r.device = ? order by r.model_id""",
        [device],
    ).fetchall()
    keys = ["model", "status", "error", "timing", "extra", "options", "hw", "hw_id", "n", "rel"]
    return [dict(zip(keys, r, strict=True)) for r in rows]


@pytest.mark.slow
def test_wasm_bert_and_vit_are_ok_verified_and_identified(warehouse):
    from benchdb.harness.hardware import cpu_fingerprint
    from benchdb.schema.identity import hardware_id

    con, _ = warehouse
    rows = _results(con, "wasm")
    assert [r["model"] for r in rows] == ["tiny:bert", "tiny:vit"]
    for r in rows:
        extra, options = json.loads(r["extra"]), json.loads(r["options"])
        assert r["status"] == "ok", r["error"]
        assert r["rel"] <= 1e-3  # against PyTorch fp32
        assert r["n"] >= 12  # the stopping rule's --min-iters
        assert r["timing"].startswith("page_performance_now")
        assert extra["browser"].startswith("Chromium ") and extra["onnxruntime_web"] == assets.VERSION
        assert extra["wasm_simd"] is True and extra["cross_origin_isolated"] is True
        assert extra["wasm_threads"] == options["threads"] and options["ep"] == "wasm"
        assert 0 < extra["timer_resolution_s"] < 1e-3 and extra["calls_per_sample"] >= 1
        assert r["n"] + extra["dropped_samples"] <= extra["round_trips"] * extra["samples_per_round_trip"]
        assert r["hw_id"] == hardware_id(cpu_fingerprint())  # WASM runs on this CPU


@pytest.mark.slow
def test_webgpu_result_is_flagged_emulated(warehouse):
    con, _ = warehouse
    (r,) = _results(con, "webgpu")
    extra, hw = json.loads(r["extra"]), json.loads(r["hw"])
    assert r["status"] == "ok" and r["rel"] <= 1e-3, r["error"]
    assert extra["emulated"] is True and extra["adapter"]["isFallbackAdapter"] is True
    assert any(w.startswith("emulated: software WebGPU adapter") for w in extra["warnings"])
    assert "--enable-unsafe-webgpu" in extra["browser_flags"]
    assert hw["kind"] == "gpu" and hw["emulated"] is True and hw["is_fallback_adapter"] is True
    assert "software fallback adapter" in hw["device_name"] and hw["driver"].startswith("Chromium ")


@pytest.mark.slow
def test_webnn_is_unsupported_with_the_browsers_reason(warehouse):
    con, _ = warehouse
    (r,) = _results(con, "webnn")
    assert r["status"] == "unsupported" and r["n"] == 0
    assert r["error"].startswith("WebNN unavailable in Chromium ")
    assert "not supported on this platform" in r["error"] or "navigator.ml is absent" in r["error"]


@pytest.mark.slow
def test_reports_include_the_browser_rows(warehouse):
    _, db = warehouse
    r = invoke("report", "--matrix", "--format", "csv", "--db", str(db))
    assert r.exit_code == 0, r.output
    assert "ort-web" in r.output and "webgpu" in r.output.lower()
    r = invoke("report", "--optimal-hardware", "--format", "md", "--wide", "--db", str(db))
    assert r.exit_code == 0 and "ort-web" in r.output, r.output


@needs_browser
@pytest.mark.slow
def test_a_scenario_past_its_timeout_is_recorded_and_the_next_gets_a_new_browser(cache, tmp_path):
    out, db = tmp_path / "res", tmp_path / "w.duckdb"
    r = invoke(
        "run",
        "--backend",
        "ort-web",
        "--device",
        "wasm",
        "--model",
        "tiny:bert",
        "--batch-sizes",
        "1,2",
        "--out",
        str(out),
        "--no-isolation",
        *QUICK[:-2],
        "--timeout",
        "0.5",
    )
    assert r.exit_code != 0 and "2 timeout" in r.output, r.output
    assert invoke("ingest", str(out), "--db", str(db)).exit_code == 0
    con = duckdb.connect(str(db), read_only=True)
    rows = con.execute(
        "select batch_size, status, error from results where backend = 'ort-web' order by batch_size"
    ).fetchall()
    assert [(b, s) for b, s, _ in rows] == [(1, "timeout"), (2, "timeout")]
    assert all("exceeded --timeout 0.5 s in the browser" in e for _, _, e in rows)
