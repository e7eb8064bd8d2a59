"""The PyTorch backend's kernelized modes (--mode kernels, kernels+compile) with the real kernels
library and a local kernel repository made here: a layer for the tiny LLaMA's RMSNorm that computes
the same RMSNorm and appends to a file each time it runs (the proof that it replaced the layer)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import benchdb_cmd, cli, db_rows, import_and_ingest, kernel_repo

from benchdb.backends.pytorch import hubkernels
from benchdb.errors import BenchdbError

QUICK = [
    "--batch-sizes",
    "1",
    "--seq-lens",
    "16",
    "--min-time",
    "0.05",
    "--max-time",
    "1",
    "--warmup",
    "1",
    "--min-iters",
    "5",
    "--target-ci",
    "0.5",
    "--max-background-cpu",
    "100%",
    "--gen-tokens",
    "4",
]


def _ingest(out: Path, db: Path) -> None:
    r = cli("ingest", out, "--db", db)
    assert r.exit_code == 0, r.output


def scenarios(db) -> dict[tuple[str, str], dict]:
    return {
        (r["model_id"], r["mode"]): r
        for r in db_rows(db, "SELECT model_id, mode, status, error, options, options_id, series_id, extra FROM results")
    }


def metrics(db, model_id: str, mode: str) -> dict[str, float]:
    return {
        r["metric"]: r["median"]
        for r in db_rows(
            db,
            "SELECT m.metric, m.median FROM results r JOIN result_metrics m USING (result_id) "
            "WHERE r.model_id = ? AND r.mode = ?",
            [model_id, mode],
        )
    }


@pytest.fixture(scope="module")
def kernelized(tmp_path_factory):
    """tiny:llama eager and kernels, tiny:bert kernels (nothing to replace), in measuring child
    processes (the run itself in this process: the kernel is loaded in the children only)."""
    tmp = tmp_path_factory.mktemp("kernels")
    calls = tmp / "calls"
    repo = kernel_repo(tmp / "repo", calls)
    out, db = tmp / "out", tmp / "w.duckdb"
    r = cli(
        "run",
        "--backend",
        "pytorch",
        "--model",
        "tiny:llama",
        "--model",
        "tiny:bert",
        "--mode",
        "eager,kernels",
        "--kernels",
        f"LlamaRMSNorm={repo}:RMSNorm",
        "--out",
        out,
        *QUICK,
    )
    assert r.exit_code == 0, r.output + repr(r.exception)
    _ingest(out, db)
    return repo, calls, db


@pytest.mark.slow
def test_kernels_mode_replaces_the_layer_and_the_replacement_ran(kernelized):
    repo, calls, db = kernelized
    got = scenarios(db)
    row = got[("tiny:llama", "kernels")]
    assert row["status"] == "ok", row["error"]
    applied = json.loads(row["extra"])["kernels"]
    # 2 decoder layers x (input, post-attention) norms + the final norm
    assert applied["replaced"] == 5
    (layer,) = applied["layers"]
    assert layer["class"] == "LlamaRMSNorm" and layer["modules"] == 5
    assert layer["source"] == str(repo.resolve()) and layer["hash"] == hubkernels.content_hash(repo)
    assert layer["kernel"].endswith(".layers.RMSNorm.forward") and layer["kernel_name"] == "bench-rmsnorm"
    assert applied["library"] == hubkernels.library().__version__
    # every timed forward ran the kernel 5 times; the eager scenario never did
    timed = db_rows(
        db,
        "SELECT m.n FROM results r JOIN result_metrics m USING (result_id) "
        "WHERE r.mode = 'kernels' AND m.metric = 'latency_s'",
    )[0]["n"]
    assert calls.read_text().count("x") >= 5 * timed


@pytest.mark.slow
def test_kernels_mode_records_agreement_with_eager_and_the_mapping_in_its_identity(kernelized):
    repo, _, db = kernelized
    got = scenarios(db)
    kern, eager = got[("tiny:llama", "kernels")], got[("tiny:llama", "eager")]
    m = metrics(db, "tiny:llama", "kernels")
    assert m["max_abs_err"] <= 1e-5 and m["cosine_similarity"] == pytest.approx(1.0, abs=1e-6)
    assert m["token_agreement"] == 1.0
    assert {"ttft_s", "tpot_s", "generate_s"} <= set(m)  # generation measured, kernelized
    assert "max_abs_err" not in metrics(db, "tiny:llama", "eager")
    options = json.loads(kern["options"])
    assert options["kernels"] == f"LlamaRMSNorm=local:{hubkernels.content_hash(repo)}:RMSNorm"
    assert "kernels" not in json.loads(eager["options"])
    assert kern["series_id"] != eager["series_id"]


@pytest.mark.slow
def test_a_model_with_nothing_to_replace_is_unsupported_with_why(kernelized):
    _, _, db = kernelized
    bert = scenarios(db)[("tiny:bert", "kernels")]
    assert bert["status"] == "unsupported"
    assert bert["error"] == "tiny:bert has no layer LlamaRMSNorm"


@pytest.mark.slow
def test_kernels_with_compile_on_top_runs_the_kernel(tmp_path):
    calls = tmp_path / "calls"
    repo = kernel_repo(tmp_path / "repo", calls)
    out, db = tmp_path / "out", tmp_path / "w.duckdb"
    r = cli(
        "run",
        "--backend",
        "pytorch",
        "--model",
        "tiny:llama",
        "--mode",
        "kernels+compile",
        "--kernels",
        f"LlamaRMSNorm={repo}:RMSNorm",
        "--out",
        out,
        *QUICK,
    )
    assert r.exit_code == 0, r.output + repr(r.exception)
    _ingest(out, db)
    row = scenarios(db)[("tiny:llama", "kernels+compile")]
    assert row["status"] == "ok", row["error"]
    assert json.loads(row["options"])["compile_mode"] == "default"
    assert json.loads(row["extra"])["kernels"]["replaced"] == 5
    assert calls.read_text().count("x") > 0
    assert metrics(db, "tiny:llama", "kernels+compile")["cosine_similarity"] == pytest.approx(1.0, abs=1e-6)


@pytest.mark.slow
def test_a_kernel_without_compile_support_is_unsupported_under_compile(tmp_path):
    calls = tmp_path / "calls"
    repo = kernel_repo(tmp_path / "repo", calls, compiles=False)
    out = tmp_path / "out"
    r = cli(
        "run",
        "--backend",
        "pytorch",
        "--model",
        "tiny:llama",
        "--mode",
        "kernels+compile",
        "--kernels",
        f"LlamaRMSNorm={repo}:RMSNorm",
        "--out",
        out,
        *QUICK,
    )
    assert r.exit_code == 3, r.output + repr(r.exception)
    _ingest(out, tmp_path / "w.duckdb")
    row = scenarios(tmp_path / "w.duckdb")[("tiny:llama", "kernels+compile")]
    assert row["status"] == "unsupported"
    assert row["error"] == (
        "the kernels for LlamaRMSNorm do not declare torch.compile support (can_torch_compile); use --mode kernels"
    )
    assert not calls.exists()


@pytest.mark.slow
def test_a_hub_kernel_not_in_the_cache_is_unsupported_with_the_fetch_command(tmp_path):
    out = tmp_path / "out"
    env = {"HF_HOME": str(tmp_path / "hf"), "HF_HUB_CACHE": str(tmp_path / "hf" / "hub")}
    proc = benchdb_cmd(
        "run",
        "--backend",
        "pytorch",
        "--model",
        "tiny:llama",
        "--mode",
        "kernels",
        "--kernels",
        "LlamaRMSNorm=kernels-community/liger-kernels:LigerRMSNorm@3",
        "--out",
        str(out),
        # measured in this process: the Hugging Face cache its environment names is read by the
        # library at import, so the run gets a process of its own, but no measuring child as well
        "--no-isolation",
        *QUICK,
        env=env,
    )
    assert proc.returncode == 3  # nothing succeeded; the file records why
    _ingest(out, tmp_path / "w.duckdb")
    row = scenarios(tmp_path / "w.duckdb")[("tiny:llama", "kernels")]
    assert row["status"] == "unsupported"
    assert "not available in the local cache" in row["error"]
    assert row["error"].endswith(
        'fetch it first with: python -c "import kernels; kernels.get_kernel('
        "'kernels-community/liger-kernels', version=3)\""
    )


@pytest.mark.slow
def test_default_mapping_with_nothing_to_replace_is_unsupported(tmp_path):
    r = cli(
        "run",
        "--backend",
        "pytorch",
        "--model",
        "tiny:bert",
        "--mode",
        "kernels",
        "--no-isolation",
        "--out",
        tmp_path / "out",
        *QUICK,
    )
    assert r.exit_code == 3  # its only scenario did not succeed
    assert "unsupported" in r.stdout
    files = list((tmp_path / "out").rglob("*.parquet"))
    assert len(files) == 1


def test_a_mapping_naming_a_layer_the_model_lacks_is_one_line_exit_2(tmp_path):
    repo = kernel_repo(tmp_path / "repo", tmp_path / "calls")
    r = cli(
        "run",
        "--backend",
        "pytorch",
        "--model",
        "tiny:llama",
        "--mode",
        "kernels",
        "--kernels",
        f"LlamaLayerNorm={repo}:RMSNorm",
        "--out",
        tmp_path / "out",
    )
    assert r.exit_code == 2
    assert r.stderr.startswith("benchdb: error: --kernels: model tiny:llama has no layer 'LlamaLayerNorm'; ")
    assert "LlamaRMSNorm" in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "out").exists()
    r = cli(
        "run",
        "--backend",
        "pytorch",
        "--model",
        "tiny:llama",
        "--kernels",
        f"LlamaRMSNorm={repo}:RMSNorm",
        "--out",
        tmp_path / "out",
    )
    assert r.exit_code == 2 and "--kernels applies to --mode kernels" in r.stderr


@pytest.mark.slow
def test_without_the_kernels_library_the_mode_is_unavailable_with_the_install_hint(tmp_path):
    # an installed package that fails to import as a missing one does: what `import kernels` meets
    # in an environment without it (the real library stays installed for the other tests)
    shadow = tmp_path / "shadow" / "kernels"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text("raise ModuleNotFoundError(\"No module named 'kernels'\", name='kernels')\n")
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "shadow")}
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "benchdb",
            "run",
            "--backend",
            "pytorch",
            "--model",
            "tiny:llama",
            "--mode",
            "kernels",
            "--out",
            str(tmp_path / "o"),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert proc.returncode == 2
    assert proc.stderr.strip() == (
        "benchdb: error: the kernelized modes are unavailable: the kernels library is "
        "not installed (No module named 'kernels'); install it with: "
        "pip install 'benchdb[kernels]'"
    )
    assert not (tmp_path / "o").exists()


@pytest.mark.core
def test_mapping_forms_and_their_identity(tmp_path):
    repo = kernel_repo(tmp_path / "repo", tmp_path / "calls")
    hub = hubkernels.parse("RMSNorm=kernels-community/liger-kernels:LigerRMSNorm@3")
    assert hub is not None and hub[0].version == 3
    assert hubkernels.identity(hub) == "RMSNorm=kernels-community/liger-kernels:LigerRMSNorm@v3"
    assert hubkernels.parse("RMSNorm=org/k:L")[0].version == 1  # transformers' default
    assert hubkernels.parse("RMSNorm=org/k:L@abc123")[0].revision == "abc123"
    local = hubkernels.parse(f"LlamaRMSNorm={repo}:RMSNorm")
    assert local is not None and local[0].local and local[0].source == str(repo.resolve())
    lines = tmp_path / "map.txt"
    lines.write_text(f"# kernels\nLlamaRMSNorm={repo}:RMSNorm\nMLP=org/k:FastMLP@2\n")
    yaml_file = tmp_path / "map.yaml"
    yaml_file.write_text(f"LlamaRMSNorm: {repo}:RMSNorm\nMLP: [org/k:FastMLP, {{version: 2}}]\n")
    assert hubkernels.identity(hubkernels.parse(str(lines))) == hubkernels.identity(hubkernels.parse(str(yaml_file)))
    assert hubkernels.identity(None) == "default"
    # another kernel (its files) is another identity, so another series
    other = kernel_repo(tmp_path / "other", tmp_path / "calls", note="# a different kernel\n")
    assert hubkernels.identity(hubkernels.parse(f"LlamaRMSNorm={other}:RMSNorm")) != hubkernels.identity(local)


@pytest.mark.core
@pytest.mark.parametrize(
    "text, says",
    [
        ("RMSNorm", "is not Layer=org/repo:LayerName"),
        ("RMSNorm=org/k", "names no kernel layer"),
        ("RMSNorm=/no/such/repo:L", "local kernel repository /no/such/repo does not exist"),
        ("RMSNorm=not a repo:L", "is neither a Hub repository"),
        ("A=org/k:L,A=org/k:M", "layer A is mapped twice"),
    ],
)
def test_bad_mappings_are_refused_naming_the_problem(text, says):
    with pytest.raises(BenchdbError, match=says.replace("[", r"\[")):
        hubkernels.parse(text)


@pytest.mark.core
def test_transformers_v2_kernelized_variant_maps_onto_the_kernels_modes(tmp_path):
    base = {"measures": {"e2e_latency": [1.0, 1.1, 0.9]}, "metadata": {"model_id": "org/m"}}
    doc = {
        "a": {
            **base,
            "config": {
                "name": "w1_i3-unmonitored-b1_s8_n4-sdpa-uncompiled-kernelized",
                "kernelize": True,
                "batch_size": 1,
            },
        },
        "b": {**base, "config": {"kernelize": True, "compile_mode": "default", "batch_size": 2}},
        "c": {**base, "config": {"kernelize": False, "batch_size": 4}},
    }
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "org_m_benchmark_20260101_000000.json").write_text(json.dumps(doc))
    db = import_and_ingest(tmp_path, "transformers", tmp_path / "src")
    got = {
        r["batch_size"]: (r["mode"], json.loads(r["options"]).get("kernels"))
        for r in db_rows(db, "SELECT batch_size, mode, options FROM results")
    }
    assert got == {1: ("kernels", "default"), 2: ("kernels+compile", "default"), 4: ("eager", None)}
