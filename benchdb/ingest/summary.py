"""What one ingest did: files found, loaded, skipped and rejected, samples and seconds."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class IngestSummary:
    db: str
    found: int = 0
    new: int = 0
    skipped: int = 0
    duplicates: int = 0
    rejected: list[tuple[str, str]] = field(default_factory=list)
    #: Files rejected by an earlier ingest and unchanged since: (path, the reason then).
    rejected_before: list[tuple[str, str]] = field(default_factory=list)
    samples: int = 0
    seconds: float = 0.0
    run_ids: set[str] = field(default_factory=set)  # runs that gained results in this call
    change_points: int = 0  # open change points found after loading

    def line(self) -> str:
        before = f" and {len(self.rejected_before)} rejected before (unchanged)" if self.rejected_before else ""
        return (
            f"ingested {self.new} new file(s), skipped {self.skipped + self.duplicates} already "
            f"loaded{before}, rejected {len(self.rejected)}; {self.samples:,} samples in "
            f"{self.seconds:.2f} s into {self.db}"
        )
