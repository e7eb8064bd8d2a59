"""Markdown that fits a terminal (benchdb.reports.fit): a table too wide loses the columns that are
the same in every row (named once) and then the least needed ones, never those that tell rows apart;
a one-row table becomes a list with nothing cut; a table that fits is left as it is."""

from __future__ import annotations

import pytest

from benchdb.reports.fit import fit


@pytest.mark.core
def test_terminal_tables_fit_120_columns_and_wide_keeps_every_column():
    rows = [
        f"| tiny:model-{i} | {i} | seq_len=32,new_tokens=8 | AMD EPYC 7B13 64-Core Processor | fp32 | "
        f"{'a reason that is long ' * 5}{i} |"
        for i in range(3)
    ]
    text = (
        "\n".join(
            [
                "# t",
                "",
                "| model | batch | input | hardware | precision | why |",
                "| --- | --- | --- | --- | --- | --- |",
                *rows,
                "",
                "word " * 60,
            ]
        )
        + "\n"
    )
    out = fit(text)
    assert max(len(line) for line in out.splitlines()) <= 120
    # constants named once
    assert "All rows: input seq_len=32,new_tokens=8; hardware AMD EPYC 7B13 64-Core Processor; precision fp32." in out
    assert "| tiny:model-0 | 0 |" in out and "…" in out and "`--wide`" in out
    narrow = "| a | b |\n| --- | --- |\n| 1 | 2 |\n"
    assert fit(narrow) == narrow  # fits: unchanged


def test_a_narrow_terminal_keeps_the_runner_up_and_cuts_no_identifier():
    rows = [
        ("matmul:256", "1", "numpy/eager", "15,335.6", "", "only one; unstable tail: best", ""),
        (
            "tiny:bert",
            "4",
            "openvino/latency",
            "1,666.6",
            "+2% [0, +4]",
            "tie; unstable tail: best",
            "onnxruntime/optimized",
        ),
    ] * 2
    head = ("model", "batch", "best", "items/s", "margin [95 % CI]", "verdict", "runner-up")
    rows = [(*r[:6], r[6] + " (published figure)" * min(i, 1)) for i, r in enumerate(rows)]
    md = "\n".join(
        [
            "| " + " | ".join(head) + " |",
            "|" + "|".join(" --- " for _ in head) + "|",
            *("| " + " | ".join(r) + " |" for r in rows),
        ]
    )
    out = fit(md + "\n", 110)
    # the runner-up tells rows apart: kept; too wide for a table, so one entry per row, nothing cut
    assert "…" not in out and "not shown" not in out
    assert "openvino/latency" in out and "only one; unstable tail: best" in out
    assert out.count("runner-up onnxruntime/optimized") == 2 and max(len(ln) for ln in out.splitlines()) <= 110


def test_a_one_row_table_is_a_list_with_nothing_cut():
    why = "the candidate's interval spans the threshold band; " * 4
    md = f"| verdict | model | why |\n| --- | --- | --- |\n| inconclusive | tiny:bert | {why.strip()} |\n"
    out = fit(md, 80)
    assert "…" not in out and out.startswith("- verdict: inconclusive\n- model: tiny:bert\n- why: ")
    assert " ".join(ln.strip() for ln in out.splitlines()[2:]).endswith(why.strip())
    assert max(len(ln) for ln in out.splitlines()) <= 80
