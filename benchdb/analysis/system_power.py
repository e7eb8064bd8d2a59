"""System and facility power from accelerator power: the chassis model of ``chassis.yaml``.

The input is an accelerator's mean board power while it served (measured: NVML's energy counter
over a load point, or a source's published mean). The model adds what an 8-accelerator server draws
around its accelerators and what the facility draws around the server:

1. DC load = accelerators x their power + CPUs (idle + ``cpu_utilisation`` x (TDP - idle)) + DIMMs
   + NICs + drives + baseboard + fans. Fans follow the fan affinity law: their power goes with the
   cube of their speed, and their speed with the heat to move, so fans = ``fans_max_w`` x (the
   other components' DC load / that load with every accelerator and CPU at TDP)^3, never under 20 %
   of its speed's power (0.2^3) where the chassis idles.
2. Chassis AC = DC load / PSU efficiency at the share of the PSUs' rated power drawn (80 PLUS
   Titanium's points, linear between).
3. Facility = chassis AC x PUE (1.3 air-cooled, 1.1 liquid-cooled, or the one given).

A deployment on fewer accelerators than a chassis holds is modelled as a full chassis at the
measured per-accelerator power (the others running the same work), and said so (``extrapolated``);
per accelerator, every figure is the chassis' over the accelerators it holds. tokens/s per MW =
tokens/s per accelerator x 1e6 / facility W per accelerator. A rack-scale system (GB200/GB300), a
PCIe card (H100 PCIe, H100/H200 NVL), an accelerator without a profile, or a power above its
profile's TDP is not modelled: the reason says which.
"""

from __future__ import annotations

import functools
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchdb.errors import BenchdbError

CHASSIS = Path(__file__).with_name("chassis.yaml")
#: A measured power this far above the profile's TDP is not the profile's accelerator at work.
TDP_MARGIN = 1.1
#: The fans' least share of their full-speed power (20 % speed).
FAN_FLOOR = 0.2**3
_FIELDS = (
    "gpus",
    "gpu_tdp_w",
    "cpus",
    "cpu_tdp_w",
    "cpu_idle_w",
    "dimms",
    "dimm_w",
    "nics",
    "nic_w",
    "drives",
    "drive_w",
    "board_w",
    "fans_max_w",
    "psus",
    "psu_w",
)


@dataclass(frozen=True)
class Chassis:
    name: str
    match: tuple[str, ...]
    cooling: str
    numbers: dict[str, float]

    def __getattr__(self, key: str) -> float:
        try:
            return self.numbers[key]
        except KeyError:
            raise AttributeError(key) from None


@dataclass(frozen=True)
class Model:
    """The model's constants: PUE per cooling, CPU utilisation, PSU efficiency curve, profiles."""

    pue: dict[str, float]
    cpu_utilisation: float
    psu_efficiency: tuple[tuple[float, float], ...]
    profiles: tuple[Chassis, ...]
    source: str


@dataclass(frozen=True)
class SystemPower:
    """One accelerator's share of its chassis' AC power (``ac_w``) and of the facility's
    (``facility_w``), and the chassis that was modelled."""

    chassis: str
    cooling: str
    accelerator_w: float
    ac_w: float
    facility_w: float
    pue: float
    extrapolated: bool


def _number(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
        raise BenchdbError(f"{where} is {value!r}, not a number of 0 or more")
    return float(value)


def parse(doc: Any, source: str) -> Model:
    """A model from a chassis document (``chassis.yaml``'s fields), each value checked."""
    where = f"chassis model {source}"
    if not isinstance(doc, dict) or not isinstance(doc.get("profiles"), list):
        raise BenchdbError(f"{where}: needs profiles: a list of chassis (see {CHASSIS.name})")
    pue_doc = doc.get("pue")
    if not isinstance(pue_doc, dict):
        raise BenchdbError(f"{where}: pue must map air and liquid to a factor of 1 or more")
    pue = {k: _number(pue_doc.get(k), f"{where}: pue.{k}") for k in ("air", "liquid")}
    if any(v < 1 for v in pue.values()):
        raise BenchdbError(f"{where}: pue is facility power over IT power: 1 or more, not {pue}")
    points = doc.get("psu_efficiency")
    if not isinstance(points, list) or not points or not all(isinstance(p, list) and len(p) == 2 for p in points):
        raise BenchdbError(f"{where}: psu_efficiency must list [load share, efficiency] pairs")
    curve = tuple((_number(a, f"{where}: psu_efficiency"), _number(b, f"{where}: psu_efficiency")) for a, b in points)
    if any(not 0 < eff <= 1 for _, eff in curve):
        raise BenchdbError(f"{where}: a psu_efficiency is a share above 0 and at most 1")
    profiles = []
    for i, p in enumerate(doc["profiles"]):
        at = f"{where}: profile {i + 1}"
        if not isinstance(p, dict) or not p.get("name") or not isinstance(p.get("match"), list):
            raise BenchdbError(f"{at} needs a name and a match list of accelerator names")
        if not isinstance(p.get("cooling"), str) or p["cooling"] not in pue:
            raise BenchdbError(f"{at} ({p['name']}): cooling is {p.get('cooling')!r}, not air or liquid")
        numbers = {k: _number(p.get(k), f"{at} ({p['name']}): {k}") for k in _FIELDS}
        if numbers["gpus"] < 1 or numbers["psus"] * numbers["psu_w"] <= 0 or numbers["gpu_tdp_w"] <= 0:
            raise BenchdbError(f"{at} ({p['name']}): needs gpus, gpu_tdp_w and psus x psu_w above 0")
        profiles.append(Chassis(str(p["name"]), tuple(map(str, p["match"])), p["cooling"], numbers))
    util = _number(doc.get("cpu_utilisation", 0.2), f"{where}: cpu_utilisation")
    return Model(pue, min(util, 1.0), tuple(sorted(curve)), tuple(profiles), source)


@functools.cache
def shipped() -> Model:
    from benchdb.schema.documents import read_document

    return parse(read_document(CHASSIS), "benchdb's chassis.yaml")


def load(path: Path) -> Model:
    """A site's own chassis model (the fields of ``chassis.yaml``)."""
    from benchdb.schema.documents import DocumentError, read_document

    try:
        doc = read_document(path)
    except DocumentError as exc:
        raise BenchdbError(f"chassis model {path} is {exc.problem}") from None
    except OSError as exc:
        raise BenchdbError(f"chassis model {path} cannot be read ({exc.strerror or exc})") from None
    return parse(doc, str(path))


def profile_for(model: Model, accelerator: str | None) -> Chassis | None:
    """The profile whose match names a whole word of ``accelerator`` (``NVIDIA H100 80GB HBM3`` is
    H100; ``GB200`` is not B200)."""
    for p in model.profiles:
        for name in p.match:
            if accelerator and re.search(rf"(?<![A-Za-z0-9]){re.escape(name)}(?![A-Za-z0-9])", accelerator, re.I):
                return p
    return None


def _efficiency(curve: tuple[tuple[float, float], ...], share: float) -> float:
    if share <= curve[0][0]:
        return curve[0][1]
    for (x0, y0), (x1, y1) in zip(curve, curve[1:], strict=False):
        if share <= x1:
            return y0 + (y1 - y0) * (share - x0) / (x1 - x0) if x1 > x0 else y1
    return curve[-1][1]


def _dc(c: Chassis, gpu_w: float, cpu_w: float) -> float:
    return c.gpus * gpu_w + c.cpus * cpu_w + c.dimms * c.dimm_w + c.nics * c.nic_w + c.drives * c.drive_w + c.board_w


def chassis_ac_w(model: Model, c: Chassis, gpu_w: float) -> float:
    """The chassis' AC input with each of its accelerators at ``gpu_w``."""
    cpu_w = c.cpu_idle_w + model.cpu_utilisation * (c.cpu_tdp_w - c.cpu_idle_w)
    load = _dc(c, gpu_w, cpu_w)
    full = _dc(c, c.gpu_tdp_w, c.cpu_tdp_w)
    fans = c.fans_max_w * max(FAN_FLOOR, min(1.0, load / full) ** 3)
    dc = load + fans
    return dc / _efficiency(model.psu_efficiency, dc / (c.psus * c.psu_w))


def system_power(
    accelerator: str | None,
    accelerator_w: float | None,
    accelerators: int | None,
    *,
    model: Model | None = None,
    pue: float | None = None,
) -> SystemPower | str:
    """One accelerator's share of chassis AC and facility power, or why it is not modelled."""
    model = model or shipped()
    if accelerator_w is None or not math.isfinite(accelerator_w) or accelerator_w <= 0:
        return "no accelerator power"
    if accelerator and re.search(r"\bGB[23]00\b|NVL\d", accelerator, re.I):
        return f"{accelerator}: a rack-scale system, no 8-accelerator chassis to model"
    if accelerator and re.search(r"\bPCIe\b|\bNVL\b", accelerator, re.I):
        return f"{accelerator}: a PCIe card, not the SXM/OAM module of an 8-accelerator chassis"
    c = profile_for(model, accelerator)
    if c is None:
        return f"no chassis profile for {accelerator or 'this hardware'}"
    if accelerator_w > c.gpu_tdp_w * TDP_MARGIN:
        return f"{accelerator_w:.0f} W is above {c.name}'s accelerator TDP ({c.gpu_tdp_w:.0f} W)"
    ac = chassis_ac_w(model, c, accelerator_w)
    factor = pue if pue is not None else model.pue[c.cooling]
    per = c.gpus
    return SystemPower(
        chassis=c.name,
        cooling=c.cooling,
        accelerator_w=accelerator_w,
        ac_w=ac / per,
        facility_w=ac * factor / per,
        pue=factor,
        # an unknown count is not known to fill its chassis either
        extrapolated=not accelerators or accelerators % int(c.gpus) != 0,
    )


def tokens_per_s_per_mw(
    tokens_per_s_per_accelerator: float | None, facility_w_per_accelerator: float | None
) -> float | None:
    if not tokens_per_s_per_accelerator or not facility_w_per_accelerator or facility_w_per_accelerator <= 0:
        return None
    return tokens_per_s_per_accelerator * 1e6 / facility_w_per_accelerator
