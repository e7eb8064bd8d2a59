"""A server at --url on a described system (`--hardware-file`), and two deployments compared in one
interleaved A/B (`--ab-url BASE_URL CAND_URL`), against real stub servers, ingested into a real
warehouse and judged by `benchdb check`."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import benchdb_cmd, cli, db_rows, need_module

from benchdb.testing.stub import StubConfig, StubServer

need_module("httpx", "benchdb[serving]")

SYSTEMS = Path(__file__).parents[1] / "fixtures" / "systems"
H200, MI300X = SYSTEMS / "8xh200.yaml", SYSTEMS / "8xmi300x.yaml"
QUICK = [
    "--warmup",
    "2",
    "--min-iters",
    "10",
    "--min-time",
    "0.2",
    "--max-time",
    "3",
    "--target-ci",
    "0.5",
    "--max-background-cpu",
    "100%",
    "--seq-lens",
    "8",
    "--gen-tokens",
    "4",
    "--concurrency",
    "2",
]


def _check(db: Path, command: str) -> tuple[int, str]:
    """The `benchdb check` an A/B run printed, run on ``db``: (exit code, its output)."""
    import shlex

    args = shlex.split(command.split(" && ", 1)[1])[1:]  # after `benchdb`
    proc = benchdb_cmd(*args)
    return proc.returncode, proc.stdout + proc.stderr


def _ab_url(tmp_path: Path, base: StubConfig, cand: StubConfig, *hardware: str) -> tuple[Path, str]:
    """`run --ab-url` of two stubs (3 trials), ingested: (warehouse, the printed check command)."""
    out, db = tmp_path / "res", tmp_path / "w.duckdb"
    with StubServer(base) as b, StubServer(cand) as c:
        proc = benchdb_cmd(
            "run",
            "--backend",
            "openai",
            "--model",
            "stub",
            "--ab-url",
            b.url,
            c.url,
            *hardware,
            "--repeats",
            "3",
            "--out",
            str(out),
            "--db",
            str(db),
            *QUICK,
            timeout=300,
        )
        assert proc.returncode == 0, proc.stderr
        assert b.stub.requests > 0 and c.stub.requests > 0  # each side measured its own endpoint
    (line,) = [ln for ln in proc.stdout.splitlines() if ln.startswith("check with: ")]
    command = line.removeprefix("check with: ")
    assert "--metric" not in command  # check compares the results' own headline metric, ttft_s
    benchdb_cmd("ingest", str(out), "--db", str(db), check=True)
    return db, command


@pytest.mark.slow
def test_a_url_server_on_a_described_system_is_recorded_with_it(tmp_path):
    db = tmp_path / "w.duckdb"
    with StubServer(StubConfig(ttft_ms=5, itl_ms=2)) as stub:
        for name, hw in (
            ("h200", ["--hardware-file", str(H200)]),
            ("again", ["--server-hardware", str(H200)]),
            ("mi300x", ["--hardware-file", str(MI300X)]),
        ):
            proc = benchdb_cmd(
                "run",
                "--backend",
                "openai",
                "--model",
                "stub",
                "--url",
                stub.url,
                *hw,
                "--out",
                str(tmp_path / name),
                "--tag",
                name,
                *QUICK,
            )
            assert proc.returncode == 0, proc.stderr
            benchdb_cmd("ingest", str(tmp_path / name), "--db", str(db), check=True)
    hw = db_rows(
        db,
        "SELECT device_name, kind, vendor, accelerators_per_node, nodes, cpu_model, cpu_sockets, "
        "interconnect, memory_bytes FROM hardware WHERE device_name LIKE '%H200%'",
    )
    assert hw == [
        {
            "device_name": "NVIDIA H200-SXM-141GB",
            "kind": "cuda",
            "vendor": "NVIDIA",
            "accelerators_per_node": 8,
            "nodes": 1,
            "cpu_model": "Intel Xeon Platinum 8480C",
            "cpu_sockets": 2,
            "interconnect": "NVLink 4",
            "memory_bytes": 141 * 10**9,
        }
    ]
    rows = db_rows(
        db,
        "SELECT r.device, r.accelerators, r.parallelism, r.options, r.series_id, h.device_name, "
        "ru.tags FROM results r JOIN hardware h USING (hardware_id) JOIN runs ru USING (run_id) "
        "ORDER BY ru.started_at",
    )
    assert [r["device"] for r in rows] == ["remote:8x nvidia h200-sxm-141gb"] * 2 + [
        "remote:8x amd instinct mi300x 192gb hbm3"
    ]
    for r in rows:  # how the server used its system: part of the result and of its identity
        assert r["accelerators"] == 8 and r["parallelism"] == '{"tp": 8}'
        assert '"parallelism": {"tp": 8}' in r["options"] and "server_hardware" not in r["options"]
    # a file named by --server-hardware is the same system, the same series, as --hardware-file
    assert rows[0]["series_id"] == rows[1]["series_id"] != rows[2]["series_id"]
    # two separate runs on two systems are not one series: the gate compares nothing (exit 2)
    proc = benchdb_cmd(
        "check", "--baseline", "tag:h200", "--candidate", "tag:mi300x", "--metric", "ttft_s", "--db", str(db)
    )
    assert proc.returncode == 2 and "nothing to compare" in proc.stderr


def test_a_bare_server_hardware_name_keeps_its_ids(tmp_path):
    """--server-hardware NAME plans what it always did: device remote:NAME, the name in the options."""
    from benchdb.backends import core_options as options
    from benchdb.backends.openai import backend
    from benchdb.harness.scenario import RunOptions
    from benchdb.schema import identity

    opts = options.apply(
        RunOptions(models=("m",), backend="openai", threads=4),
        {"url": "http://127.0.0.1:9", "server_hardware": "GPU-box"},
        strict=True,
    )
    (sc,) = backend.plan(opts)[0][1]
    assert sc.device == "remote:gpu-box"
    assert sc.options == {"ignore_eos": False, "server_hardware": "GPU-box", "threads": 4}
    assert identity.hardware_id(backend.hardware_of(sc.device)) == identity.hardware_id(
        {
            "kind": "remote",
            "vendor": None,
            "device_name": "gpu-box",
            "memory_bytes": None,
            "driver": None,
            "declared": True,
        }
    )
    # --parallelism alone (no file) adds the deployment to the options, and only then
    with_tp = options.apply(opts, {"parallelism": "tp=2,prefill.workers=1,dp_attention=true"})
    (sc,) = backend.plan(with_tp)[0][1]
    assert sc.options["parallelism"] == {"tp": 2, "dp_attention": True, "prefill": {"workers": 1}}


def test_bad_hardware_input_is_one_line_before_any_request(tmp_path):
    unknown = tmp_path / "typo.yaml"
    unknown.write_text("accelerator: {name: NVIDIA H200}\naccelerators_per_nod: 8\n")
    size = tmp_path / "size.yaml"
    size.write_text("accelerator: {name: NVIDIA H200, memory: lots}\n")
    tp = tmp_path / "tp.json"
    tp.write_text('{"accelerator": {"name": "NVIDIA H200"}, "parallelism": {"tp": "eight"}}')
    twin = tmp_path / "twin.yaml"
    twin.write_text("system_name: 8x H200 SXM\naccelerator: {name: NVIDIA H200-SXM-141GB}\n")
    twin2 = tmp_path / "twin2.yaml"
    twin2.write_text("system_name: 8x H200 SXM\naccelerator: {name: AMD Instinct MI300X}\n")
    out = tmp_path / "out"
    with StubServer(StubConfig(ttft_ms=1, itl_ms=1)) as stub:
        url = ["--url", stub.url]
        cases = [
            ([*url, "--hardware-file", unknown], f"{unknown}: unknown field 'accelerators_per_nod'"),
            ([*url, "--hardware-file", size], f"{size}: accelerator: memory 'lots' is not a size"),
            ([*url, "--hardware-file", tp], f"{tp}: parallelism: tp is 'eight'"),
            ([*url, "--hardware-file", tmp_path / "none.yaml"], f"--hardware-file {tmp_path / 'none.yaml'}: No such"),
            ([*url, "--server-hardware", tmp_path / "none.yml"], "no such hardware file"),
            ([*url, "--hardware-file", H200, "--server-hardware", "x"], "not both"),
            ([*url, "--server-hardware", "box", "--parallelism", "tp"], "--parallelism 'tp': write KEY=VALUE"),
            ([*url, "--hardware-file", H200, "--parallelism", "tq=2"], "unknown key 'tq'"),
            ([*url, "--server-hardware", "box", "--parallelism", "tp=8,tp=4"], "tp is given twice"),
            (
                [*url, "--server-hardware", "box", "--parallelism", "prefill.tp=2,prefill.tp=4"],
                "prefill.tp is given twice",
            ),
            (["--server", "serve {model} {port}", "--hardware-file", H200], "a --server runs here"),
            ([*url], "--hardware-file FILE or name it with --server-hardware NAME"),
            (["--ab-url", stub.url, stub.url], "describe each with --ab-hardware-file"),
            (["--ab-url", stub.url, stub.url, "--ab-hardware-file", twin, twin2], "give each its own system_name"),
            (["--ab-url", stub.url, stub.url, "--ab-hardware-file", H200, unknown], "unknown field"),
            (
                ["--ab-url", stub.url, stub.url, "--ab-hardware-file", H200, tmp_path / "none.yaml"],
                f"--ab-hardware-file {tmp_path / 'none.yaml'}: No such",
            ),
            ([*url, "--hardware-file", H200, "--ab-hardware-file", H200, MI300X], "give --ab-url too"),
        ]
        for args, text in cases:
            r = cli("run", "--backend", "openai", "--model", "stub", *args, "--out", out, *QUICK)
            lines = [ln for ln in r.output.splitlines() if ln.strip()]
            assert r.exit_code == 2 and text in r.output and len(lines) == 1, (args, r.output)
            assert "Traceback" not in r.output
        assert stub.stub.requests == 0
    assert not out.exists()


@pytest.mark.slow
def test_ab_url_of_a_slower_deployment_is_regressed(tmp_path):
    db, command = _ab_url(
        tmp_path,
        StubConfig(ttft_ms=5, itl_ms=2),
        StubConfig(ttft_ms=20, itl_ms=2),
        "--ab-hardware-file",
        str(H200),
        str(MI300X),
    )
    config = db_rows(db, "SELECT config FROM runs")[0]["config"]
    assert "8xh200.yaml" in config and "8xmi300x.yaml" in config  # each side's endpoint and hardware
    names = {r["device_name"] for r in db_rows(db, "SELECT device_name FROM hardware")}
    assert names == {"NVIDIA H200-SXM-141GB", "AMD Instinct MI300X 192GB HBM3"}
    code, output = _check(db, command)
    assert code == 1 and "1 regressed" in output, output
    assert "NVIDIA H200-SXM-141GB → AMD Instinct MI300X 192GB HBM3" in output


@pytest.mark.slow
def test_ab_url_of_two_identical_deployments_is_never_regressed(tmp_path):
    same = StubConfig(ttft_ms=5, itl_ms=2)
    db, command = _ab_url(tmp_path, same, same, "--hardware-file", str(H200))
    code, output = _check(db, command)
    assert code in (0, 3) and "0 regressed" in output and "0 improved" in output, output
