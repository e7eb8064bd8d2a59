"""What a CPU is, as its fingerprint names it: the fields of /proc/cpuinfo, ARM implementers and
parts by name, macOS's brand string, and the flags that matter to inference kernels."""

from __future__ import annotations

import subprocess


def read_cpuinfo(text: str | None = None) -> dict[str, str]:
    """The first value of each field of /proc/cpuinfo (or of ``text``)."""
    if text is None:
        try:
            with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as fh:
                text = fh.read()
        except OSError:
            text = ""
    out: dict[str, str] = {}
    for line in text.splitlines():
        if ":" in line:
            k, v = line.split(":", 1)
            out.setdefault(k.strip(), v.strip())
    return out


#: ARM implementers and the parts benchdb names (the rest keep their hex part number).
_ARM_IMPLEMENTERS = {
    "0x41": "ARM",
    "0x61": "Apple",
    "0xc0": "Ampere",
    "0x48": "HiSilicon",
    "0x51": "Qualcomm",
    "0x4e": "NVIDIA",
    "0x46": "Fujitsu",
}


_ARM_PARTS = {
    ("0x41", "0xd0c"): "Neoverse-N1",
    ("0x41", "0xd40"): "Neoverse-V1",
    ("0x41", "0xd49"): "Neoverse-N2",
    ("0x41", "0xd4f"): "Neoverse-V2",
    ("0x41", "0xd8e"): "Neoverse-N3",
    ("0x41", "0xd84"): "Neoverse-V3",
    ("0x41", "0xd0b"): "Cortex-A76",
    ("0x41", "0xd08"): "Cortex-A72",
    ("0x41", "0xd03"): "Cortex-A53",
    ("0xc0", "0xac3"): "AmpereOne",
    ("0x48", "0xd01"): "Kunpeng-920",
}


_FLAGS = {
    "avx2",
    "avx512f",
    "amx_tile",
    "amx_bf16",
    "avx512_bf16",
    "avx512_vnni",
    "fma",
    "asimd",
    "sve",
    "sve2",
    "bf16",
    "i8mm",
}


def mac_brand_string() -> str | None:
    try:
        out = subprocess.run(["sysctl", "-n", "machdep.cpu.brand_string"], capture_output=True, text=True, timeout=5)
        return out.stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        return None


def fingerprint_from(
    info: dict[str, str], *, system: str, machine: str, release: str = "", mac_brand: str | None = None
) -> dict:
    """The CPU fingerprint from /proc/cpuinfo fields (empty on macOS) and the platform.

    x86: the model name. ARM Linux: implementer and ``CPU part`` (a bare "aarch64" would file a
    Graviton 2 and a Graviton 4 as one machine). macOS: the brand string (Apple M2 Pro ...).
    """
    model = info.get("model name") or None
    vendor = info.get("vendor_id") or None
    part = None
    if system == "Darwin":
        model = mac_brand or model or f"Apple {machine}"
        vendor = "Apple" if machine == "arm64" else (vendor or "Intel")
    elif "CPU implementer" in info and not model:
        impl = info["CPU implementer"].lower()
        part = info.get("CPU part", "").lower() or None
        vendor = _ARM_IMPLEMENTERS.get(impl, impl)
        model = f"{vendor} {_ARM_PARTS.get((impl, part or ''), f'part {part}')}"
    if not model:
        model = info.get("Processor") or info.get("Hardware") or machine
    flags = set(info.get("flags", "").split()) | set(info.get("Features", "").split())
    fp = {
        "kind": "cpu",
        "vendor": vendor,
        "device_name": model,
        "cpu_model": model,
        "arch": machine,
        "os": f"{system} {release}".strip(),
        "flags": sorted(flags & _FLAGS),
        "driver": None,
    }
    if part:
        fp["cpu_part"] = part
    return fp
