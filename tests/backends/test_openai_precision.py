"""A serving result's precision is the server's: a bf16 LLaMA served by `transformers serve` is
recorded as bf16, never as the run's default fp32; a precision the server cannot give is refused."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from conftest import benchdb_cmd, need_module

from benchdb.backends.openai import precision
from benchdb.errors import BenchdbError
from benchdb.schema import contract

STUB = f"{sys.executable} -m benchdb.testing.stub --port {{port}} --model {{model}} --ttft-ms 2 --itl-ms 1"
QUICK = [
    "--warmup",
    "1",
    "--min-iters",
    "4",
    "--min-time",
    "0.2",
    "--max-time",
    "2",
    "--target-ci",
    "50%",
    "--max-background-cpu",
    "100%",
    "--seq-lens",
    "8",
    "--gen-tokens",
    "4",
]


def _folder(tmp_path: Path, dtype: str, key: str = "dtype") -> Path:
    folder = tmp_path / f"model-{dtype}"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({"model_type": "llama", key: dtype}))
    return folder


@pytest.mark.core
def test_the_precision_comes_from_the_command_then_the_config(tmp_path):
    bf16 = str(_folder(tmp_path, "bfloat16"))
    old = str(_folder(tmp_path, "float16", key="torch_dtype"))
    assert precision.from_model(bf16) == "bf16"
    assert precision.from_model(old) == "fp16"
    assert precision.from_model(str(tmp_path / "missing")) is None
    assert precision.from_command("vllm serve {model} --dtype half --port {port}") == "fp16"
    assert precision.from_command("sglang --dtype=bfloat16 {model}") == "bf16"
    assert precision.from_command("transformers serve {model} --dtype auto") is None
    # the command's flag wins over the weights; the default precision gives way; a different ask is refused
    assert precision.served("x serve {model} --dtype float32", bf16, ("fp32",), ("fp32",)) == ("fp32",)
    assert precision.served("x serve {model}", bf16, ("fp32",), ("fp32",)) == ("bf16",)
    assert precision.served("x serve {model}", "hub/model", ("fp16",), ("fp32",)) == ("fp16",)
    with pytest.raises(BenchdbError, match="runs .* in bf16"):
        precision.served("x serve {model}", bf16, ("fp16",), ("fp32",))


@pytest.mark.core
def test_a_bf16_model_served_is_recorded_as_bf16(tmp_path):
    need_module("httpx", "benchdb[serving]")
    model = _folder(tmp_path, "bfloat16")
    out = tmp_path / "res"
    proc = benchdb_cmd(
        "run",
        "--backend",
        "openai",
        "--model",
        str(model),
        "--server",
        STUB,
        "--concurrency",
        "1",
        "--out",
        str(out),
        *QUICK,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    [path] = sorted(out.rglob("*.parquet"))
    assert contract.read_footer(path).metadata["scenario"]["precision"] == "bf16"

    refused = benchdb_cmd(
        "run",
        "--backend",
        "openai",
        "--model",
        str(model),
        "--server",
        STUB,
        "--precision",
        "fp16",
        "--out",
        str(tmp_path / "no"),
        *QUICK,
        timeout=300,
    )
    assert refused.returncode != 0
    assert "the server runs" in refused.stderr and "Traceback" not in refused.stderr
    assert not (tmp_path / "no").exists() or not any((tmp_path / "no").rglob("*.parquet"))
