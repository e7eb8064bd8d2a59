"""The openai backend end to end: a real `transformers serve` on this CPU serving a random-weight
tiny LLaMA built here, swept over concurrency 1, 2, 4; a server that exits at once; a server
that dies mid-sweep; requests that fail (the stub server), counted, with goodput lower."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import duckdb
import pytest
from conftest import benchdb_cmd, need, need_module

need_module("httpx", "benchdb[serving]")

from support.serving_runs import QUICK, STUB, run_results  # noqa: E402

#: The `transformers` command of this interpreter's environment.
TRANSFORMERS = Path(sys.executable).parent / "transformers"


@pytest.fixture(scope="module")
def tiny_llm(tmp_path_factory):
    need_module("fastapi", "benchdb[transformers-serve]")  # what `transformers serve` needs beyond transformers
    need(TRANSFORMERS.exists(), f"{TRANSFORMERS} (benchdb[transformers-serve])")
    from benchdb.testing.tiny_llm import build

    return build(tmp_path_factory.mktemp("llm") / "tiny-llama")


@pytest.mark.slow
def test_a_sweep_of_transformers_serve_gives_valid_points_and_the_views(tiny_llm, tmp_path):
    out, db = tmp_path / "res", tmp_path / "w.duckdb"
    server = f"{TRANSFORMERS} serve {{model}} --port {{port}} --device cpu"
    proc = benchdb_cmd(
        "run",
        "--backend",
        "openai",
        "--model",
        str(tiny_llm),
        "--server",
        server,
        "--concurrency",
        "1,2,4",
        "--slo",
        "ttft:5s,tpot:2s",
        "--out",
        str(out),
        *QUICK,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr
    results = run_results(out)
    assert len(results) == 3
    shapes = sorted(r["scenario"]["input_shape"] for r in results)
    assert shapes == [f"in=8,out=8,concurrency={c}" for c in (1, 2, 4)]
    benchdb_cmd("ingest", str(out), "--db", str(db), check=True)
    with duckdb.connect(str(db), read_only=True) as con:
        rows = con.execute("SELECT status, validity, batch_size, metric FROM results ORDER BY batch_size").fetchall()
        assert rows == [("ok", "valid", c, "ttft_s") for c in (1, 2, 4)]
        per_metric = dict(con.execute("SELECT metric, count(*) FROM samples GROUP BY metric").fetchall())
        assert per_metric["ttft_s"] >= 3 * 8 and per_metric["itl_token_s"] > 0 and per_metric["chunk_tokens"] > 0
        # every completed request streamed exactly the 8 tokens asked (the tiny model never ends early)
        outs = {
            v for (v,) in con.execute("SELECT DISTINCT value FROM samples WHERE metric = 'output_tokens'").fetchall()
        }
        assert outs == {8.0}
        assert con.execute("SELECT count(*) FROM serving_points").fetchone()[0] == 3
        assert con.execute("SELECT count(*) FROM serving_frontier").fetchone()[0] >= 1
        # a generous SLO holds at every load measured: the answer is the most throughput measured (at
        # the highest load, or at a lower one where throughput fell at saturation), never beyond
        status, load, best = con.execute(
            "SELECT slo_status, load_at_slo, output_throughput_per_device "
            "FROM bdb_serving_at_slo(10.0, 2.0, NULL, NULL)"
        ).fetchone()
        most = con.execute("SELECT max(output_throughput_per_device) FROM serving_points").fetchone()[0]
        assert status in ("holds_at_max_load", "measured") and load in (1, 2, 4)
        assert best == pytest.approx(most)
    meta = results[0]["meta"]
    server_record = meta["scenario"]["extra"]["server"]
    assert server_record["engine"] == "transformers" and server_record["version"]
    assert "{port}" in server_record["command"] and server_record["log_tail"]


def test_a_server_that_exits_at_once_fails_its_points_with_its_log_tail(tmp_path):
    script = tmp_path / "boom.py"
    script.write_text("import sys\nprint('boom: no GPU here', flush=True)\nsys.exit(3)\n")
    out = tmp_path / "res"
    proc = benchdb_cmd(
        "run",
        "--backend",
        "openai",
        "--model",
        "m1",
        "--model",
        "m2",
        "--server",
        f"{sys.executable} {script} {{model}} {{port}}",
        "--concurrency",
        "1,2",
        "--out",
        str(out),
        *QUICK,
    )
    assert proc.returncode == 3, proc.stderr  # no scenario succeeded; every file says why
    results = run_results(out)
    assert len(results) == 4
    for r in results:
        meta = r["meta"]["scenario"]
        assert meta["status"] == "failed"
        assert "code 3" in meta["error"] and "boom: no GPU here" in meta["error"]


def test_a_server_that_dies_mid_sweep_keeps_the_finished_points(tmp_path):
    out = tmp_path / "res"
    proc = benchdb_cmd(
        "run",
        "--backend",
        "openai",
        "--model",
        "stub-model",
        "--server",
        STUB + " --exit-after-requests 40",
        "--concurrency",
        "1,2,4,8",
        "--out",
        str(out),
        "--warmup",
        "2",
        "--min-iters",
        "20",
        "--min-time",
        "0",
        "--max-time",
        "5",
        "--max-requests",
        "20",
        "--max-background-cpu",
        "100%",
        "--seq-lens",
        "8",
        "--gen-tokens",
        "4",
    )
    assert proc.returncode == 0, proc.stderr  # some points succeeded
    by_shape = {r["scenario"]["input_shape"]: r["scenario"] for r in run_results(out)}
    assert by_shape["in=8,out=4,concurrency=1"]["status"] == "ok"
    last = by_shape["in=8,out=4,concurrency=8"]
    assert last["status"] == "failed" and "server exited" in last["error"]


def test_a_point_whose_every_request_fails_says_what_the_server_answered(tmp_path):
    """A server that refuses every request (transformers serve refuses ignore_eos with HTTP 422)
    fails the point with the server's own answer, the thing to change, not just a count."""
    out = tmp_path / "res"
    proc = benchdb_cmd(
        "run",
        "--backend",
        "openai",
        "--model",
        "stub-refuses",
        "--server",
        STUB + " --fail-every 1",
        "--concurrency",
        "2",
        "--out",
        str(out),
        "--warmup",
        "0",
        "--min-iters",
        "6",
        "--min-time",
        "0",
        "--max-time",
        "5",
        "--max-requests",
        "6",
        "--max-background-cpu",
        "100%",
        "--seq-lens",
        "8",
        "--gen-tokens",
        "4",
    )
    assert proc.returncode != 0
    (res,) = run_results(out)
    assert res["status"] == "failed"
    assert res["scenario"]["error"].startswith("all 6 requests failed: HTTP 500")
    assert "stub: injected failure" in res["scenario"]["error"]
    assert "stub: injected failure" in proc.stdout + proc.stderr


def test_failed_requests_are_counted_and_goodput_drops(tmp_path):
    out, db = tmp_path / "res", tmp_path / "w.duckdb"
    for fail, folder in ((0, "clean"), (3, "faulty")):
        proc = benchdb_cmd(
            "run",
            "--backend",
            "openai",
            "--model",
            f"stub-{folder}",
            "--server",
            STUB + f" --fail-every {fail}",
            "--concurrency",
            "2",
            "--slo",
            "ttft:1s,tpot:1s",
            "--out",
            str(out / folder),
            "--warmup",
            "0",
            "--min-iters",
            "30",
            "--min-time",
            "0",
            "--max-time",
            "10",
            "--max-requests",
            "30",
            "--max-background-cpu",
            "100%",
            "--seq-lens",
            "8",
            "--gen-tokens",
            "4",
        )
        assert proc.returncode == 0, proc.stderr
    benchdb_cmd("ingest", str(out), "--db", str(db), check=True)
    with duckdb.connect(str(db), read_only=True) as con:
        got = dict(
            con.execute("""
            SELECT r.model_id, (SELECT count(*) FROM samples s WHERE s.result_id = r.result_id
                                AND s.metric = 'request_error')
            FROM results r""").fetchall()
        )
        assert got["stub-clean"] == 0 and got["stub-faulty"] >= 8
        rates = {
            m: dict(
                con.execute(
                    """
            SELECT s.metric, s.value FROM samples s JOIN results r USING (result_id)
            WHERE r.model_id = ? AND s.metric IN ('goodput', 'request_throughput', 'window_s')""",
                    [m],
                ).fetchall()
            )
            for m in ("stub-clean", "stub-faulty")
        }
        measured = dict(
            con.execute("""
            SELECT r.model_id, count(*) FROM samples s JOIN results r USING (result_id)
            WHERE s.metric = 'ttft_s' GROUP BY r.model_id""").fetchall()
        )
    clean, faulty = rates["stub-clean"], rates["stub-faulty"]
    assert clean["goodput"] == pytest.approx(clean["request_throughput"], rel=0.01)
    # goodput counts only the requests that completed within the SLO: every third failed, so the
    # good ones are two thirds of those sent, and the errors are not among them
    sent = measured["stub-faulty"] + got["stub-faulty"]
    good = faulty["goodput"] * faulty["window_s"]
    assert good == pytest.approx(measured["stub-faulty"], abs=0.5)
    assert good / sent == pytest.approx(2 / 3, abs=0.1)
    errors = json.loads(json.dumps(run_results(out / "faulty")[0]["meta"]["scenario"]["extra"]["errors"]))
    assert errors and sum(errors.values()) >= 8


def test_bad_options_are_one_line(tmp_path):
    bad = tmp_path / "prompts.jsonl"
    bad.write_text('{"prompt": "hello"}\n{"text": "no prompt key"}\n')
    huge = tmp_path / "huge.jsonl"
    with open(huge, "wb") as fh:  # sparse: its size is refused before a byte is read
        fh.truncate((256 << 20) + 1)
    cases = [
        (["--model", "m"], "needs --server COMMAND"),
        (["--model", "m", "--url", "http://127.0.0.1:9"], "--server-hardware NAME"),
        (["--model", "m", "--server", "serve {model}"], "lacks {port}"),
        (["--model", "m", "--server", STUB, "--request-rate", "fast"], "--request-rate 'fast' is not"),
        (["--model", "m", "--server", STUB, "--slo", "ttft:fast"], "ttft:fast"),
        (["--model", "m", "--server", STUB, "--prompts", str(bad)], f"--prompts {bad} line 2: not a JSON object"),
        (["--model", "m", "--server", STUB, "--prompts", str(tmp_path / "none.jsonl")], "No such file"),
        (["--model", "m", "--server", STUB, "--prompts", str(huge)], f"--prompts {huge} is larger than the 256"),
        (["--model", "m", "--server", STUB, "--client-workers", "many"], "--client-workers 'many': give auto"),
        (["--model", "m", "--server", STUB, "--client-workers", "0"], "--client-workers '0': give auto"),
    ]
    for args, text in cases:
        proc = benchdb_cmd("run", "--backend", "openai", *args, "--out", str(tmp_path / "o"), "--dry-run")
        assert proc.returncode == 2 and text in proc.stderr and "Traceback" not in proc.stderr, (args, proc.stderr)


def test_an_ab_run_of_a_serving_point_gives_each_side_its_server_and_a_verdict(tmp_path):
    out, db = tmp_path / "res", tmp_path / "w.duckdb"
    proc = benchdb_cmd(
        "run",
        "--backend",
        "openai",
        "--model",
        "stub-ab",
        "--server",
        STUB,
        "--concurrency",
        "2",
        "--ab",
        sys.executable,
        sys.executable,
        "--repeats",
        "2",
        "--out",
        str(out),
        "--db",
        str(db),
        "--warmup",
        "2",
        "--min-iters",
        "20",
        "--min-time",
        "0.3",
        "--max-time",
        "3",
        "--target-ci",  # the default 2 % can hold each side's process to --max-time
        "0.5",
        "--max-background-cpu",
        "100%",
        "--seq-lens",
        "8",
        "--gen-tokens",
        "4",
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    sides = {r["meta"]["run"]["config"]["ab"]["side"]: r["scenario"] for r in run_results(out)}
    assert set(sides) == {"base", "cand"}
    for sc in sides.values():  # each side's child got the backend's own options (--server, --concurrency)
        assert sc["status"] == "ok" and sc["input_shape"] == "in=8,out=4,concurrency=2"
        assert sc["options"]["server"] == STUB and sc["extra"]["server"]["engine"]
    command = [ln for ln in proc.stdout.splitlines() if ln.startswith("check with: ")][0].removeprefix("check with: ")
    assert "benchdb check" in command


def test_energy_per_output_token_from_the_servers_device(tmp_path):
    """RAPL (a fake powercap folder whose package counter a thread advances by 1 J every 10 ms while
    the load point runs): the result records its joules and joules per output token, and
    serving_points shows them; never an estimate."""
    import threading
    import time

    zone = tmp_path / "powercap" / "intel-rapl:0"
    zone.mkdir(parents=True)
    (zone / "name").write_text("package-0\n")
    (zone / "max_energy_range_uj").write_text("262143328850\n")
    counter = zone / "energy_uj"
    counter.write_text("1000000\n")
    stop = threading.Event()

    def advance():
        value = 1_000_000
        while not stop.is_set():
            value += 1_000_000
            tmp = zone / "energy_uj.tmp"
            tmp.write_text(f"{value}\n")
            tmp.replace(counter)
            time.sleep(0.01)

    ticker = threading.Thread(target=advance, daemon=True)
    ticker.start()
    out, db = tmp_path / "res", tmp_path / "w.duckdb"
    try:
        proc = benchdb_cmd(
            "run",
            "--backend",
            "openai",
            "--model",
            "stub-energy",
            "--server",
            STUB,
            "--concurrency",
            "2",
            "--out",
            str(out),
            "--warmup",
            "0",
            "--min-iters",
            "30",
            "--min-time",
            "0.5",
            "--max-time",
            "3",
            "--max-requests",
            "30",
            "--max-background-cpu",
            "100%",
            "--seq-lens",
            "8",
            "--gen-tokens",
            "4",
            env={"BENCHDB_POWERCAP_ROOT": str(tmp_path / "powercap")},
        )
    finally:
        stop.set()
        ticker.join()
    assert proc.returncode == 0, proc.stderr
    benchdb_cmd("ingest", str(out), "--db", str(db), check=True)
    with duckdb.connect(str(db), read_only=True) as con:
        got = dict(con.execute("SELECT metric, value FROM samples WHERE metric LIKE 'energy%'").fetchall())
        tokens = con.execute("SELECT sum(value) FROM samples WHERE metric = 'output_tokens'").fetchone()[0]
        shown, power = con.execute("SELECT energy_per_output_token_j, device_power_w FROM serving_points").fetchone()
        watts = con.execute("SELECT value FROM samples WHERE metric = 'device_power_w'").fetchone()[0]
        per_item = con.execute("SELECT energy_per_item_j FROM results_latest").fetchone()[0]
        window = con.execute("SELECT extra->'$.energy_window_s' FROM results").fetchone()[0]
    assert got["energy_j"] > 0.4  # >= 0.5 s of a 100 W fake counter, loosely
    assert got["energy_per_output_token_j"] == pytest.approx(got["energy_j"] / tokens)
    assert shown == pytest.approx(got["energy_per_output_token_j"])
    # the device's mean power over the counter's window: what the chassis model starts from
    t0, t1 = json.loads(window)
    assert watts == pytest.approx(got["energy_j"] / (t1 - t0)) and power == pytest.approx(watts)
    assert 10 < watts <= 110  # the fake counter's 100 W, less what its thread's sleeps lose
    assert per_item is None  # a load point's power is not a run's energy per item (TTFT x W)


def test_client_workers_share_a_load_point_and_are_recorded_not_identity(tmp_path):
    """--client-workers 2: two load generator processes, one merged point; the split is recorded in
    extra (per worker: cores, requests, CPU), and the scenario is the one a single client measures."""
    runs = {}
    for n in ("1", "2"):
        out = tmp_path / f"res{n}"
        proc = benchdb_cmd(
            "run",
            "--backend",
            "openai",
            "--model",
            "stub-w",
            "--server",
            STUB,
            "--concurrency",
            "4",
            "--client-workers",
            n,
            "--out",
            str(out),
            *QUICK,
            timeout=300,
        )
        assert proc.returncode == 0, proc.stderr
        (runs[n],) = run_results(out)
    from benchdb.schema.identity import scenario_key

    one, two = runs["1"]["scenario"], runs["2"]["scenario"]
    assert scenario_key(one) == scenario_key(two) and one["options"] == two["options"]
    assert "client_workers" not in one["extra"]
    per = two["extra"]["client_workers"]
    assert len(per) == 2 and all(w["requests"] > 0 for w in per)
    assert sum(w["requests"] for w in per) == two["extra"]["requests"]
    assert all(0 < w["loop_cpu_pct"] <= two["extra"]["client_loop_cpu_pct"] + 1e-9 for w in per)
