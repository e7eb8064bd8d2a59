"""What a user bench file imports (benchdb.bench): params keeps each axis's values in declaration
order, stacked decorators add axes, a bad declaration is refused with what to write, and importing
it imports nothing else."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from benchdb import bench

pytestmark = pytest.mark.core


def test_params_records_the_axes_and_stacked_decorators_add_axes():
    @bench.params(n=range(2), dtype=("f4", "f8"))
    @bench.params(batch_size=[1])
    def bench_x(n, dtype, batch_size):
        return lambda: None

    axes = getattr(bench_x, bench.PARAMS_ATTR)
    assert axes == {"n": [0, 1], "dtype": ["f4", "f8"], "batch_size": [1]}
    assert list(axes) == ["n", "dtype", "batch_size"]


@pytest.mark.parametrize(
    ("axes", "error", "says"),
    [
        ({"n": 64}, TypeError, r"bench.params\(n=...\) takes a list of values, e.g. n=\[64\]"),
        ({"s": "abc"}, TypeError, "takes a list of values"),
        ({"n": []}, ValueError, r"bench.params\(n=\[\]\) has no values"),
    ],
)
def test_a_declaration_that_is_not_a_list_of_values_is_refused(axes, error, says):
    with pytest.raises(error, match=says):
        bench.params(**axes)


def test_an_axis_declared_twice_is_refused():
    @bench.params(n=[1])
    def bench_y(n):
        return lambda: None

    with pytest.raises(ValueError, match="bench_y declares 'n' twice"):
        bench.params(n=[2])(bench_y)


def test_importing_it_imports_nothing_else():
    code = (
        "import sys, json; before = set(sys.modules); from benchdb import bench; "
        "print(json.dumps(sorted(set(sys.modules) - before)))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    new = set(json.loads(out.stdout))
    assert {m for m in new if m.startswith("benchdb")} == {"benchdb", "benchdb.bench"}
    assert {m.split(".")[0] for m in new} - set(sys.stdlib_module_names) == {"benchdb"}  # no numpy
