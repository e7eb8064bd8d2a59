"""The sides of an A/B run before anything is measured (benchdb/ab/sides.py): each deployment's
endpoint and system under ``--ab-url``, and the warning for an ``--ab-env`` variable that splits the
sides into different series."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchdb.ab.process import Group
from benchdb.ab.sides import deployments, warn_split
from benchdb.backends.core_options import backend_option
from benchdb.errors import BenchdbError
from benchdb.harness.scenario import RunOptions, Scenario

pytestmark = pytest.mark.core

SYSTEMS = Path(__file__).parents[1] / "fixtures" / "systems"
H200, MI300X = SYSTEMS / "8xh200.yaml", SYSTEMS / "8xmi300x.yaml"
URLS = ["http://127.0.0.1:8001", "http://127.0.0.1:8002"]


def _group(base_env: str, cand_env: str) -> Group:
    def sc(env: str) -> Scenario:
        return Scenario("b::f", "userbench", "cpu", "eager", "na", 1, "", {"env": env}, {})

    return Group(RunOptions("userbench", ("b::f",)), "b::f", {}, {"base": [sc(base_env)], "cand": [sc(cand_env)]})


def test_a_declared_variable_set_on_one_side_is_warned_about_and_others_are_not():
    said: list[str] = []
    groups = [_group('{"SCALE":null}', '{"SCALE":"2"}'), _group('{"OTHER":null}', '{"OTHER":null}')]
    warn_split(groups, {"base": {}, "cand": {"SCALE": "2", "UNDECLARED": "1"}}, said.append)
    (line,) = said
    assert line.startswith("warning: --ab-env SCALE: the bench declares it in ENV")
    assert "UNDECLARED" not in line and "`benchdb check` will find nothing to compare" in line
    said.clear()
    warn_split(groups, {"base": {"UNDECLARED": "0"}, "cand": {"UNDECLARED": "1"}}, said.append)
    assert said == []  # a variable no bench declares keeps the sides one series


def test_each_side_measures_its_endpoint_on_the_system_its_file_describes():
    runs = [RunOptions("openai", ("m",)), RunOptions("openai", ("n",))]
    got = deployments(URLS, [str(H200), str(MI300X)], runs)
    for side, url, file in (("base", URLS[0], H200), ("cand", URLS[1], MI300X)):
        assert [o.models for o in got[side]] == [("m",), ("n",)]
        assert {backend_option(o, "url") for o in got[side]} == {url}
        assert {backend_option(o, "hardware_file") for o in got[side]} == {str(file)}


@pytest.mark.parametrize(
    ("runs", "params", "says"),
    [
        ([RunOptions("numpy", ("m",))], {"ab_url": URLS}, "--ab-url compares two OpenAI-compatible endpoints"),
        ([RunOptions("openai", ("m",))], {"ab_url": ["ftp://x", URLS[1]]}, "--ab-url 'ftp://x' is not an http(s) URL"),
        (
            [RunOptions("openai", ("m",), backend_options={"url": URLS[0]})],
            {"ab_url": URLS},
            "--ab-url gives both endpoints; leave out --url",
        ),
        ([RunOptions("openai", ("m",))], {"ab_url": URLS}, "describe each with --ab-hardware-file BASE.yaml CAND.yaml"),
        (
            [RunOptions("openai", ("m",), backend_options={"hardware_file": str(H200)})],
            {"ab_url": URLS, "ab_hardware_file": [str(H200), str(MI300X)]},
            "leave out --hardware-file and --server-hardware",
        ),
    ],
)
def test_what_cannot_be_two_deployments_is_refused(runs, params, says):
    with pytest.raises(BenchdbError) as caught:
        deployments(params["ab_url"], params.get("ab_hardware_file"), runs)
    assert says in str(caught.value)


def test_two_systems_with_one_name_are_refused(tmp_path):
    twin = tmp_path / "twin.yaml"
    twin.write_text("system_name: 8x H200 SXM\naccelerator: {name: NVIDIA H200-SXM-141GB}\n")
    twin2 = tmp_path / "twin2.yaml"
    twin2.write_text("system_name: 8x H200 SXM\naccelerator: {name: AMD Instinct MI300X}\n")
    with pytest.raises(BenchdbError, match="describe two systems both called remote:8x h200 sxm"):
        deployments(URLS, [str(twin), str(twin2)], [RunOptions("openai", ("m",))])
    same = deployments(URLS, [str(twin), str(twin)], [RunOptions("openai", ("m",))])
    assert [backend_option(same[s][0], "hardware_file") for s in ("base", "cand")] == [str(twin)] * 2
