"""The files a run writes: one contract file per scenario (:class:`Writer`), in a local folder or
at an fsspec URL (:class:`Sink`), and the report of what was written (:class:`RunReport`)."""

from __future__ import annotations

import re
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa

from benchdb import ctrl_c
from benchdb.backends import registry
from benchdb.errors import BenchdbError, refused_write
from benchdb.harness.scenario import Outcome, RunOptions
from benchdb.schema import contract


@dataclass
class RunReport:
    run_id: str
    out_dir: Path | str
    files: list = field(default_factory=list)
    outcomes: list[Outcome] = field(default_factory=list)
    tables: list[pa.Table] = field(default_factory=list)


_UNSAFE = re.compile(r"[^A-Za-z0-9._=-]+")


def _file_name(o: Outcome, sid: str) -> str:
    sc = o.scenario
    parts = [sc.model_id, sc.backend, sc.device, sc.mode, sc.precision, f"bs{sc.batch_size}", sc.input_shape]
    slug = "__".join(_UNSAFE.sub("-", p).strip("-")[:60] or "x" for p in parts)
    return f"{slug}-{sid[:8]}.parquet"


class Writer:
    """Turns outcomes into contract files: metadata (with the hardware of the scenario's own
    device), sample rows, the file, and the report of what was written."""

    def __init__(self, run_meta: dict, sink: Sink):
        self.run_meta = run_meta
        self.sink = sink
        self.report = RunReport(run_meta["run_id"], sink.display)
        self.hardware: dict[tuple[str, str], dict] = {}

    def write(self, outcome: Outcome, opts: RunOptions) -> None:
        sc = outcome.scenario
        key = (sc.backend, sc.device)
        if key not in self.hardware:
            self.hardware[key] = registry.load(sc.backend).hardware_of(sc.device)
        cond = outcome.conditions
        meta = contract.build_metadata(
            run=self.run_meta,
            hardware=self.hardware[key],
            model=outcome.model,
            scenario={
                **sc.key(),
                "status": outcome.status,
                "error": outcome.error,
                "validity": outcome.validity,
                "validity_reasons": outcome.validity_reasons,
                "primary_metric": outcome.primary_metric,
                "timing_method": outcome.timing_method,
                "threads": cond.threads if cond else opts.thread_count,
                "load_avg_1m": cond.load_avg_1m if cond else None,
                "stop_reason": outcome.stop_reason,
                "started_at": outcome.started_at,
                "repeats": opts.repeats,
                "settings": {**sc.settings, "background_cpu_pct": cond.background_cpu_pct if cond else None},
                "extra": outcome.extra,
            },
        )
        table = contract.samples_table(meta, outcome.rows)
        with ctrl_c.deferred():  # a file on disk is a file in the report, whenever Ctrl-C comes
            self.report.files.append(self.sink.write(_file_name(outcome, meta["scenario"]["scenario_id"]), meta, table))
            self.report.outcomes.append(outcome)
            self.report.tables.append(table)


@contextmanager
def refused_as_one_line(path: Path):
    """A write of ``path`` the machine refuses (a full disk, a quota, a read-only file system) as one
    line naming it: the user's to fix, not a bug. (The writers remove their temporary files.)"""
    try:
        yield
    except Exception as exc:
        refused = refused_write(exc)
        if refused is None:
            raise
        raise BenchdbError(f"cannot write {path} ({refused}); make room there or give --out another folder") from None


class Sink:
    """Where scenario files go: a local folder, or an fsspec URL (s3://, gs://, hf://, file://, ...).
    Remote files are written atomically here first, then uploaded one by one."""

    def __init__(self, out: str, run_id: str):
        self.remote = "://" in out
        if self.remote:
            try:
                import fsspec
            except ImportError:
                raise BenchdbError(
                    f"--out {out} needs fsspec: pip install fsspec (plus s3fs / gcsfs / "
                    "huggingface_hub for that protocol)"
                ) from None
            import tempfile

            try:
                self.fs, root = fsspec.core.url_to_fs(out)
            except (ImportError, ValueError) as exc:
                raise BenchdbError(f"--out {out}: {exc}") from None
            self.root = f"{root.rstrip('/')}/{run_id}"
            self.local = Path(tempfile.mkdtemp(prefix="benchdb-out-"))
            # a URL is shown (and kept in the report) as written; a local folder stays a Path
            self.display: Path | str = f"{out.rstrip('/')}/{run_id}"
        else:
            self.local = Path(out) / run_id
            self.display = self.local
            try:  # before anything is measured: a folder that cannot be made is the user's to fix
                self.local.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise BenchdbError(
                    f"--out {out}: cannot create the folder {self.local} ({exc.strerror}); "
                    "give --out a folder you can write"
                ) from None

    def write(self, name: str, meta: dict, table: pa.Table):
        with refused_as_one_line(self.local / name):
            path = contract.write_scenario(self.local / name, meta, table)
        if not self.remote:
            return path
        target = f"{self.root}/{name}"
        self.fs.makedirs(self.root, exist_ok=True)
        self.fs.put_file(str(path), target)
        path.unlink()
        return target
