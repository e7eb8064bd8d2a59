"""Documents people hand benchdb outside the importers (a config file, a hardware file, a price list)
are read by the one bounded reader: a YAML alias bomb or a list nested 5,000 deep ends in one line
naming the file, in a real subprocess that stays small (peak RSS, from wait4) and quick."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import child, need_module

pytestmark = pytest.mark.core

SERVING = Path(__file__).parents[1] / "fixtures" / "interop" / "serving"
VLLM = SERVING / "vllm" / "c2_detailed.json"

#: The billion laughs as one value: nine aliases of nine aliases ... nine levels down (9**9 strings
#: once expanded), all inside the field the command reads.
LAUGHS = (
    "[&a [lol, lol, lol, lol, lol, lol, lol, lol, lol], "
    + ", ".join(f"&{b} [{', '.join([f'*{a}'] * 9)}]" for a, b in zip("abcdefgh", "bcdefghi", strict=True))
    + "]"
)
DEEP = "[" * 5_000 + "]" * 5_000
#: What each command does with the expanded bomb (where today's code walks it).
COMMANDS = {
    "config": (
        "runs: [{{backends: numpy, models: {bomb}}}]\n",
        lambda f, tmp: ["run", "--config", f, "--dry-run"],
        "config file {f} is ",
    ),
    "hardware-file": (
        "nodes: {bomb}\naccelerator: {{name: X}}\n",
        lambda f, tmp: ["import", "vllm-serve", str(VLLM), "--hardware-file", f, "--out", str(tmp / "out")],
        "--hardware-file {f}: ",
    ),
    "server-hardware": (
        "nodes: {bomb}\naccelerator: {{name: X}}\n",
        lambda f, tmp: [
            "run",
            "--backend",
            "openai",
            "--model",
            "m",
            "--url",
            "http://127.0.0.1:9",
            "--server-hardware",
            f,
        ],
        "--server-hardware {f}: ",
    ),
    "prices": (
        "accelerator_hour: {{A: {bomb}}}\n",
        lambda f, tmp: ["report", "--optimal-hardware", "--per", "cost", "--prices", f, "--db", str(tmp / "w.duckdb")],
        "prices file {f} is ",
    ),
}
#: A guard, far above what the reader needs: today's code would take gigabytes before failing.
ADDRESS_SPACE = 3 * 2**30


#: Runs `benchdb ARGS` and prints "EXIT_CODE PEAK_RSS_KIB": started from this small process, not
#: from pytest. On Linux a child's peak RSS (ru_maxrss) includes the memory of the process it was
#: forked from (recorded at exec), so a child forked from a large test process would report that
#: process's size, not its own.
_MEASURE = """
import os, resource, subprocess, sys
limit = int(sys.argv[1])

def guard():
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

proc = subprocess.Popen([sys.executable, "-m", "benchdb", *sys.argv[2:]], stdout=subprocess.DEVNULL,
                        preexec_fn=guard)
_, status, usage = os.wait4(proc.pid, 0)
print(os.waitstatus_to_exitcode(status), usage.ru_maxrss)
"""


def measured(args: list[str], tmp_path: Path, timeout: float = 60) -> tuple[int, str, int, float]:
    """(exit code, stderr, peak RSS in bytes, seconds) of `benchdb ARGS` in its own process."""
    log = tmp_path / "stderr.txt"
    start = time.monotonic()
    argv = [sys.executable, "-c", _MEASURE, str(ADDRESS_SPACE), *args]
    with log.open("w") as err, child(argv, stdout=subprocess.PIPE, stderr=err, text=True) as proc:
        try:
            out, _ = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:  # the whole group goes as the block ends
            return -9, log.read_text(), 0, time.monotonic() - start
    code, peak_kib = (int(x) for x in out.split())
    return code, log.read_text(), peak_kib * 1024, time.monotonic() - start


@pytest.mark.parametrize("bomb", ["laughs", "deep"])
@pytest.mark.parametrize("command", list(COMMANDS))
def test_a_document_bomb_is_one_line_quickly_and_in_little_memory(tmp_path, command, bomb):
    use, args, prefix = COMMANDS[command]
    if command == "server-hardware":
        need_module("httpx", "serving")  # the openai backend is unavailable without it
    text = use.format(bomb=LAUGHS if bomb == "laughs" else DEEP)
    path = tmp_path / "bomb.yaml"
    path.write_text(text)
    assert path.stat().st_size < 40_000
    rc, stderr, peak, seconds = measured(args(str(path), tmp_path), tmp_path)
    lines = [ln for ln in stderr.splitlines() if ln.strip()]
    assert rc == 2 and len(lines) == 1, stderr[-2000:]
    assert lines[0].startswith("benchdb: error: " + prefix.format(f=path)), lines[0]
    words = "anchor or alias &a at line 1" if bomb == "laughs" else "nested more than 100 levels deep"
    assert words in lines[0]
    assert peak < 200 * 2**20, f"{peak / 2**20:.0f} MiB"
    assert seconds < 30  # generous: the reader stops at the first anchor or the 101st level


def test_a_deep_json_config_is_one_line(tmp_path):
    path = tmp_path / "deep.json"
    path.write_text('{"runs": ' + "[" * 100_000 + "]" * 100_000 + "}")
    rc, stderr, peak, _ = measured(["run", "--config", str(path), "--dry-run"], tmp_path)
    assert rc == 2 and stderr.strip() == f"benchdb: error: config file {path} is {_too_deep()}", stderr[-2000:]
    assert peak < 200 * 2**20


def test_a_config_file_over_the_cap_is_refused_unread(tmp_path):
    path = tmp_path / "huge.yaml"
    with path.open("wb") as f:
        f.truncate(8 * 2**30)
    rc, stderr, peak, _ = measured(["run", "--config", str(path), "--dry-run"], tmp_path)
    assert rc == 2 and f"config file {path} is larger than the 1 MiB" in stderr, stderr[-2000:]
    assert peak < 200 * 2**20


def _too_deep() -> str:
    from benchdb.schema.documents import too_deep

    return too_deep()
