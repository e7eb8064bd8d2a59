"""An MLPerf run's figures beside LoadGen's summary (benchdb/interop/mlperf/measures.py): accuracy by the
checker's patterns, power from the analyser's log between power_begin and power_end, and a v6.x
result_summary.json's statistics, on the real v4.1, v5.1 and v6.1 extracts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchdb.interop.mlperf import loadgen_log as loadgen
from benchdb.interop.mlperf import measures
from benchdb.interop.writer import SourceError

pytestmark = pytest.mark.core

REPO = Path(__file__).parents[1] / "fixtures" / "interop" / "mlperf_repo"
GPTJ = REPO / "v4.1/closed/HPE/results/HPE_Cray_XD670_H100_SXM_80GBx8_TRT/gptj-99/Offline"
WHISPER = REPO / "v5.1/closed/Lenovo/results/SR680a_V3_B200SXMx8_TRT/whisper/Offline/performance/run_1"
DEEPSEEK = REPO / "v6.1/closed/NVIDIA/results/VR-NVL72_VR-288GB_aarch64x72_TRT/deepseek-r1/Offline"


def test_accuracy_is_read_by_the_checkers_patterns_for_the_benchmark():
    text = (GPTJ / "accuracy" / "accuracy.txt").read_text()
    got = dict(measures.parse_accuracy_txt(text, "gptj-99"))
    assert list(got) == ["ROUGE1", "ROUGE2", "ROUGEL", "ROUGELSUM", "GEN_LEN"]
    assert got["ROUGE1"] == 43.0343 and got["GEN_LEN"] == 4102194.0
    assert measures.parse_accuracy_txt(text, "resnet") == []  # another benchmark's metric is not there
    assert measures.parse_accuracy_string("ROUGE1: 42.9 ROUGE2: 20.1 ROUGEL: 30.0 GEN_LEN: 4000000", "gptj-99") == [
        ("ROUGE1", 42.9),
        ("ROUGE2", 20.1),
        ("ROUGEL", 30.0),
        ("GEN_LEN", 4000000.0),
    ]


def test_power_is_the_mean_of_the_analysers_samples_between_begin_and_end(tmp_path):
    log = loadgen.read_detail(WHISPER / "mlperf_log_detail.txt")
    watts = []
    for line in (WHISPER / "spl.txt").read_text().splitlines():
        cells = line.split(",")
        if cells[0] == "Time" and "15:30:43.020" < cells[1][11:] < "15:41:06.698":  # power_begin, power_end
            watts.append(float(cells[3]))
    assert measures.power(WHISPER, log) == pytest.approx(sum(watts) / len(watts))
    assert measures.power(tmp_path, log) is None  # no spl.txt: no power
    (tmp_path / "spl.txt").write_text("Time,07-25-2025 09:00:00.000,Watts,100.0\n")
    with pytest.raises(SourceError, match="spl.txt has no power samples between power_begin and power_end"):
        measures.power(tmp_path, log)


def test_a_result_summary_json_gives_its_figures_in_seconds_and_refuses_a_negative_one(tmp_path):
    summary = DEEPSEEK / "performance" / "result_summary.json"
    doc, stats = measures.read_endpoints(summary)
    got = {(m, s): v for m, _, s, v in stats}
    assert got[("latency_s", "median")] == pytest.approx(doc["latency"]["median"] * 1e-9)  # ns in the file
    assert got[("output_tokens", "mean")] == doc["output_sequence_lengths"]["avg"]
    assert not any(m == "ttft_s" for m, *_ in stats)  # an offline run's empty TTFT block gives none
    assert got[("requests", "value")] == doc["n_samples_completed"]
    doc["latency"]["min"] = -5
    bad = tmp_path / "result_summary.json"
    bad.write_text(json.dumps(doc))
    with pytest.raises(SourceError, match="latency.min is -5: negative"):
        measures.read_endpoints(bad)
    bad.write_text("{}")
    with pytest.raises(SourceError, match="not an MLPerf result_summary.json"):
        measures.read_endpoints(bad)


def test_an_endpoints_runs_config_yaml_gives_the_settings_the_checker_reads(tmp_path):
    assert measures.read_endpoints_config(tmp_path) == {}
    (tmp_path / "config.yaml").write_text((REPO / "endpoints_config.yaml").read_text())
    got = measures.read_endpoints_config(tmp_path)
    assert got["type"] == "offline" and got["load_pattern"] == "max_throughput"
    assert got["min_duration_ms"] == 600000 and set(got) <= set(measures.ENDPOINTS_CONFIG)
