"""benchdb.backends.openai.server_hardware: the hardware of a --url server. A hardware file (given
with --hardware-file or to --server-hardware) is read with how the server uses the system; the
device a result is labelled with says where it ran; --parallelism text becomes a checked record,
or one line saying what to write."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchdb.backends.openai.server_hardware import parse_parallelism, server_system, system_device
from benchdb.errors import BenchdbError
from benchdb.harness.scenario import RunOptions

pytestmark = pytest.mark.core

H200 = Path(__file__).parents[1] / "fixtures" / "systems" / "8xh200.yaml"


def _opts(**backend_options) -> RunOptions:
    return RunOptions("openai", ("m",), backend_options=backend_options)


def test_the_device_says_where_the_server_ran():
    assert system_device({"system_name": "8x H200  SXM"}) == "remote:8x h200 sxm"
    assert system_device({"device_name": "NVIDIA H200", "accelerators_per_node": 8}) == "remote:8x nvidia h200"
    assert system_device({"device_name": "GB200", "accelerators_per_node": 4, "nodes": 18}) == "remote:18x4x gb200"
    assert system_device({"device_name": "MI300X", "accelerators_per_node": 1}) == "remote:mi300x"
    assert system_device({}) == "remote:unknown"


def test_a_hardware_file_is_read_with_how_the_server_uses_the_system(tmp_path):
    for opts in (_opts(hardware_file=str(H200)), _opts(server_hardware=str(H200))):
        system, usage = server_system(opts)
        assert system["accelerators_per_node"] == 8 and system["device_name"] == "NVIDIA H200-SXM-141GB"
        assert usage == {"accelerators": 8, "parallelism": {"tp": 8}}
    assert server_system(_opts(server_hardware="GPU-box")) is None  # a name: no file to read
    assert server_system(_opts()) is None


def test_bad_hardware_input_is_one_line_naming_the_flag(tmp_path):
    typo = tmp_path / "typo.yaml"
    typo.write_text("accelerator: {name: NVIDIA H200}\naccelerators_per_nod: 8\n")
    cases = [
        (_opts(hardware_file=str(typo)), f"--hardware-file {typo}: unknown field 'accelerators_per_nod'"),
        (_opts(server_hardware=str(typo)), f"--server-hardware {typo}: unknown field"),
        (_opts(server_hardware=str(tmp_path / "none.yml")), f"--server-hardware {tmp_path / 'none.yml'}: no such"),
        (_opts(hardware_file=str(H200), server_hardware="x"), "give --hardware-file FILE or --server-hardware NAME"),
    ]
    for opts, says in cases:
        with pytest.raises(BenchdbError) as err:
            server_system(opts)
        assert str(err.value).startswith(says), str(err.value)
    with pytest.raises(BenchdbError, match=r"^--ab-hardware-file "):
        server_system(_opts(hardware_file=str(typo)), flag="--ab-hardware-file")


def test_parallelism_text_becomes_a_checked_record():
    assert parse_parallelism("tp=8,ep=8") == {"tp": 8, "ep": 8}
    assert parse_parallelism("disaggregated=true, prefill.workers=2, Prefill.TP=4, dp_attention=false") == {
        "disaggregated": True,
        "prefill": {"workers": 2, "tp": 4},
        "dp_attention": False,
    }
    for text, says in (
        ("tp", "--parallelism 'tp': write KEY=VALUE pairs, e.g. tp=8,ep=8 or prefill.tp=4 (found 'tp')"),
        (".tp=2", "write KEY=VALUE pairs"),
        ("tp=8,tp=4", "--parallelism 'tp=8,tp=4': tp is given twice; give each key once"),
        ("prefill.tp=2,prefill.tp=4", "prefill.tp is given twice"),
        ("tq=2", "unknown key 'tq'"),
        ("tp=eight", "--parallelism tp=eight: tp is 'eight'; write a whole number >= 1"),
    ):
        with pytest.raises(BenchdbError) as err:
            parse_parallelism(text)
        assert says in str(err.value), (text, str(err.value))
