"""Writing an interleaved A/B run's files (:mod:`benchdb.ab.interleaved`): one run per side, each scenario's
trials merged into one file per side under the key both sides agree on."""

from __future__ import annotations

import platform
from dataclasses import replace
from typing import Any

from benchdb.ab.plan import Step
from benchdb.ab.process import SIDES, Group, Measured, Side, full_key
from benchdb.harness import hardware
from benchdb.harness.scenario import Outcome, RunOptions, Scenario, merge_repeats
from benchdb.plan.files import RunReport, Sink, Writer
from benchdb.text import redact_config


def _keys(planned: dict[str, Scenario], got: dict[str, list[Measured]]) -> dict[str, Scenario]:
    """Each side's key: the one every process of both sides reported when they agree (and the
    sides were planned alike or both reported), else the side's planned key."""
    reported = {
        s: {full_key(m.outcome.scenario): m.outcome.scenario for m in got[s] if m.meta is not None} for s in SIDES
    }
    union = {**reported["base"], **reported["cand"]}
    alike = full_key(planned["base"]) == full_key(planned["cand"]) or all(reported[s] for s in SIDES)
    if len(union) == 1 and alike:
        (sc,) = union.values()
        return {s: sc for s in SIDES}
    return {s: planned[s] for s in SIDES}


def _settings(key: Scenario, got: list[Measured], planned: Scenario) -> Scenario:
    """The key's scenario with the settings its side recorded (the planned ones without a file)."""
    settings = next((m.outcome.scenario.settings for m in got if m.meta is not None), planned.settings)
    return replace(key, options=dict(key.options), settings=dict(settings))


class SideWriter:
    """One side's run: made when its first file is written (after the first trial has run every
    scenario, so the software and commit its processes recorded are known)."""

    def __init__(self, side: Side, run_id: str, started: str, out, tags: list[str], config: dict):
        self.side, self.run_id, self.started, self.out = side, run_id, started, out
        self.tags, self.config = tags, config
        self.runs: list[dict] = []  # the run metadata of the side's files until the run is made
        self.hardware: dict[tuple[str, str], dict] = {}  # (backend, device) -> what its processes recorded
        self.writer: Writer | None = None

    def note(self, meta: dict) -> None:
        """A file one of the side's processes wrote."""
        sc = meta["scenario"]
        self.hardware.setdefault((sc["backend"], sc["device"]), meta["hardware"])
        if self.writer is None:
            self.runs.append(meta["run"])

    def write(self, outcome: Outcome, opts: RunOptions) -> None:
        if self.writer is None:
            first = self.runs[0] if self.runs else {}
            software: dict[str, Any] = {}
            for run in self.runs:
                for k, v in (run.get("software") or {}).items():
                    software.setdefault(k, v)
            software.setdefault("python", platform.python_version())
            run_meta = {
                "run_id": self.run_id,
                "started_at": self.started,
                "host": hardware.host(),
                "benchdb_version": first.get("benchdb_version") or self.side.version or "unknown",
                "git_commit": first.get("git_commit") if self.runs else hardware.git_commit(),
                "software": software,
                "config": redact_config(self.config),  # published: a URL's or a command's secrets hashed
                "tags": self.tags,
            }
            self.writer = Writer(run_meta, Sink(str(self.out), self.run_id))
            self.runs = []
        for key, hw in self.hardware.items():
            self.writer.hardware.setdefault(key, hw)
        self.writer.write(outcome, opts)

    @property
    def report(self) -> RunReport:
        return self.writer.report if self.writer else RunReport(self.run_id, self.out)


def write_group(group: Group, gi: int, steps: list[Step], got, writers: dict[str, SideWriter]) -> None:
    orders = [",".join(s.order) for s in steps if s.group == gi]
    opts = replace(group.opts, repeats=group.trials)
    for i in range(len(group.planned["base"])):
        per_side = {s: [trial[i] for trial in got[(gi, s)]] for s in SIDES}
        planned = {s: group.planned[s][i] for s in SIDES}
        keys = _keys(planned, per_side)
        for s in SIDES:
            merged = merge_repeats([m.outcome for m in per_side[s]])
            merged = replace(
                merged,
                scenario=_settings(keys[s], per_side[s], planned[s]),
                extra={**merged.extra, "ab_side": s, "ab_order": orders},
            )
            writers[s].write(merged, opts)
    for s in SIDES:
        got.pop((gi, s), None)
