"""The dataset card (README.md of the dataset: YAML ``configs:`` for the Hub's viewer and
``datasets.load_dataset``, the columns, the optimal-hardware table) and the model-card section."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from benchdb import sql
from benchdb.hub import templates

if TYPE_CHECKING:
    from benchdb.hub.badges import Badge

#: The model-card section sits between these lines; --push replaces what is between them.
START, END = "<!-- benchdb:start -->", "<!-- benchdb:end -->"

#: Where a publish puts things in the dataset repository.
SAMPLES_DIR = "samples"  # the contract files, as ingested (benchdb ingest reads them back)
RESULTS_DIR = ".results"  # per-result summaries for the viewer (hidden: ingest skips them)
BADGES_DIR = "badges"


def _md(text: Any) -> str:
    """A Markdown table cell: pipes escaped, one line."""
    return " ".join(str(text if text is not None else "").replace("|", "\\|").split())


def card_yaml(repo_id: str) -> dict:
    """The card's YAML metadata: the two configs the viewer shows."""
    return {
        "pretty_name": f"benchdb results ({repo_id})",
        "tags": ["benchdb", "benchmark", "inference", "latency"],
        "configs": [
            {
                "config_name": "results",
                "default": True,
                "data_files": [{"split": "train", "path": f"{RESULTS_DIR}/**/*.parquet"}],
            },
            {"config_name": "samples", "data_files": [{"split": "train", "path": f"{SAMPLES_DIR}/**/*.parquet"}]},
        ],
    }


def dataset_card(
    con,
    repo_id: str,
    columns: list[str],
    models: list[str] | None,
    hardware: list[str] | None,
    badges: list[Badge],
    counts: dict[str, int],
) -> str:
    """README.md of the dataset repository."""
    import yaml

    from benchdb.reports.render import fmt_quantity

    described = yaml.safe_load(templates.source("columns.yaml"))
    rows = con.execute(sql.load("hub/optimal.sql"), {"models": models, "hardware": hardware}).fetchall()
    optimal = [
        {
            "model": _md(r[0]),
            "batch": r[1],
            "shape": _md(r[2]),
            "candidates": r[3],
            "hardware": _md(r[4]),
            "backend": _md(f"{r[5]} {r[6]} {r[7]}"),
            "median": fmt_quantity(r[8], "s"),
            "throughput": fmt_quantity(r[9], "items/s"),
            "runner_up": _md(f"{r[10]} {r[11]}" if r[10] else "—"),
            "margin": f"{r[12] * 100:+.1f} %" if r[12] is not None else "—",
        }
        for r in rows
    ]
    front = yaml.safe_dump(card_yaml(repo_id), sort_keys=False, allow_unicode=True)
    return templates.template("dataset_card.md.j2").render(
        front=front,
        repo_id=repo_id,
        endpoint=_endpoint(),
        optimal=optimal,
        counts=counts,
        columns=[(c, _md(described.get(c, ""))) for c in columns],
        badges=badges,
        samples_dir=SAMPLES_DIR,
        results_dir=RESULTS_DIR,
        badges_dir=BADGES_DIR,
    )


def model_card_section(con, model_id: str, dataset: str | None, badge: Badge | None) -> str:
    """The Markdown section for ``model_id``'s model card, between the START and END markers."""
    from benchdb.reports.render import fmt_quantity

    rows = con.execute(sql.load("hub/model_card.sql"), {"model": model_id}).fetchall()
    if not rows:
        from benchdb.errors import BenchdbError

        raise BenchdbError(
            f"no valid timing result for model {model_id} in the warehouse: run "
            f"`benchdb run --model {model_id} ...` and ingest it, or check the model id "
            '(benchdb query "SELECT DISTINCT model_id FROM results")',
            exit_code=1,
        )
    tables: dict[str, dict] = {}
    for hw_name, kind, hw_id, batch, shape, backend, device, mode, precision, p50, p90, thr, mem, cands in rows:
        t = tables.setdefault(hw_id, {"name": _md(hw_name), "kind": kind, "rows": []})
        t["rows"].append(
            {
                "batch": batch,
                "shape": _md(shape),
                "backend": _md(f"{backend} ({device}, {mode}, {precision})"),
                "p50": fmt_quantity(p50, "s", p50),
                "p90": fmt_quantity(p90, "s") or "—",
                "throughput": fmt_quantity(thr, "items/s"),
                "memory": fmt_quantity(mem, "bytes") or "—",
                "candidates": cands,
            }
        )
    speedups = [
        {
            "batch": r[0],
            "shape": _md(r[1]),
            "hardware": _md(r[2]),
            "backend": _md(f"{r[3]} ({r[4]}, {r[5]}, {r[6]})"),
            "median": fmt_quantity(r[7], "s", r[9]),
            "baseline_hardware": _md(r[8]),
            "baseline": fmt_quantity(r[9], "s", r[9]),
            "speedup": f"{r[10]:.2f}x",
        }
        for r in con.execute(sql.load("hub/speedup.sql"), {"model": model_id}).fetchall()
    ]
    base = _endpoint()
    badge_url = None
    if dataset and badge is not None:
        from urllib.parse import quote

        json_url = f"{base}/datasets/{dataset}/resolve/main/{BADGES_DIR}/{badge.slug}.json"
        badge_url = f"https://img.shields.io/endpoint?url={quote(json_url, safe='')}"
    return templates.template("model_card.md.j2").render(
        start=START,
        end=END,
        model_id=model_id,
        tables=list(tables.values()),
        speedups=speedups,
        badge=badge,
        badge_url=badge_url,
        dataset=dataset,
        dataset_url=f"{base}/datasets/{dataset}" if dataset else None,
    )


def replace_section(card: str, section: str) -> str:
    """``card`` with the text between START and END replaced by ``section`` (which carries the
    markers), or with ``section`` appended when the card has no markers yet. Nothing else changes."""
    section = section.rstrip("\n")
    start, end = card.find(START), card.find(END)
    if start != -1 and end > start:
        return card[:start] + section + card[end + len(END) :]
    if start != -1 or end != -1:
        from benchdb.hub.client import HubError

        raise HubError(
            f"the model card has an unmatched {START if start != -1 else END} marker: fix the "
            "card so both markers (start before end) or neither are there"
        )
    return (card.rstrip("\n") + "\n\n" if card.strip() else "") + section + "\n"


def _endpoint() -> str:
    from benchdb.hub.client import endpoint

    return endpoint()
