"""`benchdb quickstart` as a new user sees it: one real run of the smoke suite, as typed with no option
(3 interleaved processes per scenario, the warehouse and the report in the working folder, a fresh
cache), read for what it stores and writes, for the order of what it prints and for what it says the
answer does not compare, and why. One run serves every test here: it is the most expensive command."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from conftest import benchdb_cmd, db_rows

# the quickstart's answer rests on valid measurements: beside another test its results came out
# invalid (busy machine) and the "why missing" lines changed, so its tests run alone
pytestmark = [pytest.mark.slow, pytest.mark.serial]

#: The smoke suite's models (benchdb/plan/suites/smoke.yaml).
SMOKE_MODELS = ("matmul:256", "tiny:bert", "tiny:vit", "tiny:llama")
#: The smoke models that only one backend measures (matmul:256: numpy; tiny:llama: pytorch).
SINGLE_BACKEND = ("matmul:256", "tiny:llama")


@pytest.fixture(scope="module")
def quickstart(tmp_path_factory) -> tuple[Path, subprocess.CompletedProcess]:
    """The folder it ran in, and the finished command."""
    home: Path = tmp_path_factory.mktemp("quickstart")
    env = {"BENCHDB_DB": "", "BENCHDB_CACHE": str(home / "cache")}
    return home, benchdb_cmd("quickstart", cwd=home, env=env, timeout=600)


def test_quickstart_end_to_end(quickstart):
    home, proc = quickstart
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (home / "report.html").stat().st_size > 10_000
    assert "## Optimal hardware by throughput" in proc.stdout
    assert f"report: {home / 'report.html'}" in proc.stdout
    db = home / "benchdb.duckdb"
    got = {
        r["backend"]: r["n"]
        for r in db_rows(db, "select backend, count(*) AS n from results where status = 'ok' group by 1")
    }
    repeats = {r["repeats"] for r in db_rows(db, "select distinct repeats from results")}
    assert got == {"numpy": 2, "pytorch": 6, "onnxruntime": 4, "openvino": 4}
    assert repeats == {3}  # 3 interleaved processes per scenario
    # the terminal table fits (a line naming a long path is as long as the path)
    assert max(len(line) for line in proc.stdout.splitlines() if str(home) not in line) <= 120
    html = (home / "report.html").read_text(encoding="utf-8")
    # the full report the README describes: drill-downs, results behind the figures, environment, Pareto plot
    for anchor in ('id="results"', 'id="environment"', 'id="result-', "Pareto"):
        assert anchor in html, anchor
    assert "`" not in html.split("<script>")[0].split("</style>")[-1]  # no Markdown syntax in the page


def test_quickstart_prints_ingest_then_answer_then_what_was_left_out_then_next_steps(quickstart):
    _, proc = quickstart
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()

    def first(prefix: str) -> int:
        found = [i for i, ln in enumerate(lines) if ln.startswith(prefix)]
        assert found, f"no line starting {prefix!r} in:\n{proc.stdout}"
        return found[0]

    order = [first("ingested "), first("## Optimal hardware"), first("not compared in the answer"), first("report: ")]
    order.append(first("warehouse: "))
    assert order == sorted(order), proc.stdout


def _no_valid_result(db: Path) -> dict[str, set[str]]:
    """Each smoke model without a valid result -> its scenarios' outcomes as the quickstart counts
    them (status, or validity where it ran): {"2 invalid"}."""
    rows = db_rows(
        db,
        "select model_id, if(status = 'ok', validity, status) AS outcome, count(*) AS n from results "
        "where model_id not in (select model_id from results where validity = 'valid') group by all",
    )
    said: dict[str, set[str]] = {}
    for r in rows:
        said.setdefault(r["model_id"], set()).add(f"{r['n']} {r['outcome']}")
    return said


def test_quickstart_says_why_each_model_is_missing_from_the_comparison(quickstart):
    """A model that only one backend measured (tiny:llama: pytorch only; matmul:256: numpy only) is
    named with the reason; every model of the suite is in the answer or in that list.

    A model whose every result came out invalid (on a busy machine the stopping rule's interval can
    miss its target) is named with that reason instead, its outcomes counted as the warehouse holds
    them: the line the quickstart owes is decided by what was measured, not by the machine's load."""
    home, proc = quickstart
    out = proc.stdout
    start = out.index("\nnot compared in the answer, and why:\n")
    left = out[start : out.index("\nreport: ", start)]
    answer = out[out.index("## Optimal hardware") : start]
    none_valid = _no_valid_result(home / "benchdb.duckdb")
    for model, said in none_valid.items():
        (line,) = [ln for ln in left.splitlines() if ln.startswith(f"  {model}: no valid result (")]
        assert line.endswith("; the report says why)"), line
        assert set(line.split(" (", 1)[1].removesuffix("; the report says why)").split(", ")) == said, line
    alone = [m for m in SINGLE_BACKEND if m not in none_valid]
    only_one = [ln for ln in left.splitlines() if "only one backend measured" in ln]
    assert len(only_one) == (1 if alone else 0), left
    if alone:
        assert all(m in only_one[0] for m in alone), left
        assert only_one[0].rstrip().endswith("(nothing to compare)")
    # a table, or one entry per row where the table would not fit the terminal (a measured tail flag
    # or a wide margin widens a row)
    named = [m for m in SMOKE_MODELS if f"| {m} |" in answer or f"- model {m};" in answer]
    compared = [m for m in named if m not in left]
    assert sorted(compared + [m for m in SMOKE_MODELS if m in left]) == sorted(SMOKE_MODELS), out
