"""`benchdb run --resume`: the plan a run records in its folder when it starts, and what of it an
interrupted run left to measure."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from benchdb.backends.core_options import recorded_config
from benchdb.errors import BenchdbError
from benchdb.harness.scenario import RunOptions
from benchdb.plan.files import refused_as_one_line
from benchdb.plan.planning import PlanItem, build_plan
from benchdb.schema import contract, identity

#: What a run records of its plan in its folder, for `benchdb run --resume`.
PLAN_FILE = "plan.json"


@dataclass
class Resume:
    """An interrupted run to finish: its id, start, interleaving seed and what is left to measure."""

    run_id: str
    started_at: str
    seed: int | None
    config: dict
    tags: tuple[str, ...]
    items: list[PlanItem]
    planned: int
    done: int
    folder: Path


def resume_plan(folder: Path | str) -> Resume:
    """The scenarios of the run in ``folder`` (``out/<run_id>``) that have no file there yet, from the
    plan the run recorded when it started, whatever other results exist elsewhere."""
    folder = Path(folder)
    path = folder / PLAN_FILE
    if not folder.is_dir():
        raise BenchdbError(
            f"--resume {folder}: no such folder; give the run folder the interrupted run printed (RESULTS_DIR/RUN_ID)"
        )
    try:
        plan = json.loads(path.read_text(encoding="utf-8"))
        runs = [RunOptions.from_config(c, folder.parent) for c in plan["runs"]]
        planned = [identity.scenario_key_tuple(k) for k in plan["planned"]]
    except FileNotFoundError:
        raise BenchdbError(
            f"--resume {folder}: no {PLAN_FILE} there; only a folder that `benchdb run` wrote "
            "(RESULTS_DIR/RUN_ID, local --out) can be resumed"
        ) from None
    except (ValueError, KeyError, TypeError) as exc:
        raise BenchdbError(f"--resume {folder}: {PLAN_FILE} is not a plan benchdb wrote ({exc})") from None
    written: set[tuple] = set()
    for f in sorted(folder.glob("*.parquet")):
        try:
            footer = contract.read_footer(f)
        except contract.ContractError:
            continue  # a damaged file does not count as measured
        if footer.metadata["run"]["run_id"] == plan["run_id"]:
            written.add(identity.scenario_key_tuple(footer.scenario))
    # a run may key a scenario with what it learns while measuring (an OpenVINO request count): then
    # its file matches on everything but the options, when no other planned scenario shares that
    written_loose = {k[:-1] for k in written}
    planned_loose = Counter(k[:-1] for k in planned)
    wanted = set(planned)
    items = build_plan(runs)
    done = 0
    for item in items:
        left = []
        for sc in item.scenarios:
            k = identity.scenario_key_tuple(sc.key())
            if k not in wanted:
                continue
            if k in written or (k[:-1] in written_loose and planned_loose[k[:-1]] == 1):
                done += 1
                continue
            left.append(sc)
        item.scenarios = left
    return Resume(
        plan["run_id"],
        plan["started_at"],
        plan.get("seed"),
        plan.get("config") or {},
        tuple(plan.get("tags") or ()),
        [i for i in items if i.scenarios],
        len(planned),
        done,
        folder,
    )


def write_plan(folder: Path, run_meta: dict, seed: int | None, items: list[PlanItem]) -> None:
    """Record the plan beside the run's files (atomically), so `benchdb run --resume` can measure
    exactly what an interrupted run left."""
    from benchdb.paths import write_atomic

    folder.mkdir(parents=True, exist_ok=True)
    runs = list({id(i.opts): i.opts for i in items}.values())
    body = {
        "benchdb_plan": 1,
        "run_id": run_meta["run_id"],
        "started_at": run_meta["started_at"],
        "seed": seed,
        "config": run_meta["config"],
        "tags": run_meta["tags"],
        "runs": [recorded_config(o) for o in runs],
        "planned": [sc.key() for i in items for sc in i.scenarios],
    }
    with refused_as_one_line(folder / PLAN_FILE):
        write_atomic(folder / PLAN_FILE, json.dumps(body, indent=1, default=str))
