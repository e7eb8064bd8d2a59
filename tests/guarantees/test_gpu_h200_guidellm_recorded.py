"""benchdb's client beside GuideLLM on one GPU server (benchmarks/gpu/guidellm.sh),
replayed with no GPU: ``transformers serve --continuous-batching`` of a ~250 M-parameter LLaMA on an
NVIDIA H200, measured by ``benchdb run --backend openai --url`` and then by GuideLLM 0.8.1 at
concurrency 4 and 16. The contract files are ingested as they came back and the serving view's
medians are set beside GuideLLM's.

The two tools ran one after the other on a continuously batching server, whose own spread between
two runs of one client reached 2x on an H100 (tests/guarantees/test_gpu_h100_recorded.py): what agrees here is
the order of magnitude and the TPOT within a quarter, not a 2 % figure (the stub, whose timeline is
known, is where benchdb's own accuracy is tested).
"""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest
from conftest import ingest_fixture

pytestmark = pytest.mark.core

FIXTURE = Path(__file__).parents[1] / "fixtures" / "gpu" / "h200_guidellm"


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory) -> Path:
    return ingest_fixture(FIXTURE, tmp_path_factory.mktemp("h200g") / "h200.duckdb", 2)


def test_benchdb_and_guidellm_read_the_same_server_alike(warehouse):
    with duckdb.connect(str(warehouse), read_only=True) as con:
        rows = con.execute("""SELECT concurrency, hardware_name, ttft_p50_s, tpot_p50_s FROM serving_points
                              ORDER BY concurrency""").fetchall()
    assert [(c, hw) for c, hw, *_ in rows] == [(4, "h200-box"), (16, "h200-box")]
    peer = json.loads((FIXTURE / "guidellm.json").read_text())["points"]
    for c, _, ttft, tpot in rows:
        theirs = peer[str(c)]
        assert theirs["requests"] >= 5 * c
        assert abs(ttft * 1e3 / theirs["time_to_first_token_ms"] - 1) < 0.3
        assert abs(tpot * 1e3 / theirs["time_per_output_token_ms"] - 1) < 0.25
    # more concurrency: a later first token for both tools
    assert rows[1][2] > rows[0][2] and peer["16"]["time_to_first_token_ms"] > peer["4"]["time_to_first_token_ms"]
