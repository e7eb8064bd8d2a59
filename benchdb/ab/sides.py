"""The two sides of an ``--ab`` comparison before anything is measured: each side's deployment
under ``--ab-url`` (its endpoint and the system it runs on) and the warning for an ``--ab-env``
variable that would split the sides into different series."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from benchdb.ab.process import SIDES
from benchdb.backends import core_options as options
from benchdb.backends.core_options import backend_option
from benchdb.errors import BenchdbError
from benchdb.harness.scenario import RunOptions
from benchdb.schema import identity
from benchdb.schema.optionsets import env_differences


def warn_split(groups: list, envs: dict[str, dict[str, str]], warn: Callable[[str], None]) -> None:
    """--ab-env on a variable a bench declares in ENV changes the scenario key of one side: the sides
    become different series, and the check that follows has nothing to compare. Say so (``warn``)
    before measuring."""
    names = set(envs["base"]) | set(envs["cand"])
    split = set()
    for g in groups:
        for b, c in zip(g.planned["base"], g.planned["cand"], strict=True):
            split |= names & env_differences(b.options.get("env"), c.options.get("env"))
    if split:
        warn(
            f"warning: --ab-env {', '.join(sorted(split))}: the bench declares it in ENV, so it is part of the "
            "scenario's identity and base and cand become different series; `benchdb check` will find nothing "
            "to compare. To gate code with the variable as a setting, give both sides the same value (or leave it "
            "out of ENV)"
        )


def deployments(
    urls: Sequence[str], files: Sequence[str] | None, runs: list[RunOptions]
) -> dict[str, list[RunOptions]]:
    """Each side's runs of ``--ab-url BASE_URL CAND_URL`` (``urls``): its endpoint, and its hardware
    from ``--ab-hardware-file BASE CAND`` (``files``; else the one --hardware-file / --server-hardware
    of both). Two
    different systems must not share a device name: the device is what a result's hardware is
    found by."""
    from benchdb.backends.openai.backend import server_system, system_device
    from benchdb.backends.openai.urls import check_url

    if any(o.backend != "openai" for o in runs):
        raise BenchdbError("--ab-url compares two OpenAI-compatible endpoints: give --backend openai")
    for url in urls:
        check_url(url, "--ab-url")
    for name in ("url", "server"):
        if any(backend_option(o, name) for o in runs):
            raise BenchdbError(f"--ab-url gives both endpoints; leave out --{name}")
    shared = [o for o in runs if backend_option(o, "hardware_file") or backend_option(o, "server_hardware")]
    if files and shared:
        raise BenchdbError(
            "--ab-hardware-file gives each side's hardware; leave out --hardware-file and --server-hardware"
        )
    if not files and len(shared) < len(runs):
        raise BenchdbError(
            "--ab-url measures servers on other hardware: describe each with --ab-hardware-file "
            "BASE.yaml CAND.yaml (or both with one --hardware-file FILE or --server-hardware NAME)"
        )
    out: dict[str, list[RunOptions]] = {}
    for i, side in enumerate(SIDES):
        given = {"url": urls[i], **({"hardware_file": files[i]} if files else {})}
        out[side] = [options.apply(o, given, f"--ab-url {side}") for o in runs]
    found = [server_system(out[s][0], "--ab-hardware-file" if files else None) for s in SIDES]
    systems = [f[0] for f in found if f is not None]
    if (
        files
        and len(systems) == 2
        and system_device(systems[0]) == system_device(systems[1])
        and identity.hardware_id(systems[0]) != identity.hardware_id(systems[1])
    ):
        raise BenchdbError(
            f"--ab-hardware-file {files[0]} and {files[1]} describe two systems both called "
            f"{system_device(systems[0])}; give each its own system_name"
        )
    return out
