"""`benchdb import mlperf` over MLPerf Inference results repositories: real runs copied from
mlcommons/inference_results_v4.1, v5.1 and v6.1 (tests/fixtures/interop/mlperf_repo/README.md), imported
and ingested into a real warehouse, reproduce the published tables' rows; re-import adds nothing;
each kind of bad input costs only itself."""

from __future__ import annotations

import json
import resource
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import benchdb_cmd, cli, import_and_ingest
from conftest import db_rows as rows

from benchdb.interop import Declared
from benchdb.interop.mlperf import repo
from benchdb.interop.mlperf import rules as mlperf_rules

pytestmark = pytest.mark.core

FIX = Path(__file__).parents[1] / "fixtures" / "interop" / "mlperf_repo"
V41, V51, V61 = FIX / "v4.1", FIX / "v5.1", FIX / "v6.1"
HPE_GPTJ = "closed/HPE/results/HPE_Cray_XD670_H100_SXM_80GBx8_TRT/gptj-99"
AMD = "closed/AMD/results/8xMI300X_2xEPYC_9575F/llama2-70b-99"


def table_rows() -> list[dict]:
    """Both fixtures' published rows in one shape."""
    out = [
        {
            "submitter": r["Submitter"],
            "system": r["Platform"],
            "model": r["Model"],
            "scenario": r["Scenario"],
            "accelerator": r["Accelerator"],
            "per_node": r["a#"],
            "nodes": r["Nodes"],
            "result": r["Performance_Result"],
            "units": r["Performance_Units"],
            "location": r["Location"],
        }
        for r in json.loads((V51 / "summary_results.json").read_text())
    ]
    out += [
        {
            "submitter": r["Organization"],
            "system": r["Platform"],
            "model": r["Model"],
            "scenario": r["Scenario"],
            "accelerator": r["accelerator_model_name"],
            "per_node": r["accelerators_per_node"],
            "nodes": r["number_of_nodes"],
            "result": r["Result"],
            "units": r["Units"],
            "location": r["Location"],
        }
        for r in json.loads((V61 / "summary.json").read_text()).values()
    ]
    return out


def warehouse_rows(db) -> list[dict]:
    return rows(
        db,
        """
        SELECT r.model_id, r.mode, r.accelerators, r.metric, r.validity,
               json_extract_string(r.options, '$.submitter') AS submitter,
               json_extract_string(r.options, '$.system') AS system,
               h.kind, h.device_name, h.accelerators_per_node, h.nodes,
               max(s.value) FILTER (WHERE s.statistic = 'value') AS value,
               max(s.value) FILTER (WHERE s.statistic = 'published') AS published
        FROM results r JOIN hardware h USING (hardware_id)
        JOIN source_statistics s ON s.result_id = r.result_id AND s.metric = r.metric
        GROUP BY ALL""",
    )


def test_the_published_rows_are_reproduced_from_the_logs(tmp_path):
    db = import_and_ingest(tmp_path, "mlperf", V51, V61)
    got = {(r["submitter"], r["system"], r["model_id"], r["mode"]): r for r in warehouse_rows(db)}
    published = [t for t in table_rows() if not t["location"].endswith("/Interactive/performance/run_1")]
    assert len(got) == len(published) == 8
    for t in published:
        r = got[(t["submitter"], t["system"], f"mlperf:{mlperf_rules.canonical_model(t['model'])}", t["scenario"])]
        if t["accelerator"]:
            assert (r["device_name"], r["accelerators_per_node"]) == (t["accelerator"], int(t["per_node"]))
        else:  # a CPU-only system: no accelerator, a# empty
            assert (r["kind"], r["accelerators_per_node"], t["per_node"]) == ("cpu", 0, "")
        assert r["nodes"] == int(t["nodes"]) and r["accelerators"] == r["accelerators_per_node"] * r["nodes"]
        figure = r["value"] / mlperf_rules.UNITS[t["units"]]  # the table's unit (ms for latencies)
        assert figure == pytest.approx(t["result"], rel=1e-4), t["location"]
        assert r["published"] == pytest.approx(t["result"] * mlperf_rules.UNITS[t["units"]])
        assert r["validity"] == "valid"
    single = got[
        (
            "GATEOverflow",
            "GATEOverflow_AMD_AM5-mlcommons_cpp-cpu-onnxruntime-default_config",
            "mlperf:resnet",
            "SingleStream",
        )
    ]
    assert single["metric"] == "latency_s"


def test_systems_accuracy_power_and_inferred_runs(tmp_path):
    out = tmp_path / "imported"
    r = cli("import", "mlperf", V51, "--out", out)
    assert r.exit_code == 0, r.output
    assert (
        "6 run(s) on 3 system(s); skipped 1 compliance run(s); 6 of 6 checked run(s) reproduce "
        "summary_results.json, 0 disagreement(s), 0 table row(s) without a performance log" in r.output
    )
    db = tmp_path / "bench.duckdb"
    assert cli("ingest", out, "--db", db).exit_code == 0
    (amd,) = rows(db, "SELECT * FROM hardware WHERE vendor = 'AMD'")
    assert (
        amd["kind"],
        amd["device_name"],
        amd["accelerators_per_node"],
        amd["nodes"],
        amd["cpu_model"],
        amd["cpu_sockets"],
        amd["cores_physical"],
        amd["interconnect"],
        amd["availability"],
    ) == ("rocm", "AMD Instinct MI300X 192GB HBM3", 8, 1, "AMD EPYC 9575F", 2, 128, "XGMI", "available")
    stats = {
        (s["metric"], s["statistic"]): s["value"]
        for s in rows(
            db,
            "SELECT s.metric, s.statistic, s.value FROM source_statistics s JOIN results r USING (result_id) "
            "WHERE r.model_id = 'mlperf:llama2-70b-99' AND r.mode = 'Server'",
        )
    }
    # accuracy/accuracy.txt, as the table prints it: "ROUGE1: 44.4406  ROUGE2: 22.0593  ROUGEL: 28.6063
    # TOKENS_PER_SAMPLE: 301.3"
    assert [stats[(f"accuracy:{m}", "value")] for m in ("rouge1", "rouge2", "rougel", "tokens_per_sample")] == [
        44.4406,
        22.0593,
        28.6063,
        301.3,
    ]
    assert stats[("ttft_s", "p99")] == pytest.approx(1.914647645)
    assert stats[("tpot_s", "p99")] == pytest.approx(0.193380124)
    # the real AMD log's result_token_throughput = 6.90935e-09 is no headline and no figure of ours
    assert not [k for k, v in stats.items() if v == pytest.approx(6.90935e-09)]
    (power,) = rows(
        db,
        "SELECT s.statistic, s.value FROM source_statistics s JOIN results r USING (result_id) "
        "WHERE r.model_id = 'mlperf:whisper' AND s.metric = 'power_w' AND s.statistic = 'mean'",
    )
    assert power["value"] == pytest.approx(7636.4895833333, rel=1e-9)  # the table's Power_Result
    inferred = rows(
        db,
        "SELECT mode, json_extract_string(settings, '$.inferred_from') AS source "
        "FROM results WHERE json_extract(settings, '$.inferred')::BOOLEAN ORDER BY mode",
    )
    assert inferred == [{"mode": "MultiStream", "source": "SingleStream"}]
    (edge,) = rows(
        db,
        "SELECT json_extract_string(options, '$.effective_scenario') AS eff FROM results "
        "WHERE model_id = 'mlperf:llama2-70b-99' AND mode = 'Interactive'",
    )
    assert edge["eff"] == "Server"


def test_v6_endpoint_runs_and_a_table_row_without_a_log(tmp_path):
    r = cli("import", "mlperf", V61, "--out", tmp_path / "out")
    assert r.exit_code == 0, r.output
    assert (
        "table row without a performance log: summary.json: closed/NVIDIA/results/"
        "VR-NVL72_VR-288GB_aarch64x72_TRT/deepseek-r1/Interactive"
    ) in r.output
    assert "2 of 2 checked run(s) reproduce summary.json, 0 disagreement(s), 1 table row(s) without" in r.output
    db = tmp_path / "bench.duckdb"
    assert cli("ingest", tmp_path / "out", "--db", db).exit_code == 0
    stats = {
        (s["mode"], s["metric"], s["statistic"]): s["value"]
        for s in rows(
            db,
            "SELECT r.mode, s.metric, s.statistic, s.value FROM source_statistics s JOIN results r USING (result_id)",
        )
    }
    assert stats[("Server", "ttft_s", "p99")] == pytest.approx(0.303546985)
    assert stats[("Server", "tpot_s", "median")] == pytest.approx(0.04110502354525507)
    assert stats[("Offline", "accuracy:deepseek_r1_accuracy", "value")] == pytest.approx(81.35824977210574)
    assert stats[("Server", "accuracy:exact_match", "value")] == pytest.approx(81.42661804922516)  # the table's


def test_importing_the_tree_again_writes_and_ingests_nothing(tmp_path):
    db = import_and_ingest(tmp_path, "mlperf", V51, V61)
    out = tmp_path / "imported"
    before = {p: p.stat().st_mtime_ns for p in out.rglob("*.parquet")}
    r = cli("import", "mlperf", V51, V61, "--out", out)
    assert r.exit_code == 0 and "8 unchanged (already written)" in r.output, r.output
    assert {p: p.stat().st_mtime_ns for p in out.rglob("*.parquet")} == before
    r = cli("ingest", out, "--db", db)
    assert r.exit_code == 0 and "ingested 0 new file(s)" in r.output, r.output
    assert rows(db, "SELECT count(*) AS n FROM results") == [{"n": 8}]


def _round_rows(db) -> dict[str, dict]:
    return {
        r["mode"]: r
        for r in rows(
            db,
            """
            SELECT r.mode, r.metric, s.value, json_extract_string(r.settings, '$.mlperf_round') AS round,
                   json_extract_string(u.software, '$."mlcommons-loadgen"') AS loadgen
            FROM results r JOIN runs u USING (run_id)
            JOIN source_statistics s ON s.result_id = r.result_id AND s.metric = r.metric AND s.statistic = 'value'""",
        )
    }


def _detail_value(run: Path, key: str) -> float:
    line = next(ln for ln in (run / "mlperf_log_detail.txt").read_text().splitlines() if f'"key": "{key}"' in ln)
    return float(json.loads(line.split(":::MLLOG ", 1)[1])["value"])


def test_a_run_on_the_previous_rounds_loadgen_is_judged_by_the_round_it_was_submitted_to(tmp_path):
    """HPE's GPT-J runs in the v4.1 repository ran LoadGen 4.0; the v4.1 checker publishes GPT-J as
    inferred tokens/s (v4.0's rules: samples/s, 286.26 for Offline). The repository's README names
    its round; the log's LoadGen version stays the run's software."""
    db = import_and_ingest(tmp_path, "mlperf", V41)
    got = _round_rows(db)
    for scenario, key in (
        ("Offline", "result_inferred_tokens_per_second"),
        ("Server", "result_inferred_completed_tokens_per_second"),
    ):
        run = V41 / HPE_GPTJ / scenario / "performance" / "run_1"
        assert "4.0 @" in (run / "mlperf_log_detail.txt").read_text().split('"loadgen_version"')[1][:40]
        r = got[scenario]
        assert (r["metric"], r["round"], r["loadgen"]) == ("tokens_per_s", "v4.1", "4.0"), r
        assert r["value"] == pytest.approx(_detail_value(run, key))
    assert got["Offline"]["value"] == pytest.approx(19751.9)  # not result_samples_per_second, 286.26
    assert got["Server"]["value"] == pytest.approx(19502.6)  # not scheduled samples/s, 285.387


def test_the_round_comes_from_the_repository_or_round_never_from_loadgen(tmp_path):
    plain = tmp_path / "results"
    shutil.copytree(V41, plain)
    (plain / "README.md").unlink()
    r = benchdb_cmd("import", "mlperf", str(plain), "--out", str(tmp_path / "a"))
    assert r.returncode == 1 and "Traceback" not in r.stderr
    (line,) = _errors(r.stderr)  # once for the repository, not once per run
    assert str(plain) in line and "cannot tell which MLPerf round" in line and "--round v4.1" in line
    assert "2 run(s) of results not imported" in r.stdout and not (tmp_path / "a").exists()

    db = import_and_ingest(tmp_path / "b", "mlperf", plain, extra=("--round", "4.1"))
    assert {m: (r["round"], r["value"]) for m, r in _round_rows(db).items()} == {
        "Offline": ("v4.1", pytest.approx(19751.9)),
        "Server": ("v4.1", pytest.approx(19502.6)),
    }
    named = tmp_path / "inference_results_v4.1"  # a clone of the public repository, README or not
    plain.rename(named)
    db = import_and_ingest(tmp_path / "c", "mlperf", named)
    assert {r["round"] for r in _round_rows(db).values()} == {"v4.1"}

    r = benchdb_cmd("import", "mlperf", str(V41), "--round", "v4.0", "--out", str(tmp_path / "d"))
    assert r.returncode == 1
    (line,) = _errors(r.stderr)
    assert "--round v4.0 contradicts the repository's own round v4.1 (the title of README.md); drop --round" in line
    unnamed = shutil.copytree(named, tmp_path / "unnamed")
    r = benchdb_cmd("import", "mlperf", str(unnamed), "--round", "v3.1", "--out", str(tmp_path / "e"))
    (line,) = _errors(r.stderr)
    assert r.returncode == 1 and "MLPerf round v3.1 predates the checker rules benchdb knows (v4.0 and later)" in line
    for bad, why in (
        ("four", "'four' is not an MLPerf round; write it as v4.1"),
        ("v4.1", "--round names an MLPerf round"),
    ):
        fmt = "mlperf" if bad == "four" else "vllm-serve"
        r = benchdb_cmd("import", fmt, str(named), "--round", bad, "--out", str(tmp_path / "f"))
        assert r.returncode == 2 and why in r.stderr and "Traceback" not in r.stderr, r.stderr


V61_ROWS = FIX / "v6.1-summary-rows.json"  # four more rows of v6.1's summary.json, unchanged


def test_disagreements_are_printed_kept_with_the_run_and_in_a_view(tmp_path):
    tree = tmp_path / "v6.1"
    shutil.copytree(V61, tree)
    table = json.loads((tree / "summary.json").read_text())
    table.update(json.loads(V61_ROWS.read_text()))
    offline = next(k for k, r in table.items() if r["Location"].endswith("/deepseek-r1/Offline/performance/run_1"))
    table[offline]["total_accelerators"] = 71  # crafted: a row whose run has logs, 18 x 4 = 72
    (tree / "summary.json").write_text(json.dumps(table))
    r = cli("import", "mlperf", tree, "--out", tmp_path / "out")
    assert r.exit_code == 0, r.output
    lines = [ln for ln in r.output.splitlines() if ln.startswith("mlperf: published data disagrees: summary.json: ")]
    assert len(lines) == 3 and sum("says 2 EPYC processor(s) per node" in ln for ln in lines) == 2, lines
    assert "2 of 2 checked run(s) reproduce summary.json" in r.output
    assert "5 table row(s) without a performance log, 3 disagreement(s) within the table's rows" in r.output
    db = tmp_path / "w.duckdb"
    assert cli("ingest", tmp_path / "out", "--db", db).exit_code == 0
    assert rows(db, "SELECT source_format, model_id, mode, round, system, disagreement FROM source_disagreements") == [
        {
            "source_format": "mlperf-loadgen",
            "model_id": "mlperf:deepseek-r1",
            "mode": "Offline",
            "round": "v6.1",
            "system": "VR-NVL72_VR-288GB_aarch64x72_TRT",
            "disagreement": "summary.json: closed/NVIDIA/results/VR-NVL72_VR-288GB_aarch64x72_TRT/deepseek-r1/Offline: "
            "total_accelerators 71, but accelerators per node 4 x nodes 18 = 72",
        }
    ]


def _copy(tmp_path: Path) -> Path:
    tree = tmp_path / "tree"
    shutil.copytree(V51, tree)
    return tree


def _errors(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("benchdb: error:")]


def test_a_systems_json_missing_fields_costs_only_its_runs(tmp_path):
    tree = _copy(tmp_path)
    sysjson = tree / "closed/AMD/systems/8xMI300X_2xEPYC_9575F.json"
    doc = json.loads(sysjson.read_text())
    del doc["accelerators_per_node"], doc["number_of_nodes"]
    sysjson.write_text(json.dumps(doc))
    r = benchdb_cmd("import", "mlperf", str(tree), "--out", str(tmp_path / "out"))
    assert r.returncode == 1 and "Traceback" not in r.stderr
    (line,) = _errors(r.stderr)
    assert str(sysjson) in line and "missing accelerators_per_node, number_of_nodes" in line
    assert "3 run(s) of 8xMI300X_2xEPYC_9575F.json not imported" in r.stdout
    assert "imported 3 result(s)" in r.stdout and len(list((tmp_path / "out").rglob("*.parquet"))) == 3


def test_an_empty_summary_csv_is_named_and_the_runs_still_import(tmp_path):
    tree = _copy(tmp_path)
    empty = tree / "closed/AMD/summary.csv"  # as closed/Azure/summary.csv of v5.1: 0 bytes
    empty.write_bytes(b"")
    r = benchdb_cmd("import", "mlperf", str(tree), "--out", str(tmp_path / "out"))
    assert r.returncode == 1
    (line,) = _errors(r.stderr)
    assert str(empty) in line and "empty file" in line
    assert "imported 6 result(s)" in r.stdout


@pytest.mark.parametrize("bogus", ["-6.90935e-09", "NaN", '"fast"'])
def test_a_headline_that_is_not_a_positive_number_fails_its_run(tmp_path, bogus):
    tree = _copy(tmp_path)
    detail = tree / AMD / "Server/performance/run_1/mlperf_log_detail.txt"
    text = detail.read_text()
    real = '"key": "result_completed_tokens_per_second", "value": 24593.8'
    assert real in text
    detail.write_text(text.replace(real, f'"key": "result_completed_tokens_per_second", "value": {bogus}'))
    r = benchdb_cmd("import", "mlperf", str(tree), "--out", str(tmp_path / "out"))
    assert r.returncode == 1
    (line,) = _errors(r.stderr)
    assert str(detail.with_name("mlperf_log_summary.txt")) in line and "result_completed_tokens_per_second" in line
    assert "imported 5 result(s)" in r.stdout


def test_a_tiny_headline_is_a_disagreement_with_the_table(tmp_path):
    tree = _copy(tmp_path)
    detail = tree / AMD / "Server/performance/run_1/mlperf_log_detail.txt"
    detail.write_text(
        detail.read_text().replace(
            '"result_completed_tokens_per_second", "value": 24593.8',
            '"result_completed_tokens_per_second", "value": 6.90935e-09',
        )
    )
    r = benchdb_cmd("import", "mlperf", str(tree), "--out", str(tmp_path / "out"))
    assert r.returncode == 0, r.stderr
    assert (
        f"mlperf: table disagrees: summary_results.json: {AMD}/Server: result (Tokens/s): table 24593.8, "
        "logs 6.90935e-09"
    ) in r.stdout
    assert "5 of 6 checked run(s) reproduce summary_results.json, 1 disagreement(s)" in r.stdout


def test_unknown_units_in_the_table_are_named(tmp_path):
    tree = _copy(tmp_path)
    table = tree / "summary_results.json"
    doc = json.loads(table.read_text())
    doc[0]["Performance_Units"] = "Joules/s"
    table.write_text(json.dumps(doc))
    r = benchdb_cmd("import", "mlperf", str(tree), "--out", str(tmp_path / "out"))
    assert r.returncode == 1
    (line,) = _errors(r.stderr)
    assert str(table) in line and f"{doc[0]['Location']}: unknown units 'Joules/s'" in line
    assert "imported 6 result(s)" in r.stdout


def test_two_submitters_systems_with_one_accelerator_and_cpu_stay_two_systems(tmp_path):
    """Real v5.1 case: ASUSTeK's ESC N8 and Dell's XE9680L (both 8x H200-SXM-141GB, Xeon 8480+) were one
    hardware row, so one submitter's results were labelled with the other's system name."""
    tree = _copy(tmp_path)
    amd = tree / "closed/AMD"
    other = tree / "closed/Other"
    shutil.copytree(amd / "results", other / "results")
    (other / "systems").mkdir()
    doc = json.loads((amd / "systems/8xMI300X_2xEPYC_9575F.json").read_text())
    doc.update(system_name="Another Vendor 8x MI300X", submitter="Other", host_memory_capacity="3TiB")
    (other / "systems/8xMI300X_2xEPYC_9575F.json").write_text(json.dumps(doc))
    r = cli("import", "mlperf", tree, "--out", tmp_path / "out")
    assert r.exit_code == 0, r.output
    db = tmp_path / "w.duckdb"
    assert cli("ingest", tmp_path / "out", "--db", db).exit_code == 0
    got = rows(
        db,
        "SELECT DISTINCT json_extract_string(options, '$.submitter') AS submitter, system_name "
        "FROM system_results WHERE accelerator LIKE 'AMD%' ORDER BY 1",
    )
    assert got == [
        {"submitter": "AMD", "system_name": "Supermicro AS-8125GS-TNMR2"},
        {"submitter": "Other", "system_name": "Another Vendor 8x MI300X"},
    ]
    assert rows(db, "SELECT count(*) AS n FROM systems WHERE accelerator LIKE 'AMD%'") == [{"n": 2}]


def _bounded_import(tree: Path, out: Path) -> subprocess.CompletedProcess:
    """`benchdb import mlperf TREE` in a subprocess whose address space is capped: a side file that
    is read whole fails fast instead of taking the machine's memory."""

    def guard() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (3 * 2**30, 3 * 2**30))

    return subprocess.run(
        [sys.executable, "-m", "benchdb", "import", "mlperf", str(tree), "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
        preexec_fn=guard,  # noqa: PLW1509 (this test starts no threads)
    )


def _one_failure(r: subprocess.CompletedProcess, names: Path, imported: int, out: Path) -> str:
    """The one error line of an import where one thing failed; ``imported`` results were written,
    each as its own file, and nothing else (no partial output of the failed run)."""
    assert r.returncode == 1 and "internal error" not in r.stderr and "Traceback" not in r.stderr, r.stderr[-2000:]
    (line,) = _errors(r.stderr)
    assert len([ln for ln in r.stderr.splitlines() if ln.strip()]) == 1, r.stderr
    assert str(names) in line, line
    assert f"imported {imported} result(s)" in r.stdout, r.stdout
    assert len(list(out.rglob("*.parquet"))) == imported and not list(out.rglob("*.tmp*"))
    return line


def test_a_csv_field_past_the_limit_in_summary_csv_is_named_and_the_runs_still_import(tmp_path):
    tree = _copy(tmp_path)
    table = tree / "closed/AMD/summary.csv"
    table.write_text("Location,Accuracy\n" + f"{AMD}/Server," + "x" * 300_000 + "\n")
    out = tmp_path / "out"
    line = _one_failure(_bounded_import(tree, out), table, 6, out)
    assert "a CSV table with a field over 131,072 characters at line 2" in line


def test_accuracy_results_nested_200k_deep_fails_only_its_run(tmp_path):
    tree = tmp_path / "tree"
    shutil.copytree(V61, tree)
    run = tree / "closed/NVIDIA/results/VR-NVL72_VR-288GB_aarch64x72_TRT/deepseek-r1/Offline"
    deep = run / "accuracy/accuracy_results.json"
    deep.write_text('{"accuracy_scores": ' + "[" * 200_000 + "]" * 200_000 + "}")
    out = tmp_path / "out"
    line = _one_failure(_bounded_import(tree, out), run / "performance/result_summary.json", 1, out)
    assert f"{deep}: nested more than 100 levels deep" in line


#: (side file, the file its failure is reported against, results still imported)
SIDE_FILES = {
    "accuracy.txt": (
        f"{AMD}/Server/accuracy/accuracy.txt",
        f"{AMD}/Server/performance/run_1/mlperf_log_summary.txt",
        5,
    ),
    "summary.csv": ("closed/AMD/summary.csv", "closed/AMD/summary.csv", 6),
    "systems JSON": (
        "closed/AMD/systems/8xMI300X_2xEPYC_9575F.json",
        "closed/AMD/systems/8xMI300X_2xEPYC_9575F.json",
        3,
    ),
    "detail log": (
        f"{AMD}/Server/performance/run_1/mlperf_log_detail.txt",
        f"{AMD}/Server/performance/run_1/mlperf_log_summary.txt",
        5,
    ),
    "spl.txt": (
        "closed/Lenovo/results/SR680a_V3_B200SXMx8_TRT/whisper/Offline/performance/run_1/spl.txt",
        "closed/Lenovo/results/SR680a_V3_B200SXMx8_TRT/whisper/Offline/performance/run_1/mlperf_log_summary.txt",
        5,
    ),
}


@pytest.mark.parametrize("side", list(SIDE_FILES))
def test_a_sparse_8_gib_side_file_fails_only_the_runs_that_need_it(tmp_path, side):
    rel, reported, imported = SIDE_FILES[side]
    tree = _copy(tmp_path)
    huge = tree / rel
    huge.unlink(missing_ok=True)
    with huge.open("wb") as f:
        f.truncate(8 * 2**30)  # nothing on disk, 8 GiB to whoever reads it whole
    out = tmp_path / "out"
    line = _one_failure(_bounded_import(tree, out), tree / reported, imported, out)
    assert "larger than the" in line and "(8,192 MiB)" in line


def test_a_systems_json_linked_out_of_the_tree_is_refused(tmp_path):
    tree = _copy(tmp_path)
    sysjson = tree / "closed/AMD/systems/8xMI300X_2xEPYC_9575F.json"
    doc = json.loads(sysjson.read_text())
    doc.update(system_name="Leaked System", other_software_stack="token=SECRET123")
    outside = tmp_path / "elsewhere.json"
    outside.write_text(json.dumps(doc))
    sysjson.unlink()
    sysjson.symlink_to(outside)
    out = tmp_path / "out"
    r = benchdb_cmd("import", "mlperf", str(tree), "--out", str(out))
    line = _one_failure(r, sysjson, 3, out)
    assert f"a link out of {tree}" in line
    assert not any(b"SECRET123" in p.read_bytes() or b"Leaked System" in p.read_bytes() for p in out.rglob("*.parquet"))


@pytest.mark.parametrize(
    ("label", "value"),
    [
        ("Min latency (ns)", "-3953494059"),
        ("99.00 percentile latency (ns)", "-1"),
        ("Min First Token latency (ns)", "-5"),
    ],
)
def test_a_negative_latency_fails_its_run_naming_the_field(tmp_path, label, value):
    tree = _copy(tmp_path)
    log = tree / AMD / "Server/performance/run_1/mlperf_log_summary.txt"
    lines = log.read_text().splitlines(keepends=True)
    (i,) = [n for n, ln in enumerate(lines) if ln.startswith(label + " ")]
    lines[i] = f"{label} : {value}\n"
    log.write_text("".join(lines))
    out = tmp_path / "out"
    line = _one_failure(benchdb_cmd("import", "mlperf", str(tree), "--out", str(out)), log, 5, out)
    assert f"'{label}' is {value}" in line and "negative" in line


@pytest.mark.parametrize(("block", "key"), [("latency", "min"), ("output_sequence_lengths", "max")])
def test_a_negative_figure_in_result_summary_json_fails_its_run_naming_it(tmp_path, block, key):
    tree = tmp_path / "tree"
    shutil.copytree(V61, tree)
    summary = tree / "closed/NVIDIA/results/VR-NVL72_VR-288GB_aarch64x72_TRT/deepseek-r1/Offline/performance"
    summary /= "result_summary.json"
    doc = json.loads(summary.read_text())
    doc[block][key] = -3953494059
    summary.write_text(json.dumps(doc))
    out = tmp_path / "out"
    line = _one_failure(benchdb_cmd("import", "mlperf", str(tree), "--out", str(out)), summary, 1, out)
    assert f"{block}.{key} is -3.95349e+09: negative" in line


def test_an_open_division_run_is_judged_by_the_benchmark_its_row_names(tmp_path):
    """Krai's open v5.1 run of llama3_1-70b-fp8_dyn (LoadGen 5.0): its folder names its own model,
    the table's UsedModel that folder and Model the benchmark, llama2-70b-99.9, whose rules publish
    tokens/s (58,617.3), not samples/s (198.028)."""
    r = cli("import", "mlperf", FIX / "v5.1-open", "--out", tmp_path / "out")
    assert r.exit_code == 0, r.output
    assert "1 of 1 checked run(s) reproduce summary_results.json, 0 disagreement(s)" in r.output
    db = tmp_path / "w.duckdb"
    assert cli("ingest", tmp_path / "out", "--db", db).exit_code == 0
    (row,) = rows(
        db,
        "SELECT r.model_id, r.metric, s.value, json_extract_string(r.settings, '$.mlperf_round') AS round "
        "FROM results r JOIN source_statistics s ON s.result_id = r.result_id AND s.metric = r.metric "
        "AND s.statistic = 'value'",
    )
    assert row == {
        "model_id": "mlperf:llama3_1-70b-fp8_dyn",
        "metric": "tokens_per_s",
        "value": 58617.3,
        "round": "v5.1",
    }


def test_an_endpoints_runs_config_yaml_is_read_as_the_checker_reads_it(tmp_path):
    tree = tmp_path / "v6.1"
    shutil.copytree(V61, tree)
    runs = tree / "closed/NVIDIA/results/VR-NVL72_VR-288GB_aarch64x72_TRT/deepseek-r1"
    shutil.copy(FIX / "endpoints_config.yaml", runs / "Offline" / "config.yaml")
    shutil.copy(FIX / "endpoints_config.yaml", runs / "Server" / "config.yaml")  # type: offline, in Server
    r = cli("import", "mlperf", tree, "--out", tmp_path / "out")
    assert r.exit_code == 0, r.output
    assert (
        "config.yaml: closed/NVIDIA/results/VR-NVL72_VR-288GB_aarch64x72_TRT/deepseek-r1/Server: type 'offline'"
        in r.output
    )
    db = tmp_path / "w.duckdb"
    assert cli("ingest", tmp_path / "out", "--db", db).exit_code == 0
    got = {
        r["mode"]: json.loads(r["c"])
        for r in rows(db, "SELECT mode, json_extract(settings, '$.endpoints_config') AS c FROM results")
    }
    assert got["Offline"]["load_pattern"] == "max_throughput" and got["Offline"]["min_duration_ms"] == 600000
    assert got["Offline"]["type"] == "offline" and got["Offline"]["scheduler_random_seed"] == 16159082839903944936


def test_discover_counts_compliance_runs_apart_and_import_paths_writes_each_run(tmp_path):
    """The module's own two steps: the performance runs under a path (a compliance audit is no result,
    only counted) and each written as a contract file, with the summary line's detail."""
    runs, skipped = repo.discover([str(V51)])
    assert skipped == 1 and len(runs) == 6
    assert all(p.name == "mlperf_log_summary.txt" and p.parts[-3:-1] == ("performance", "run_1") for p in runs)
    summary = repo.import_paths([str(V41)], tmp_path / "out", Declared())
    assert [(p.relative_to(V41).parts[-4], n) for p, n in summary.imported] == [("Offline", 1), ("Server", 1)]
    assert len(summary.written) == 2 and summary.failed == []
    assert summary.detail.startswith("2 run(s) on 1 system(s); skipped 0 compliance run(s)")
