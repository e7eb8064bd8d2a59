"""benchdb.backends.openai.client_worker: a client worker's side of a shared load point. Its wire
format gives back what it was given, and a real worker process (driven here as the coordinator
drives it, against a stub server) says it is ready, opens its window at ``go``, streams its
samples, stops issuing at ``stop`` and sends its records. `benchdb run --client-workers` end to end
is tests/backends/test_openai.py."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest
from conftest import child, need_module

from benchdb.backends.openai.client_worker import record_from_json, record_to_json, spec_from_json, spec_to_json
from benchdb.backends.openai.loadgen import LoadSpec
from benchdb.harness.timing import StopRule
from benchdb.schema.serving_metrics import RequestRecord
from benchdb.testing.stub import StubConfig, StubServer

need_module("httpx", "benchdb[serving]")


def _spec(url: str) -> LoadSpec:
    rule = StopRule(warmup_iters=0, min_iters=1, min_time_s=0.0, max_time_s=30.0, max_iters=10_000, target_ci=0.5)
    return LoadSpec(base_url=url, model="stub", prompts=["a b c"], max_tokens=3, concurrency=2, rule=rule)


@pytest.mark.core
def test_the_wire_format_gives_back_what_it_was_given():
    spec = _spec("http://127.0.0.1:9")
    again = spec_from_json(json.loads(json.dumps(spec_to_json(spec))))
    assert again == spec and isinstance(again.rule, StopRule)
    rec = RequestRecord(
        index=3, sent=1.5, first_byte=1.6, chunks=[(1.7, 1), (1.8, 2)], end=1.9, output_tokens=3, session=2, turn=1
    )
    assert record_from_json(json.loads(json.dumps(record_to_json(rec)))) == rec


def test_a_worker_process_runs_its_share_between_go_and_stop():
    with StubServer(StubConfig(ttft_ms=1, itl_ms=1)) as stub:
        args = [sys.executable, "-m", "benchdb.backends.openai.client_worker"]
        with child(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True) as proc:

            def tell(msg: dict) -> None:
                proc.stdin.write(json.dumps(msg) + "\n")
                proc.stdin.flush()

            tell({"spec": spec_to_json(_spec(stub.url)), "offset": 0.0})
            assert json.loads(proc.stdout.readline()) == {"ready": True}
            tell({"go": time.perf_counter()})
            samples = json.loads(proc.stdout.readline())  # batches of TTFTs and ITLs while it runs
            assert samples["s"] and all(t > 0 for t in samples["s"]) and "i" in samples
            tell({"stop": "coordinator"})
            lines = [json.loads(line) for line in proc.stdout]
        assert proc.returncode == 0
    result = lines[-1]["result"]
    records = [record_from_json(r) for r in result["records"]]
    assert result["stop_reason"] == "coordinator" and records
    assert all(r.error is None and r.output_tokens == 3 for r in records if r.end is not None)
    assert result["window_end"] >= result["window_start"] > 0
