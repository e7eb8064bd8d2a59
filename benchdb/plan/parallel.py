"""`benchdb run --parallel auto|N`: scenarios measured at the same time on workers that share nothing.

Each worker owns disjoint resources (:mod:`benchdb.harness.topology`): a set of whole physical
cores (its measuring children pinned there with ``sched_setaffinity``, their thread count set to its
cores), or one GPU (its children see only that device). A worker measures one model at a time, in
the same isolated child processes as a serial run; a crash or timeout in one worker's child is that
scenario's outcome and never stops the other workers.

A plan's units -- a model's scenarios, or one round of them with ``--repeats`` -- go to whichever
worker is free, in the serial run's interleaved order; a worker prefers a model it has not measured
yet, so a scenario's processes spread over the workers. Each result records where it ran
(``extra.placement``: worker, cores, NUMA nodes, the cores' equivalence class, device) and what ran
beside it (``beside``: the other units measured at the same time); with repeats, one record per
process (``extra.placements``).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from benchdb.errors import BenchdbError
from benchdb.harness.isolation import Placement
from benchdb.harness.topology import CpuSet


@dataclass(frozen=True)
class Worker:
    index: int
    cpus: CpuSet | None = None
    env: dict[str, str] = field(default_factory=dict)

    @property
    def placement(self) -> Placement:
        return Placement(self.cpus.cpus if self.cpus else None, dict(self.env))

    def record(self) -> dict[str, Any]:
        return {
            "worker": self.index,
            **(self.cpus.record() if self.cpus else {}),
            **({"device_env": dict(self.env)} if self.env else {}),
        }

    def label(self) -> str:
        where = f"cores {self.cpus.text}" if self.cpus else ""
        dev = ", ".join(f"{k}={v}" for k, v in self.env.items())
        return f"worker {self.index} ({', '.join(x for x in (where, dev) if x)})"


def cpu_workers(n: int | str, threads: int | None, sys_root: str = "/sys") -> list[Worker]:
    """Workers on disjoint whole physical cores: ``n`` of them, or ``auto`` (see topology.auto_workers);
    ``threads`` cores each when given (so every scenario runs on exactly its thread count of cores),
    else the cores shared out evenly."""
    from benchdb.harness import topology

    topo = topology.read(sys_root)
    count = topology.auto_workers(topo, threads) if n == "auto" else int(n)
    return [Worker(i, s) for i, s in enumerate(topology.split(topo, count, threads))]


def device_workers(kind: str, indices: list[int], n: int | str) -> list[Worker]:
    """One worker per device of ``kind`` (``n``: auto, or how many)."""
    from benchdb.harness import topology

    envs = topology.device_workers(kind, indices, None if n == "auto" else int(n))
    return [Worker(i, None, env) for i, env in enumerate(envs)]


def workers_for(runs: list, n: int | str, flag: str) -> tuple[list[Worker], list]:
    """The workers for ``runs`` (``n``: auto or a count; ``flag`` names the option in errors) and the
    runs with each worker's core count as their threads where none was given, and the number of
    other workers as their ``co_runners`` (part of the identity). The workers' core sets must be
    equivalent, so a scenario measures alike whichever worker takes it."""
    from dataclasses import replace

    kinds = {o.device.split(":")[0] for o in runs}
    if kinds - {"cpu"}:
        if len(kinds) > 1 or any(":" in o.device for o in runs):
            raise BenchdbError(
                f"{flag} gives each worker its own device: give one --device kind without an "
                f"index (e.g. --device cuda), not {', '.join(sorted({o.device for o in runs}))}"
            )
        kind = kinds.pop()
        workers = device_workers(kind, visible_devices(kind), n)
        return workers, [replace(o, co_runners=len(workers) - 1 or None) for o in runs]
    threads = max((o.threads for o in runs if o.threads), default=None)
    workers = cpu_workers(n, threads)
    if len({w.cpus.equivalence for w in workers if w.cpus}) > 1:
        raise BenchdbError(
            f"{flag}: the core sets {' and '.join(w.cpus.text for w in workers if w.cpus)} differ "
            "(core counts, NUMA nodes or core frequencies), so a side's speed would depend on its "
            "set; measure without it"
        )
    cores = workers[0].cpus.cores if workers[0].cpus else None
    return workers, [replace(o, threads=o.threads or cores, co_runners=len(workers) - 1 or None) for o in runs]


def visible_devices(kind: str) -> list[int]:
    """The indices of the ``kind`` devices this process sees (PyTorch's count)."""
    try:
        import torch
    except ImportError:
        return []
    if kind in ("cuda", "rocm"):
        return list(range(torch.cuda.device_count()))
    if kind == "xpu" and hasattr(torch, "xpu"):
        return list(range(torch.xpu.device_count()))
    return []


@dataclass
class Unit:
    """What one worker measures at once: scenarios of one plan item (one round of them with repeats)."""

    item: int
    round: int
    scenarios: list[int]
    label: str


def measure(
    items: list,
    units: list[Unit],
    workers: list[Worker],
    run_unit: Callable[[Any, list[Any], Placement], list[Any]],
    done: Callable[[Unit, list[Any], dict[str, Any]], None],
) -> None:
    """Measure ``units`` on ``workers`` (a thread each, starting isolated children): ``run_unit(item,
    scenarios, placement)`` gives one outcome per scenario, then ``done(unit, outcomes, placement
    record)`` is called under the lock that serialises writing. An error in a worker thread stops the
    others after their current unit and is raised here."""
    lock = threading.Lock()
    queue = list(units)
    running: dict[int, tuple[str, set[str]]] = {}
    ran: dict[int, set[int]] = {w.index: set() for w in workers}
    errors: list[BaseException] = []

    def take(worker: Worker) -> Unit | None:
        if errors or not queue:
            return None
        pick = next((k for k, u in enumerate(queue) if u.item not in ran[worker.index]), 0)
        unit = queue.pop(pick)
        ran[worker.index].add(unit.item)
        beside = {label for label, _ in running.values()}
        for _label, others in running.values():
            others.add(unit.label)
        running[worker.index] = (unit.label, beside)
        return unit

    def work(worker: Worker) -> None:
        while True:
            with lock:
                unit = take(worker)
            if unit is None:
                return
            try:
                item = items[unit.item]
                outcomes = run_unit(item, [item.scenarios[i] for i in unit.scenarios], worker.placement)
            except BaseException as exc:  # noqa: BLE001 - re-raised in the calling thread
                with lock:
                    errors.append(exc)
                    running.pop(worker.index, None)
                return
            with lock:
                _label, beside = running.pop(worker.index)
                done(unit, outcomes, {**worker.record(), "beside": sorted(beside)})

    together([partial(work, w) for w in workers])
    if errors:
        raise errors[0]


def together(calls: list[Callable[[], Any]]) -> list[Any]:
    """Run the calls at the same time, a thread each; their results in order, or the first error."""
    results: list[Any] = [None] * len(calls)
    errors: list[BaseException] = []

    def one(i: int) -> None:
        try:
            results[i] = calls[i]()
        except BaseException as exc:  # noqa: BLE001 - re-raised in the calling thread
            errors.append(exc)

    threads = [
        threading.Thread(target=one, args=(i,), name=f"benchdb-worker-{i}", daemon=True) for i in range(len(calls))
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
    return results
