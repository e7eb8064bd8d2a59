"""Time to a result: a command that imported torch skips the interpreter's teardown. Real processes,
real numpy / PyTorch runs. (Measuring children forked from a server that imported the backend ahead
of the work: tests/harness/test_isolation.py.)"""

from __future__ import annotations

import re

import pyarrow.parquet as pq
import pytest
from conftest import benchdb_cmd


@pytest.mark.slow  # needs torch: not a core test (the floors have no torch)
def test_run_with_torch_exits_fast_with_its_file_and_exit_code(tmp_path):
    out = tmp_path / "out"
    proc = benchdb_cmd(
        "run",
        "--backend",
        "pytorch",
        "--model",
        "tiny:bert",
        "--seq-lens",
        "8",
        "--threads",
        "1",
        "--warmup",
        "1",
        "--min-iters",
        "5",
        "--min-time",
        "0.05",
        "--max-time",
        "0.3",
        "--out",
        str(out),
    )
    assert proc.returncode == 0, proc.stderr
    assert "leaked" not in proc.stderr and "Traceback" not in proc.stderr  # atexit clean-up ran
    assert re.search(r"run \S+: 1 file in ", proc.stdout)  # the output was flushed
    (path,) = list(out.rglob("*.parquet"))
    assert pq.read_table(path).num_rows >= 5  # the file is whole
    bad = benchdb_cmd(
        "run", "--backend", "pytorch", "--model", "tiny:bert", "--device", "cuda", "--out", str(out)
    )  # refused after torch was imported: its exit code kept
    assert bad.returncode == 2, bad.stderr
    assert (
        bad.stderr.startswith("benchdb: error: device cuda is not available")
        and len(bad.stderr.strip().splitlines()) == 1
    )


def test_a_saved_model_run_leaves_no_semaphore_and_no_loading_bar(tmp_path):
    """A local folder loads with from_pretrained, whose "Loading weights" bar took a process-shared
    lock in the measuring child: the run printed the bar and, at its end, the resource tracker's
    "1 leaked semaphore" warning. The fork server ends without tearing torch down, and the run's
    output pipes close with it."""
    import transformers

    folder = tmp_path / "bert"
    transformers.BertModel(
        transformers.BertConfig(hidden_size=32, num_hidden_layers=1, num_attention_heads=2, intermediate_size=64)
    ).save_pretrained(folder)
    out = tmp_path / "out"
    proc = benchdb_cmd(
        "run",
        "--backend",
        "pytorch",
        "--model",
        str(folder),
        "--seq-len",
        "8",
        "--threads",
        "1",
        "--warmup",
        "1",
        "--min-iters",
        "5",
        "--min-time",
        "0.05",
        "--max-time",
        "0.3",
        "--out",
        str(out),
    )
    assert proc.returncode == 0, proc.stderr
    assert "leaked" not in proc.stderr and "Loading weights" not in proc.stderr, proc.stderr
    assert len(list(out.rglob("*.parquet"))) == 1


def test_the_planning_process_records_torch_versions_without_importing_torch():
    """The run's software record comes from torch's own version.py: the planning process of a CPU
    run never imports torch (~1 s beside the fork server's import); the values are torch's."""
    import json
    import subprocess
    import sys

    code = (
        "import json, sys; from benchdb.backends.pytorch import backend as b; b.check_device('cpu'); "
        "print(json.dumps([b.software(), 'torch' in sys.modules]))"
    )
    software, imported = json.loads(
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    )
    assert imported is False
    import torch

    assert (software["torch"], software["cuda"], software["hip"]) == (
        torch.__version__,
        torch.version.cuda,
        getattr(torch.version, "hip", None),
    )
