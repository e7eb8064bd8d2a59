"""A busy machine is recorded, not fatal.

Rule: other processes above ``max_background_cpu`` before a scenario make it invalid only when its
measurement did not converge (CI of the median wider than the stopping rule's target); a converged
one stays valid with a ``busy_machine`` warning in ``extra.warnings``. The background CPU is a column
of results_latest / results_current, and reports open with a banner counting the flagged results.
"""

import os
import shlex
import signal
import subprocess
import sys
import time

import duckdb
import psutil
import pytest
from conftest import child, make_meta, make_run, write_file

from benchdb.harness.scenario import RunOptions
from benchdb.harness.timing import StopRule
from benchdb.plan.driver import run_plan
from benchdb.plan.planning import build_plan
from benchdb.reports import build as builder
from benchdb.reports import render
from benchdb.warehouse import Warehouse

# ---------------------------------------------------------------- a real run under real load

HOG = "import time\nend = time.monotonic() + 30\nwhile time.monotonic() < end:\n    pass\n"


def _foreign(code: str) -> int:
    """Start ``code`` in a Python process that is not below this one (a shell starts it in the
    background and exits, so it is re-parented): another program's load, not benchdb's own."""
    script = f"{shlex.quote(sys.executable)} -c {shlex.quote(code)} >/dev/null 2>&1 & echo $!"
    out = subprocess.run(["sh", "-c", script], capture_output=True, text=True, check=True)
    return int(out.stdout.strip())


def _kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


@pytest.fixture
def hog():
    """A real busy loop on one core, in a process outside benchdb's tree; it stops by itself within
    30 s (and is killed after the test)."""
    pid = _foreign(HOG)
    time.sleep(0.5)
    try:
        yield pid
    finally:
        _kill(pid)


def _busy_and_total(t) -> tuple[float, float]:
    """Busy and total CPU seconds (all cores) of a ``psutil.cpu_times()``, as psutil.cpu_percent counts them."""
    total = sum(t) - getattr(t, "guest", 0.0) - getattr(t, "guest_nice", 0.0)
    return total - t.idle - getattr(t, "iowait", 0.0), total


def _one_window(pid: int) -> tuple[float, float, float]:
    """``background_cpu_pct(0.5)`` -- what benchdb reports -- with, measured over the same window,
    the machine's CPU use and that of process ``pid`` (each 0-100, all cores)."""
    from benchdb.harness import background

    background._LAST_SAMPLE = None  # a window of its own, not one chained to an earlier sample
    proc = psutil.Process(pid)
    sys0, p0, t0 = psutil.cpu_times(), proc.cpu_times(), time.monotonic()
    reported = background.background_cpu_pct(0.5)
    sys1, p1, t1 = psutil.cpu_times(), proc.cpu_times(), time.monotonic()
    (busy0, total0), (busy1, total1) = _busy_and_total(sys0), _busy_and_total(sys1)
    machine = 100.0 * (busy1 - busy0) / max(total1 - total0, 1e-9)
    share = 100.0 * (p1.user + p1.system - p0.user - p0.system) / ((t1 - t0) * (psutil.cpu_count() or 1))
    return reported, machine, share


@pytest.mark.core
def test_benchdb_own_children_are_never_background_load():
    """The measuring children, the fork server and an exporter are benchdb's work: a busy loop below
    this process is not counted; the same loop outside benchdb's tree is. Each is judged against the
    machine's CPU use over the same window, not against a quiet machine: whatever else runs, the
    background benchdb reports leaves out (at least half of) the loop below it and keeps (at least
    half of) the loop outside it."""
    one_core = 100.0 / (psutil.cpu_count() or 1)
    with child([sys.executable, "-c", HOG]) as own:
        time.sleep(0.3)
        reported, machine, hog = _one_window(own.pid)
    assert hog > 0.1 * one_core, f"the loop below this process hardly ran ({hog:.1f}%): nothing was tested"
    assert reported <= machine - hog / 2, (reported, machine, hog)
    pid = _foreign(HOG)
    try:
        time.sleep(0.3)
        reported, machine, hog = _one_window(pid)
    finally:
        _kill(pid)
    assert hog > 0.1 * one_core, f"the loop outside benchdb hardly ran ({hog:.1f}%): nothing was tested"
    assert reported >= hog / 2, (reported, machine, hog)


def test_real_run_under_a_busy_loop_is_recorded_and_the_report_says_so(tmp_path, hog):
    # one busy core is 100/cores % of the machine: a limit of half of that is always exceeded
    limit = 50.0 / (os.cpu_count() or 1)
    fast = dict(warmup_iters=1, warmup_s=0.0, min_iters=10, min_time_s=0.05, max_time_s=0.5)
    loose = RunOptions(
        backend="numpy",
        models=("matmul:64",),
        batch_sizes=(1,),
        threads=1,
        rule=StopRule(**fast, target_ci=0.5),
        max_background_cpu=limit,
        out=tmp_path / "out",
    )
    # no interval at all: 5 samples are fewer than the 9 a CI of the median needs, so it cannot
    # converge (a tiny target alone is not enough: a quantised clock can give a zero-width CI)
    tight = RunOptions(
        backend="numpy",
        models=("matmul:64",),
        batch_sizes=(2,),
        threads=1,
        rule=StopRule(
            warmup_iters=1, warmup_s=0.0, min_iters=1, min_time_s=0.0, max_time_s=0.5, max_iters=5, target_ci=0.5
        ),
        max_background_cpu=limit,
        out=tmp_path / "out",
    )
    rep = run_plan(build_plan([loose, tight]), config={}, out=tmp_path / "out")
    by_bs = {o.scenario.batch_size: o for o in rep.outcomes}
    assert {bs: o.status for bs, o in by_bs.items()} == {1: "ok", 2: "ok"}
    for o in by_bs.values():
        assert o.conditions.background_cpu_pct > limit
    ok = by_bs[1]
    assert ok.stop_reason == "converged" and ok.validity == "valid" and ok.validity_reasons == []
    assert len(ok.extra["warnings"]) == 1 and ok.extra["warnings"][0].startswith("busy_machine:")
    bad = by_bs[2]
    assert bad.validity == "invalid" and any(r.startswith("busy_machine:") for r in bad.validity_reasons)

    wh = Warehouse(tmp_path / "w.duckdb")
    wh.ingest([tmp_path / "out" / rep.run_id])
    _, rows = wh.query("SELECT batch_size, validity, background_cpu_pct FROM results_current ORDER BY 1")
    assert [(r[0], r[1]) for r in rows] == [(1, "valid"), (2, "invalid")]
    assert all(r[2] > limit for r in rows)
    _, latest = wh.query("SELECT batch_size, background_cpu_pct FROM results_latest")
    assert [r[0] for r in latest] == [1] and latest[0][1] > limit

    report = wh.report(list(builder.ALL), builder.Filters())
    b = report.banner
    assert (b.flagged, b.total, b.invalid) == (2, 2, 1)
    assert b.text.startswith("2 of 2 latest timing results were measured while other processes used ")
    assert "1 of them is invalid because its confidence interval did not converge" in b.text
    md = render.markdown(report)
    (first,) = [ln for ln in md.splitlines() if ln.startswith("> **Busy machine:**")]  # above the sections
    assert first.startswith("> **Busy machine:** 2 of 2 latest timing results ran while")
    assert md.index(first) < md.index("## ")
    assert max(len(ln) for ln in md.splitlines()) <= 120
    assert first.endswith("; 1 invalid.")  # the notice is one line; the HTML says the rest
    html = render.html(report, plots=False)
    assert html.index('id="busy-machine"') < html.index('id="optimal_hardware"')
    assert "valid (warning)" in html and "invalid: did not converge" in html


# ---------------------------------------------------------------- banner counts on a small warehouse


def _write(folder, run, bs, *, validity="valid", reasons=(), cpu=None, warnings=None, model_id="matmul:64"):
    meta = make_meta(run, batch_size=bs, validity=validity, model_id=model_id)
    sc = meta["scenario"]
    sc["validity_reasons"] = list(reasons)
    if cpu is not None:
        sc["settings"] = {"background_cpu_pct": cpu}
    if warnings:
        sc["extra"] = {"warnings": list(warnings)}
    write_file(folder, meta)


BUSY = "busy_machine: other processes used {:.0f}% CPU before the scenario (limit 30%)"


def _warehouse(tmp_path):
    run = make_run()
    folder = tmp_path / "results"
    folder.mkdir()
    _write(
        folder,
        run,
        1,
        cpu=41.0,
        warnings=[BUSY.format(41) + "; CI of the median +-1.0% met the target +-2.0%, so the result stays valid"],
    )
    _write(
        folder,
        run,
        2,
        validity="invalid",
        cpu=79.6,
        reasons=["noisy: x", BUSY.format(80) + "; CI of the median +-15.0% did not converge to the target +-2.0%"],
    )
    _write(folder, run, 3, cpu=5.0)
    _write(folder, run, 4, validity="invalid", cpu=12.0, reasons=["noisy: CI of the median +-30.0% > 5 x target"])
    _write(folder, run, 1, model_id="other", cpu=None)
    wh = Warehouse(tmp_path / "w.duckdb")
    wh.ingest([folder])
    return wh


def test_banner_counts_flagged_results_their_cpu_range_and_the_invalid_ones(tmp_path):
    wh = _warehouse(tmp_path)
    _, rows = wh.query("SELECT model_id, batch_size, background_cpu_pct FROM results_current ORDER BY 1, 2")
    assert rows == [
        ("matmul:64", 1, 41.0),
        ("matmul:64", 2, 79.6),
        ("matmul:64", 3, 5.0),
        ("matmul:64", 4, 12.0),
        ("other", 1, None),
    ]
    report = wh.report(list(builder.ALL), builder.Filters())
    b = report.banner
    assert (b.flagged, b.total, b.invalid, b.cpu_min, b.cpu_max) == (2, 5, 1, 41.0, 79.6)
    assert b.text == (
        "2 of 5 latest timing results were measured while other processes used 41-80 % CPU (limit 30 %); "
        "1 of them is invalid because its confidence interval did not converge to the target; the other one "
        "converged and stays valid, with a warning. Close other programs and measure again, or raise the limit "
        "(`benchdb run --max-background-cpu`, `max_background_cpu` in a config file's settings)."
    )
    assert [(r["batch_size"], r["verdict"]) for r in b.rows] == [
        (2, "invalid: did not converge"),
        (1, "valid (warning)"),
    ]
    assert b.rows[0]["detail"] == "CI of the median +-15.0% did not converge to the target +-2.0%"
    md = render.markdown(report, wide=True)
    assert "| matmul:64 | Test CPU 9000 | numpy | eager | fp32 | 2 | n=64 | 79.6% | " in md

    # filters apply: only the unflagged model -> no banner
    assert wh.report(list(builder.ALL), builder.Filters(models=("other",))).banner is None
    one = builder.Filters(models=("matmul:64",))
    assert wh.report(list(builder.ALL), one).banner.text.startswith("2 of 4 latest timing results were measured")


def test_everything_busy_and_invalid_still_explains_itself(tmp_path):
    run = make_run()
    folder = tmp_path / "results"
    folder.mkdir()
    for bs, cpu in ((1, 35.0), (2, 50.0)):
        _write(
            folder,
            run,
            bs,
            validity="invalid",
            cpu=cpu,
            reasons=[BUSY.format(cpu) + "; CI of the median +-9.0% did not converge to the target +-2.0%"],
        )
    wh = Warehouse(tmp_path / "w.duckdb")
    wh.ingest([folder])
    with pytest.raises(builder.NothingToReport) as err:
        wh.report(["optimal-hardware"], builder.Filters())
    assert (
        "2 of 2 latest timing results were measured while other processes used 35-50 % CPU (limit 30 %); "
        "all of them are invalid because their confidence interval did not converge" in str(err.value)
    )
    with wh.reading() as con:  # what the quickstart does: a report whose banner says why
        report = builder.build(con, str(wh.path), ["optimal-hardware"], builder.Filters(), allow_empty=True)
    assert report.banner.invalid == 2
    assert "Busy machine:" in render.html(report, plots=False)


def test_results_without_background_cpu_have_a_null_column(tmp_path):
    run = make_run()
    folder = tmp_path / "results"
    folder.mkdir()
    _write(folder, run, 1)
    wh = Warehouse(tmp_path / "w.duckdb")
    wh.ingest([folder])
    con = duckdb.connect(str(wh.path), read_only=True)
    try:
        assert con.execute("SELECT background_cpu_pct FROM results_latest").fetchall() == [(None,)]
    finally:
        con.close()
    assert wh.report(list(builder.ALL), builder.Filters()).banner is None
