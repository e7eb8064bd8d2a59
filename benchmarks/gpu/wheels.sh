#!/usr/bin/env bash
# Builds build/gpu-wheels: benchdb and the packages benchmarks/gpu/serve.sh needs beyond a GPU image's
# torch, numpy, pyarrow and jinja2 (duckdb, pydantic, transformers[serving] without torch, httpx, ...),
# as wheels for the GPU machine's Python (PYVER, default 3.12), at the versions of this machine's venv
# (.venv), which the tests ran with. A device call carries the folder (64 MiB at most, so no torch).
set -euo pipefail
cd "$(dirname "$0")/../.."
PYVER=${PYVER:-3.12}
rm -rf build/gpu-wheels && mkdir -p build/gpu-wheels
.venv/bin/python - >build/gpu-wheels.txt <<'PY'
import importlib.metadata as m, re
from packaging.requirements import Requirement
roots = ["duckdb", "click", "pyyaml", "psutil", "threadpoolctl", "pydantic", "httpx", "nvidia-ml-py", "transformers",
         "openai", "uvicorn", "fastapi", "starlette", "rich", "accelerate", "kernels"]
# on the GPU image already (torch's own dependencies, and pyarrow/numpy), or not needed offline (hf-xet;
# sigstore and its ~9 MB of dependencies: only the kernels CLI's signature check imports it)
skip = {"torch", "triton", "numpy", "pyarrow", "sympy", "networkx", "mpmath", "setuptools", "jinja2", "markupsafe",
        "filelock", "fsspec", "hf-xet", "sigstore"}
seen, stack = {}, list(roots)
while stack:
    n = re.sub(r"[-_.]+", "-", stack.pop()).lower()
    if n in seen or n in skip or (n.startswith("nvidia-") and n != "nvidia-ml-py"):
        continue
    d = m.distribution(n)
    seen[n] = d.version
    for r in d.requires or []:
        req = Requirement(r)
        if req.marker is None or req.marker.evaluate({"extra": "", "python_version": "3.12"}):
            stack.append(req.name)
print("\n".join(f"{n}=={v}" for n, v in sorted(seen.items())))
PY
.venv/bin/pip download -q --no-deps --only-binary=:all: --python-version "$PYVER" --implementation cp \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 --platform any \
  -d build/gpu-wheels -r build/gpu-wheels.txt
# transformers and its huggingface_hub 2.x stay behind: the image's transformers (5.17, hub < 2) builds
# the tiny models and serves, and with them the set and the working tree pass the 64 MiB a call carries
rm -f build/gpu-wheels/transformers-*.whl build/gpu-wheels/huggingface_hub-*.whl
# benchdb as committed (HEAD), not the working tree's edits in progress
src=$(mktemp -d) && git archive HEAD | tar -x -C "$src"
.venv/bin/pip wheel -q --no-deps --no-build-isolation -w build/gpu-wheels "$src" && rm -rf "$src"
du -sh build/gpu-wheels
# GUIDELLM=1: also GuideLLM and what it needs beyond the image (benchmarks/gpu/image-packages.txt: the
# H200 image's `pip list`) and the wheels above, for benchmarks/gpu/guidellm.sh; kernels is left out
# to stay within the 64 MiB a call carries (and hf-xet: the GPU machine is offline)
if [ -n "${GUIDELLM:-}" ]; then
  rm -f build/gpu-wheels/kernels-*.whl
  tmp=$(mktemp -d)
  .venv/bin/pip download -q --only-binary=:all: --python-version "$PYVER" --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 --platform any \
    -d "$tmp" "guidellm==${GUIDELLM_VERSION:-0.8.1}" 2>&1 | { grep -v WARNING || true; }
  .venv/bin/python - "$tmp" build/gpu-wheels benchmarks/gpu/image-packages.txt <<'PY'
import re, shutil, sys
from pathlib import Path
tmp, dest, image = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
norm = lambda n: re.sub(r"[-_.]+", "-", n).lower()
have = {norm(line.split()[0]) for line in image.read_text().splitlines()[2:] if line.strip()}
have |= {norm(w.name.split("-")[0]) for w in dest.glob("*.whl")}
skip = {"hf-xet", "torch", "triton"}
for w in sorted(tmp.glob("*.whl")):
    n = norm(w.name.split("-")[0])
    if n not in have and n not in skip and not n.startswith("nvidia-"):
        shutil.copy(w, dest)
        print("added", w.name)
PY
  rm -rf "$tmp"
  du -sh build/gpu-wheels
fi
