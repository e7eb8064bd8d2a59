"""CPU energy from RAPL counters, read through Linux sysfs (no library, no root needed where the
files are readable).

Where the counters come from:

- **powercap** (``/sys/class/powercap``): Intel RAPL, and AMD RAPL (Zen and later), which the kernel
  exposes through the same ``intel-rapl`` driver; newer kernels may name the zones ``amd-rapl``.
  Each zone has ``name`` (``package-0``, ``dram``, ``core``, ``uncore``, ``psys``), ``energy_uj``
  (a counter in microjoules) and ``max_energy_range_uj`` (where it wraps back to 0). Benchdb sums
  the ``package-*`` zones and the ``dram`` subzones (DRAM is not part of a package's count; core
  and uncore are, and psys overlaps the packages, so those are left out).
- **hwmon** ``amd_energy`` (``/sys/class/hwmon/hwmon*/name``): ``energy*_input`` in microjoules
  with ``energy*_label`` ``Esocket<N>`` per socket (64-bit counters: no wrap in practice).

A counter that went backwards wrapped: the step is ``(now - before) mod (max_energy_range_uj + 1)``.
Sampled every 20 ms by the harness monitor (monitors.ENERGY_INTERVAL_S), a 32-bit RAPL counter
(wrapping after minutes at full power) can never wrap twice between two samples.

Since 2020 (CVE-2020-8694) ``energy_uj`` is readable by root only on most distributions:
``sudo chmod a+r /sys/class/powercap/intel-rapl:*/energy_uj`` (until reboot) lets benchdb read it.

Recorded metrics (per sample of the monitor, in a scenario's file, only while measuring a CPU device:
a CUDA device's energy comes from NVML): ``energy_j`` (joules since the monitor started),
``power_w`` (mean watts since the previous sample) and ``rapl_zones`` (how many zones were summed):
the presence of ``rapl_zones`` records the method (RAPL), and the ``roofline`` view names it in
``energy_method``. Estimates (codecarbon's fraction of TDP, imported with ``benchdb import``) stay
under their own metric names and are never ``energy_j`` / ``power_w``: they never count as measured.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path

#: Environment variables that move the sysfs roots (tests use a fake powercap folder).
POWERCAP_ENV = "BENCHDB_POWERCAP_ROOT"
HWMON_ENV = "BENCHDB_HWMON_ROOT"
_POWERCAP = "/sys/class/powercap"
_HWMON = "/sys/class/hwmon"
#: Method names: measured counters. An estimate is never one of these.
MEASURED_METHODS = ("rapl", "nvml")


@dataclass(frozen=True)
class Zone:
    """One energy counter: a file in microjoules and the value it wraps at (None: never)."""

    name: str  # e.g. intel-rapl:0/package-0
    path: Path  # the energy_uj / energy*_input file
    max_uj: int | None  # max_energy_range_uj

    def read_uj(self) -> int:
        return int(self.path.read_text(encoding="ascii").strip())


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="ascii", errors="replace").strip()
    except OSError:
        return None


def _powercap_zones(root: Path) -> list[Zone]:
    zones: list[Zone] = []
    if not root.is_dir():
        return zones
    for zone in sorted(root.iterdir()):
        prefix, sep, index = zone.name.partition(":")
        if prefix not in ("intel-rapl", "amd-rapl") or not sep:
            continue  # the control-type folder itself, other drivers
        name = _read(zone / "name") or ""
        top = ":" not in index
        if not ((top and name.startswith("package")) or (not top and name == "dram")):
            continue
        max_text = _read(zone / "max_energy_range_uj")
        zones.append(
            Zone(f"{zone.name}/{name}", zone / "energy_uj", int(max_text) if max_text and max_text.isdigit() else None)
        )
    return zones


def _hwmon_zones(root: Path) -> list[Zone]:
    zones: list[Zone] = []
    if not root.is_dir():
        return zones
    for mon in sorted(root.iterdir()):
        if _read(mon / "name") != "amd_energy":
            continue
        for inp in sorted(mon.glob("energy*_input")):
            label = _read(inp.with_name(inp.name.replace("_input", "_label"))) or ""
            if label.startswith("Esocket"):
                zones.append(Zone(f"{mon.name}/amd_energy/{label}", inp, None))
    return zones


@dataclass(frozen=True)
class Probe:
    """What this machine offers: the zones that can be read, and why none can when none can."""

    zones: tuple[Zone, ...]
    detail: str

    @property
    def available(self) -> bool:
        return bool(self.zones)


def probe(powercap_root: str | os.PathLike | None = None, hwmon_root: str | os.PathLike | None = None) -> Probe:
    """The readable RAPL zones under the (injectable) sysfs roots."""
    pc = Path(powercap_root or os.environ.get(POWERCAP_ENV) or _POWERCAP)
    hw = Path(hwmon_root or os.environ.get(HWMON_ENV) or _HWMON)
    found = _powercap_zones(pc) + _hwmon_zones(hw)
    readable, refused = [], []
    for z in found:
        try:
            z.read_uj()
            readable.append(z)
        except PermissionError:
            refused.append(z)
        except (OSError, ValueError):
            pass
    if readable:
        names = ", ".join(z.name.rsplit("/", 1)[-1] for z in readable)
        return Probe(tuple(readable), f"RAPL, {len(readable)} zone(s): {names}")
    if refused:
        return Probe(
            (),
            f"RAPL counters exist but are readable by root only; "
            f"`sudo chmod a+r {pc}/intel-rapl:*/energy_uj` lets benchdb measure CPU energy",
        )
    return Probe(
        (),
        f"no RAPL counters readable ({pc} has no intel-rapl/amd-rapl package zones, "
        f"{hw} no amd_energy): CPU energy is not measured here",
    )


def step_uj(before: int, now: int, max_uj: int | None) -> int:
    """Microjoules between two readings of one counter, across a wrap-around."""
    if now >= before:
        return now - before
    if max_uj is None:  # a counter without a range never wraps: a reset
        return now
    return (now - before) % (max_uj + 1)


class RaplSource:
    """A Monitor source: CPU energy since start (``energy_j``), mean power over the last interval
    (``power_w``) and the number of zones summed (``rapl_zones``: the method marker)."""

    provides_energy = True

    def __init__(self, zones: tuple[Zone, ...] | list[Zone], clock=time.perf_counter) -> None:
        self.zones = tuple(zones)
        self.clock = clock
        self.last = [z.read_uj() for z in self.zones]
        self.total_uj = 0
        self.t_last = clock()
        self.first = True

    def sample(self) -> list[tuple[str, str, float]]:
        now = self.clock()
        step = 0
        for i, z in enumerate(self.zones):
            try:
                value = z.read_uj()
            except (OSError, ValueError):
                continue
            step += step_uj(self.last[i], value, z.max_uj)
            self.last[i] = value
        self.total_uj += step
        dt = now - self.t_last
        self.t_last = now
        rows = [("energy_j", "J", self.total_uj / 1e6)]
        if self.first:
            rows.append(("rapl_zones", "count", float(len(self.zones))))
            self.first = False
        elif dt > 0:
            rows.append(("power_w", "W", step / 1e6 / dt))
        return rows


def cpu_source(sources: list) -> RaplSource | None:
    """A RAPL source to add to a Monitor's sources, unless one of them already measures energy
    (NVML for a CUDA device) or nothing is readable here."""
    if any(getattr(s, "provides_energy", False) for s in sources):
        return None
    p = probe()
    if not p.available:
        return None
    try:
        return RaplSource(p.zones)
    except (OSError, ValueError):
        return None
