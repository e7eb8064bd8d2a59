"""How the optimal-hardware section (:mod:`benchdb.reports.optimal`) words its rows: winner and
runner-up labels, margins with their intervals and verdicts, system labels, the shortest labels that
tell the two apart, and the notes under the table (accuracy, margins)."""

from __future__ import annotations

from benchdb.formatting import percent
from benchdb.text import plural


def system_label(name: str | None, devices: int | None, accelerator: str | None) -> str:
    """'8x H200 SXM (8x NVIDIA H200-SXM-141GB)': the system and the accelerators a result used."""
    if accelerator is None or devices is None:
        return str(name)
    used = f"{devices}x {accelerator}"
    return str(name) if name == used or (devices == 1 and name == accelerator) else f"{name} ({used})"


def _reads(text: str) -> str:
    """A label as a reader sees it: Unicode hyphens (NFKC maps the non-breaking one to U+2010) read as
    "-", a non-breaking space as a space."""
    import unicodedata

    text = unicodedata.normalize("NFKC", text)
    return text.replace("\u2010", "-").replace("\u2011", "-").replace("\u00a0", " ").casefold()


def unique_system_labels(rows: list[dict]) -> list[str]:
    """Each row's system label (:func:`system_label`), unique among the rows of its model, scenario
    (input) and batch size: where two would read the same, the submitter, then the precision, the
    backend, the submitted system id, and at last the result id are added until they differ."""
    import json

    def options(r: dict) -> dict:
        o = r.get("options")
        try:
            return json.loads(o) if isinstance(o, str) else dict(o or {})
        except (ValueError, TypeError):
            return {}

    parts = (
        lambda r: options(r).get("submitter"),
        lambda r: r.get("precision"),
        lambda r: r.get("backend"),
        lambda r: options(r).get("system"),
        lambda r: str(r.get("result_id") or "")[:8],
    )
    labels = [system_label(r.get("system_name"), r.get("devices"), r.get("accelerator")) for r in rows]
    groups: dict[tuple, list[int]] = {}
    for i, r in enumerate(rows):
        groups.setdefault((r.get("model_id"), r.get("mode"), r.get("input_shape"), r.get("batch_size")), []).append(i)
    for members in groups.values():
        extra: dict[int, list[str]] = {i: [] for i in members}
        for part in parts:
            seen: dict[str, list[int]] = {}
            for i in members:  # as a reader sees it: a non-breaking hyphen reads as a hyphen
                seen.setdefault(_reads(" ".join([labels[i], *extra[i]])), []).append(i)
            clash = [ids for ids in seen.values() if len(ids) > 1]
            if not clash:
                break
            for ids in clash:
                values = {str(part(rows[i]) or "") for i in ids}
                if len(values) > 1:  # this part tells them apart (or some of them): add it
                    for i in ids:
                        extra[i].append(str(part(rows[i]) or "?"))
        for i in members:
            if extra[i]:
                labels[i] += " [" + ", ".join(extra[i]) + "]"
    return labels


def per_unit(rows: list[dict], key: str, unit_key: str, group: tuple[str, ...] = ()) -> list[str]:
    """Each row's ``key`` with its unit, the values of one unit (within one ``group`` of rows ranked
    against each other) in one scale (:mod:`benchdb.formatting`: separators, the decimals that tell them
    apart, never exponent notation); seconds in the time unit they read best in."""
    from benchdb import formatting

    def where(r: dict) -> tuple:
        return (*(r.get(g) for g in group), str(r.get(unit_key) or ""))

    by_unit: dict[tuple, list[float]] = {}
    for r in rows:
        if r.get(key) is not None:
            # 6 significant digits decide the decimals: a published figure divided by its accelerators
            # differs from another in float noise only, which must not print as 1,481.5200
            by_unit.setdefault(where(r), []).append(float(f"{r[key]:.6g}"))
    scales = {
        w: formatting.time_scale(vs) if w[-1] == "s" else formatting.rate_scale(vs, w[-1]) for w, vs in by_unit.items()
    }
    return ["" if r.get(key) is None else scales[where(r)](r[key]) for r in rows]


def accuracy_notes(rows: list[dict], limit: float) -> list[str]:
    """One line per result --max-accuracy-drop left out: what it is and why."""
    out = []
    for r in rows:
        what = (
            f"{r['model_id']} batch {r['batch_size']} {r['input_shape']}: {r['hardware_name']} {r['backend']} "
            f"{r['mode']} {r['precision']}" + (f" ({r['quantization']})" if r.get("quantization") else "")
        )
        if r.get("accuracy_drop") is None:
            why = "no agreement with fp32 recorded (measured before benchdb recorded it, or not comparable)"
        elif r.get("score_drop") is not None:
            why = f"lm-eval {r['score_basis']} {r['score_drop'] * 100:.3f} % below fp32, more than {limit * 100:g} %"
        elif r.get("sts_drop") is not None:
            why = f"STS Spearman {r['sts_drop'] * 100:.3f} % below fp32's, more than {limit * 100:g} %"
        else:
            why = (
                f"{r['agreement_metric'].replace('_', ' ')} {r['agreement'] * 100:.3f} %, "
                f"a drop of {r['accuracy_drop'] * 100:.3f} %, more than {limit * 100:g} %"
            )
        out.append(f"left out by --max-accuracy-drop: {what}: {why}")
    return out


def _pct(v: float) -> str:
    return f"{v * 100:+.1f}%"


#: What each margin verdict reads as (None: no runner-up).
VERDICT_LABELS = {"win": "win", "tie": "tie", "unconfirmed": "unconfirmed", "unknown": "unconfirmed", None: "only one"}


def optimal_row(r: dict) -> dict:
    """The columns a person reads: the runner-up's full label, the margin's interval, the verdict
    (win / tie / unconfirmed) with a warning when a tail is unstable, and what stands behind it."""
    ci = f"{_pct(r['margin_ci_low'])} .. {_pct(r['margin_ci_high'])}" if r.get("margin_ci_low") is not None else None
    if ci is None and r.get("runner_up_result_id") is not None:
        ci = "noise unknown"
    verdict = VERDICT_LABELS.get(r.get("margin_verdict"), str(r.get("margin_verdict")))
    tails = [who for who, key in (("best", "best"), ("runner-up", "runner_up")) if r.get(f"{key}_tail_unstable")]
    if tails:
        verdict += "; unstable tail: " + ", ".join(tails)
    short = None
    if r.get("margin") is not None:
        short = percent(r["margin"], decimals=0)
        if r.get("margin_ci_low") is not None:
            short += (
                f" [{percent(r['margin_ci_low'], decimals=0).rstrip('%')}, "
                f"{percent(r['margin_ci_high'], decimals=0).rstrip('%')}]"
            )
    if r.get("margin_basis") == "published":
        ci = "published: no interval"
        verdict += ": published figure, no interval"
    runner_up = _label(r, "runner_up")
    if runner_up is not None and r.get("runner_up_summary_only"):
        runner_up += " (published)"
    margin = None if r.get("margin") is None else _pct(r["margin"]) + (f" [{ci}]" if ci else "")
    return dict(
        r,
        runner_up_label=runner_up,
        margin_ci_label=ci,
        verdict_label=verdict,
        margin_label=margin,
        best_label=_label(r, "best"),
        best_system_label=system_label(r.get("best_system"), r.get("best_accelerators"), r.get("best_hardware")),
        best_figure=None
        if r.get("best_summary_only") is None
        else ("published" if r["best_summary_only"] else "measured"),
        margin_short=short,
        proc_label=_pair(r, "best_repeats", "runner_up_repeats"),
        runs_label=_pair(r, "best_runs", "runner_up_runs"),
    )


def _pair(r: dict, best: str, runner_up: str) -> str:
    """'3+3': the best's and the runner-up's count ('3' alone without a runner-up)."""

    def n(key: str) -> str:
        return "?" if r.get(key) is None else str(r[key])

    return n(best) if r.get("runner_up_result_id") is None else f"{n(best)}+{n(runner_up)}"


_PARTS = ("hardware", "backend", "mode", "precision")


def short_labels(rows: list[dict]) -> list[dict]:
    """Terminal labels of the best and the runner-up: only the parts (hardware, backend, mode,
    precision) that differ somewhere in the table; the full labels stay in their own columns."""
    varying = [
        p
        for p in _PARTS
        if len(
            {r.get(f"{who}_{p}") for r in rows for who in ("best", "runner_up") if r.get(f"{who}_hardware") is not None}
        )
        > 1
    ] or ["backend"]
    for r in rows:
        for who in ("best", "runner_up"):
            r[f"{who}_short"] = (
                "/".join(str(r.get(f"{who}_{p}")) for p in varying) if r.get(f"{who}_hardware") is not None else None
            )
    return rows


def optimal_notes(rows: list[dict]) -> list[str]:
    notes = []
    ranked = [r for r in rows if r.get("margin_verdict") is not None]
    wins = sum(1 for r in ranked if r.get("margin_verdict") == "win")
    ties = sum(1 for r in ranked if r.get("margin_verdict") == "tie")
    unconfirmed = [r for r in ranked if r.get("margin_verdict") in ("unconfirmed", "unknown")]
    published = [r for r in unconfirmed if r.get("margin_basis") == "published"]  # said in their own note
    if ranked:  # the same words as the verdict column: a published margin is unconfirmed
        notes.append(
            f"Of {plural(len(ranked), 'winner')} with a runner-up: {wins} win, {ties} tie, "
            f"{len(unconfirmed)} unconfirmed"
            + (
                f" ({len(published)} of them: published figure, no interval)."
                if published and len(published) < len(unconfirmed)
                else " (all: published figure, no interval)."
                if published
                else "."
            )
        )
    unconfirmed = [r for r in unconfirmed if r.get("margin_basis") != "published"]
    no_basis = [r for r in unconfirmed if r.get("margin_ci_low") is None]
    if no_basis:
        single = sum(1 for r in no_basis if (r.get("margin_processes") or 1) < 2)
        notes.append(
            f"{plural(len(no_basis), 'winner')} unconfirmed because run-to-run noise is unknown"
            + (
                f" ({single} measured in one process)"
                if single
                else " (the two results come from separate runs without 8 runs of history)"
            )
            + ": the winner within run-to-run noise is unknown. Measure both in one run with "
            "`--repeats 3` (interleaved processes), or let each series collect 8 runs."
        )
    between = len(unconfirmed) - len(no_basis)
    if between:
        notes.append(
            f"{plural(between, 'winner')} unconfirmed: the margin's interval excludes 0 but not +5 %; "
            "measure with more --repeats to tell."
        )
    if ties:
        notes.append(
            f"{plural(ties, 'tie')}: the margin's interval includes 0 or stays within 5 %, so the data "
            "do not tell the two apart."
        )
    tail = [r for r in rows if r.get("best_tail_unstable") or r.get("runner_up_tail_unstable")]
    if tail:
        notes.append(
            f"Unstable tail in {plural(len(tail), 'row')}: p90 above 2x or p99 above 5x the median; "
            "the median ranks them, but a latency budget on p90/p99 may not hold."
        )
    return notes


def _label(r: dict, prefix: str) -> str | None:
    if r.get(f"{prefix}_hardware") is None:
        return None
    return f"{r[f'{prefix}_hardware']} / {r[f'{prefix}_backend']} / {r[f'{prefix}_mode']} / {r[f'{prefix}_precision']}"
