"""One number format: the dashboard's fmt.js, run in a real Chromium, prints every value exactly as
benchdb.formatting (and the reports' count column) prints it for the same column kind, and neither ever
prints a number in exponent notation."""

from __future__ import annotations

import re

import pytest
from conftest import REPO

from benchdb import formatting
from benchdb.backends.ortweb import browser
from benchdb.reports.render import fmt_value

FMT_JS = REPO / "benchdb" / "web" / "static" / "fmt.js"

#: The dashboard column each kind is read from (fmt.js picks a column's kind by its SQL name).
COLUMN = {
    "time": "median_s",
    "size": "peak_memory_bytes",
    "pct": "change",
    "points": "background_cpu_pct",
    "num": "throughput",
    "int": "n",
}

#: (kind, a column's values): times from ns to hours, sizes B..GiB, rates 0.001..1e9, percentages,
#: zero, negative, ties in binary (100.25, 12.25), and values that need extra decimals to differ.
CASES: list[tuple[str, list[float]]] = [
    ("time", [1e-9, 2.5e-9]),
    ("time", [3.7e-10]),
    ("time", [1.234e-6, 1.3e-6, 1.31e-6]),
    ("time", [0.0001079, 0.0001082, 0.0001101]),
    ("time", [0.06666666666666667]),
    ("time", [0.001, 0.0010001]),
    ("time", [0.0123, 0.0123]),
    ("time", [1.5, 2.5, 2.4]),
    ("time", [3600.0, 5400.0, 7200.0]),
    ("time", [0.0]),
    ("time", [0.0, 0.0]),
    ("time", [-0.002, 0.003]),
    ("time", [50e-6, 2.5]),
    ("size", [512.0]),
    ("size", [1023.0, 2048.0]),
    ("size", [451_600_000.0, 476_602_368.0]),
    ("size", [3.5 * 2**30]),
    ("size", [1536.0, 1537.0]),
    ("size", [0.0]),
    ("size", [100.0, 5e9]),
    ("num", [0.001]),
    ("num", [0.0012, 0.0013]),
    ("num", [1.5]),
    ("num", [99.99, 99.991]),
    ("num", [100.25, 200.75]),
    ("num", [12840.5, 9808.25, 35000.0]),
    ("num", [1e9]),
    ("num", [1e9, 1e9 + 1]),
    ("num", [-5.5, 3.0]),
    ("num", [0.0]),
    ("num", [4.76837158203125e-07]),
    ("pct", [0.012]),
    ("pct", [0.0]),
    ("pct", [-0.0]),
    ("pct", [1e-5]),
    ("pct", [-1e-5]),
    ("pct", [-0.35, 0.5, 0.0125]),
    ("pct", [0.01231, 0.01232]),
    ("pct", [97.475]),
    ("points", [41.0]),
    ("points", [0.0, 100.0]),
    ("points", [12.25, 12.35]),
    ("int", [1.0, 5.0, 718.0, 12345.0]),
    ("int", [0.0]),
]
RATIO_CASES = [[1.0, 1.005], [0.5], [0.0], [2.125, 3.375]]
#: (value, stored unit, the other side's values): formatting.quantity.
QUANTITIES = [
    (0.0001079, "s", []),
    (0.06666666666666667, "s", []),
    (451_600_000.0, "bytes", []),
    (5.5, "tokens/s", [6.25]),
    (4.76837158203125e-07, "abs", []),
    (1.5738350551613448e-07, "ratio", []),
    (18.0, "", []),
    (None, "s", []),
]
TIMESTAMPS = ["2026-11-01T10:00:00+00:00", "2026-11-01T12:30:00+02:00", "2026-11-29T23:59:59Z", "2026-11-01T10:00:00"]
SAMPLE_SETS = [
    [0.000108 + i * 1e-7 for i in range(899)] + [0.0108],
    [1.0, 2.0, 3.0],
    [5.0],
    [float(i) for i in range(90)],
]

EXPONENT = re.compile(r"\d[eE][+-]?\d")


def _python(kind: str, values: list[float]) -> list[str]:
    if kind == "int":
        return [fmt_value(v, "int", formatting.scale("int", values)) for v in values]
    sc = formatting.scale(kind, values)
    assert sc is not None
    return [sc(v) for v in values]


#: Columns that count things: the reports' "int" kind (e.g. the serving report's GPUs column).
COUNT_COLUMNS = ["accelerators", "devices", "nodes", "valid_results", "repeat", "n_requests"]

JS = """([cases, ratios, quantities, stamps, sets, COUNT_COLUMNS]) => ({
  cases: cases.map(([col, values]) => { const f = FMT.column(col, values); return values.map((v) => f(v)); }),
  ratios: ratios.map((values) => { const f = FMT.scale("ratio", values); return values.map((v) => f(v)); }),
  quantities: quantities.map(([v, unit, others]) => FMT.quantity(v, unit, others)),
  seconds: cases.filter(([col]) => col === "median_s").map(([, values]) => values.map((v) => FMT.time(v))),
  sizes: cases.filter(([col]) => col === "peak_memory_bytes").map(([, values]) => values.map((v) => FMT.size(v))),
  stamps: stamps.map((s) => FMT.timestamp(s)),
  counts: COUNT_COLUMNS.map((c) => { const f = FMT.column(c, [8, 48, 1]); return [FMT.kind(c), [8, 48, 1].map(f)]; }),
  clips: sets.map((s) => {
    const [lo, hi, out] = FMT.clipRange(s);
    return [lo, hi, out, FMT.clipNote(out, s.length)];
  }),
})"""


@pytest.fixture(scope="module")
def js_out(browser_needed) -> dict:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=browser.find(), headless=True, args=["--no-sandbox"])
        try:
            page = b.new_page()
            errors: list[str] = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto("about:blank")
            page.add_script_tag(path=str(FMT_JS))
            out = page.evaluate(
                JS,
                [
                    [[COLUMN[k], v] for k, v in CASES],
                    RATIO_CASES,
                    [list(q) for q in QUANTITIES],
                    TIMESTAMPS,
                    SAMPLE_SETS,
                    COUNT_COLUMNS,
                ],
            )
            assert not errors, errors
            return out
        finally:
            b.close()


def test_every_column_kind_prints_the_same_in_the_browser_and_in_python(js_out):
    expected = [_python(k, v) for k, v in CASES]
    wrong = [(k, v, e, g) for (k, v), e, g in zip(CASES, expected, js_out["cases"], strict=True) if e != g]
    assert not wrong, "\n".join(f"{k} {v}: python {e} browser {g}" for k, v, e, g in wrong)
    ratios = [[formatting.ratio_scale(v)(x) for x in v] for v in RATIO_CASES]
    assert js_out["ratios"] == ratios


def test_single_values_quantities_timestamps_and_the_clip_agree(js_out):
    assert js_out["quantities"] == [formatting.quantity(v, u, *o) for v, u, o in QUANTITIES]
    times = [v for k, v in CASES if k == "time"]
    assert js_out["seconds"] == [[formatting.seconds(x) for x in v] for v in times]
    sizes = [v for k, v in CASES if k == "size"]
    assert js_out["sizes"] == [[formatting.size(x) for x in v] for v in sizes]
    assert js_out["stamps"] == [formatting.timestamp(s) for s in TIMESTAMPS]
    clips = []
    for s in SAMPLE_SETS:
        lo, hi, out = formatting.clip_range(s)
        clips.append([lo, hi, out, formatting.clip_note(out, len(s))])
    assert js_out["clips"] == clips
    assert clips[0][2] > 0 and clips[0][1] < 0.001  # the 100x outlier is counted, not drawn


def test_no_number_in_exponent_notation_on_either_side(js_out):
    python = [s for k, v in CASES for s in _python(k, v)] + [formatting.quantity(v, u, *o) for v, u, o in QUANTITIES]
    browser_side = [s for case in js_out["cases"] for s in case] + js_out["quantities"]
    shown = [s for s in python + browser_side if EXPONENT.search(s)]
    assert not shown, shown


def test_counts_of_accelerators_devices_and_nodes_print_as_the_reports_integers(js_out):
    # fmt.js names them integers by column name; the reports say "int" on the column (serving's GPUs)
    expected = _python("int", [8.0, 48.0, 1.0])
    assert js_out["counts"] == [["int", expected]] * len(COUNT_COLUMNS), js_out["counts"]
    assert expected == ["8", "48", "1"]
