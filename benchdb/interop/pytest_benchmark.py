"""pytest-benchmark ``--benchmark-json`` files.

``benchmarks[].stats.data`` holds one time per round (seconds per call: pytest-benchmark divides
a round by its iterations); they become ``latency_s`` samples. ``machine_info.cpu`` (py-cpuinfo)
maps to the CPU fingerprint, ``commit_info`` to the run's commit. A file saved without
``--benchmark-save-data``/``--benchmark-json`` data (no ``stats.data``) is refused: benchdb never
invents samples from a summary it cannot mark as such.
"""

from __future__ import annotations

from pathlib import Path

from benchdb.interop import load_json
from benchdb.interop.writer import Imported, SourceError, utc_iso

FILES = ("*.json",)


def hardware(machine: dict) -> dict:
    cpu = machine.get("cpu") or {}
    name = cpu.get("brand_raw") or cpu.get("brand") or machine.get("processor") or machine.get("machine") or "unknown"
    return {
        "kind": "cpu",
        "vendor": cpu.get("vendor_id_raw") or cpu.get("vendor_id"),
        "device_name": name,
        "cpu_model": name,
        "cores_logical": cpu.get("count"),
        "arch": machine.get("machine"),
        "os": f"{machine.get('system', '')} {machine.get('release', '')}".strip() or None,
    }


def parse(path: Path) -> list[Imported]:
    doc = load_json(path)
    if not isinstance(doc, dict) or "benchmarks" not in doc or "machine_info" not in doc:
        raise SourceError("not a pytest-benchmark JSON file (no 'benchmarks' and 'machine_info')")
    machine = doc.get("machine_info") or {}
    commit = doc.get("commit_info") or {}
    version = doc.get("version")
    out = []
    for b in doc["benchmarks"]:
        stats = b.get("stats") or {}
        data = stats.get("data")
        if not data:
            raise SourceError(
                f"benchmark {b.get('fullname') or b.get('name')}: no stats.data (raw times); "
                "write the file with --benchmark-json from pytest-benchmark >= 3.0"
            )
        params = b.get("params") or {}
        out.append(
            Imported(
                model_id=b.get("fullname") or b["name"],
                backend="pytest-benchmark",
                device="cpu",
                mode=b.get("group") or "default",
                precision="na",
                batch_size=1,
                input_shape=",".join(f"{k}={v}" for k, v in sorted(params.items())) or "na",
                samples={"latency_s": ("s", list(data))},
                options={"timer": (b.get("options") or {}).get("timer"), "iterations": stats.get("iterations")},
                hardware=hardware(machine),
                model={"task": "pytest-benchmark"},
                started_at=utc_iso(doc.get("datetime")),
                host=machine.get("node") or "unknown",
                git_commit=commit.get("id") if commit.get("id") not in (None, "unversioned") else None,
                software={"python": machine.get("python_version"), "pytest-benchmark": version},
                config={"commit_info": commit},
                run_key="",
                timing_method=(b.get("options") or {}).get("timer") or "source",
                tool="pytest-benchmark",
                tool_version=version,
                statistics=[
                    ("latency_s", "s", k, float(stats[k]))
                    for k in ("mean", "median", "min", "max", "stddev")
                    if isinstance(stats.get(k), (int, float))
                ],
                settings={"extra_info": b.get("extra_info") or {}, "rounds": stats.get("rounds")},
            )
        )
    return out
