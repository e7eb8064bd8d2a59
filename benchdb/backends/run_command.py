"""The `benchdb run` line that measures a stored result's scenario again (the HTML report's drill-down
shows it): rebuilt from the run options its run recorded, by the layer that declares those options."""

from __future__ import annotations

import json
import shlex
from decimal import Decimal
from typing import Any

from benchdb import parsing
from benchdb.backends import core_options as options
from benchdb.harness.scenario import RunOptions
from benchdb.schema import identity


def reproduce_command(r: dict) -> str:
    """The `benchdb run` line that measures this result's scenario again: the options its run recorded
    (stopping rule, timeouts, the backend's own options, ...) narrowed to this scenario's model, device,
    mode, precision, batch size and input shape, with its threads and processes."""
    entry = _run_entry(r)
    if entry is None:  # no recorded run options (an imported result, an old file): the key alone
        flag = {o.name: o.cli_flag for o in options.CORE}
        args = [
            "benchdb",
            "run",
            "--backend",
            r["backend"],
            "--device",
            r["device"],
            "--model",
            r["model_id"],
            flag["batch_sizes"],
            str(r["batch_size"]),
        ]
        shape = identity.shape_fields(r.get("input_shape"))
        if "seq_len" in shape:
            args += [flag["seq_lens"], shape["seq_len"]]
        args += [flag["modes"], r["mode"], flag["precisions"], r["precision"]]
        if r.get("threads"):
            args += ["--threads", str(r["threads"])]
        if (r.get("repeats") or 1) > 1:
            args += ["--repeats", str(r["repeats"])]
        return " ".join(shlex.quote(str(a)) for a in args)
    opts = RunOptions.from_config(entry, "results")
    overrides: dict[str, Any] = {}
    # one value of an axis as the user wrote it stays (compile:max-autotune, a local model folder)
    if len(opts.models) != 1 or r["model_id"] in opts.models:
        overrides["models"] = (r["model_id"],)
    if len(opts.modes) != 1:
        overrides["modes"] = (r["mode"],)
    if len(opts.precisions) != 1:
        overrides["precisions"] = (r["precision"],)
    shape = identity.shape_fields(r.get("input_shape"))
    if "seq_len" in shape and shape["seq_len"].isdigit():
        overrides["seq_lens"] = (int(shape["seq_len"]),)
    if "concurrency" in shape and shape["concurrency"].isdigit():  # a serving load point
        overrides["concurrency"] = (int(shape["concurrency"]),)
    elif "rate" in shape:
        overrides["request_rate"] = (shape["rate"],)
    else:
        overrides["batch_sizes"] = (int(r["batch_size"]),)
    scenario = r.get("options_json") or r.get("options") or {}
    scenario = json.loads(scenario) if isinstance(scenario, str) else scenario
    if opts.quantization and scenario.get("quantization"):
        overrides["quantization"] = scenario["quantization"]
    if r.get("threads"):
        overrides["threads"] = int(r["threads"])
    args = ["benchdb", *options.reproduce_args(opts, overrides)]
    # A duration as a person types it: 4 significant digits in ms below a second (the quickstart's
    # 200 ms split over 3 processes reads 66.67ms, not 0.06666666666666667s), within 0.01 % of the
    # recorded value; one that is short as recorded (0.2s, 300s) stays exact.
    durations = {o.cli_flag for o, _ in options.every() if o.kind == "duration"}
    for i in range(1, len(args)):
        if args[i - 1] in durations and len(args[i]) > 6:
            seconds = parsing.duration(args[i])
            value, unit = (seconds * 1000, "ms") if seconds < 1 else (seconds, "s")
            args[i] = format(Decimal(f"{value:.4g}"), "f") + unit
    return " ".join(shlex.quote(str(a)) for a in args)


def _run_entry(r: dict) -> dict[str, Any] | None:
    """The run options (one entry of its run's recorded ``runs``) that planned this result: the entry of
    its backend that names its model, else its backend's only entry."""
    config = r.get("run_config")
    try:
        config = json.loads(config) if isinstance(config, str) else config
    except ValueError:
        return None
    entries = [e for e in (config or {}).get("runs") or [] if isinstance(e, dict) and e.get("backend") == r["backend"]]
    named = [e for e in entries if r["model_id"] in (e.get("models") or [])]
    found = named or (entries if len(entries) == 1 else [])
    return found[0] if found else None
