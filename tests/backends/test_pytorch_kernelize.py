"""benchdb.backends.pytorch.kernelize: a model kernelized in place with the real kernels library and
a local kernel repository made here (tests/conftest.py: kernel_repo): what was replaced, the record
a result keeps of it, the kernel running in the model's forward, and Unsupported with why when
nothing can be. `benchdb run --mode kernels` end to end is tests/backends/test_pytorch_hubkernels.py."""

from __future__ import annotations

import pytest
import torch
from conftest import kernel_repo, need_module

from benchdb.backends.pytorch import hubkernels
from benchdb.backends.pytorch.kernelize import Unsupported, apply
from benchdb.backends.shared import inputs, models

need_module("kernels", "benchdb[kernels]")


def _load(spec: str):
    model, net, _, failure = models.load_for_run(spec, None, 1)
    assert failure is None
    return model, net


def test_a_local_kernel_replaces_the_layers_it_names_and_runs_in_the_forward(tmp_path):
    calls = tmp_path / "calls"
    repo = kernel_repo(tmp_path / "kernelize-replaces", calls)
    entries = hubkernels.parse(f"LlamaRMSNorm={repo}:RMSNorm")
    model, net = _load("tiny:llama")
    applied = apply(net, "tiny:llama", entries, "cpu", compiled=False, trust=False)
    assert applied.replaced == 5  # two per decoder layer (2 layers) and the final norm
    assert applied.mapping == hubkernels.identity(entries) and applied.library
    (layer,) = applied.layers
    assert (layer["class"], layer["modules"], layer["source"]) == ("LlamaRMSNorm", 5, str(repo.resolve()))
    assert layer["hash"] == hubkernels.content_hash(repo)
    assert applied.extra() == {
        "kernels": {"mapping": applied.mapping, "library": applied.library, "replaced": 5, "layers": [layer]}
    }
    with torch.inference_mode():
        net(**inputs.make(model, net, 1, 8).forward)
    assert calls.read_text() == "x" * 5  # each replaced module ran the kernel once


def test_nothing_to_replace_is_unsupported_with_why(tmp_path):
    calls = tmp_path / "calls"
    entries = hubkernels.parse(f"LlamaRMSNorm={kernel_repo(tmp_path / 'kernelize-none', calls)}:RMSNorm")
    _, bert = _load("tiny:bert")
    with pytest.raises(Unsupported, match=r"^tiny:bert has no layer LlamaRMSNorm$"):
        apply(bert, "tiny:bert", entries, "cpu", compiled=False, trust=False)
    no_compile = kernel_repo(tmp_path / "kernelize-no-compile", calls, compiles=False)
    _, llama = _load("tiny:llama")
    with pytest.raises(Unsupported) as err:
        apply(llama, "tiny:llama", hubkernels.parse(f"LlamaRMSNorm={no_compile}:RMSNorm"), "cpu", True, False)
    assert str(err.value) == (
        "the kernels for LlamaRMSNorm do not declare torch.compile support (can_torch_compile); use --mode kernels"
    )
    assert not calls.exists()
