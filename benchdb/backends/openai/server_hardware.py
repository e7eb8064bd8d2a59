"""The hardware of a --url server: hardware files (--hardware-file, --server-hardware FILE), the
device name a described system runs under, and the --parallelism record of how the server uses it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from benchdb.backends.core_options import backend_option
from benchdb.errors import BenchdbError
from benchdb.harness.scenario import RunOptions

#: Names ending so are hardware files when given to --server-hardware.
HARDWARE_FILE_SUFFIXES = (".yaml", ".yml", ".json")


def system_device(system: dict) -> str:
    """The device of a server on a described system: ``remote:`` and its name, else its accelerators
    (``remote:8x nvidia h200-sxm-141gb``), so the scenario label says where it ran."""
    name = system.get("system_name")
    if not name:
        per_node, nodes = system.get("accelerators_per_node"), int(system.get("nodes") or 1)
        count = (
            "" if per_node in (None, 0, 1) and nodes == 1 else f"{nodes}x{per_node}x " if nodes > 1 else f"{per_node}x "
        )
        name = count + str(system.get("device_name") or "unknown")
    return "remote:" + " ".join(str(name).lower().split())


def server_system(opts: RunOptions, flag: str | None = None) -> tuple[dict, dict] | None:
    """(system, usage options) of a --url server described by a hardware file (--hardware-file, or a
    file given to --server-hardware); None for a bare --server-hardware name or none. A file that
    cannot be read is refused in one line naming it and the field, and ``flag``, the option the user
    gave it with (default: the one of these two that holds it)."""
    from benchdb.schema import system

    path, declared = backend_option(opts, "hardware_file"), backend_option(opts, "server_hardware")
    if path and declared:
        raise BenchdbError("give --hardware-file FILE or --server-hardware NAME, not both")
    if not path and declared and declared.strip().lower().endswith(HARDWARE_FILE_SUFFIXES):
        if not Path(declared).is_file():
            raise BenchdbError(
                f"--server-hardware {declared}: no such hardware file; give the path of a YAML or "
                "JSON hardware file, or a name without .yaml/.yml/.json"
            )
        path = declared
    if not path:
        return None
    flag = flag or ("--hardware-file" if backend_option(opts, "hardware_file") else "--server-hardware")
    try:
        return system.load_with_usage(path)
    except system.SystemError as exc:
        raise BenchdbError(f"{flag} {exc}") from None


def parse_parallelism(text: str) -> dict[str, Any]:
    """``tp=8,ep=8`` or ``disaggregated=true,prefill.tp=4`` -> a parallelism record, checked
    (benchdb.schema.system.parallelism)."""
    from benchdb.schema import system

    doc: dict[str, Any] = {}
    for part in (p.strip() for p in text.split(",")):
        key, eq, value = part.partition("=")
        phase, dot, name = key.strip().lower().rpartition(".")
        if not eq or not name or (dot and not phase):
            raise BenchdbError(
                f"--parallelism {text!r}: write KEY=VALUE pairs, e.g. tp=8,ep=8 or prefill.tp=4 (found {part!r})"
            )
        word = value.strip().lower()
        parsed: Any = True if word == "true" else False if word == "false" else int(word) if word.isdigit() else word
        target = doc.setdefault(phase, {}) if dot else doc
        if name in target:
            raise BenchdbError(f"--parallelism {text!r}: {key.strip()} is given twice; give each key once")
        target[name] = parsed
    try:
        return system.parallelism(doc, f"--parallelism {text}")
    except system.SystemError as exc:
        raise BenchdbError(str(exc)) from None
