"""benchdb.backends.pytorch.checks: what a timed PyTorch model is measured by beside its time, on
real modules: the FLOPs of one forward (unknown, not wrong, where an op has no formula) and the
output's agreement with the fp32 model."""

from __future__ import annotations

import copy

import pytest
import torch

from benchdb.backends.pytorch.checks import agreement, count_flops
from benchdb.backends.shared import inputs, models


def test_flops_of_one_forward_or_none():
    linear = torch.nn.Linear(16, 8, bias=False)
    assert count_flops(torch, linear, {"input": torch.ones(4, 16)}) == 2 * 4 * 16 * 8

    class Broken(torch.nn.Module):
        def forward(self, x):
            raise RuntimeError("an op the counter cannot run")

    assert count_flops(torch, Broken(), {"x": torch.ones(1)}) is None


@pytest.fixture(scope="module")
def bert():
    model, net, _, failure = models.load_for_run("tiny:bert", None, 1)
    assert failure is None
    return model, net, inputs.make(model, net, 2, 16)


def test_a_lower_precision_agrees_closely_with_fp32_and_says_by_how_much(bert):
    model, net, inp = bert
    half = copy.deepcopy(net).to(torch.bfloat16)
    fields, rows = agreement(torch, model, net, half, "bf16", inp.forward, inp.forward)
    assert 0.99 < fields["cosine_similarity"] <= 1.0 + 1e-9 and 0 < fields["max_rel_err"] < 0.2
    assert "tolerance" not in fields and "agreement_error" not in fields
    assert {r[0] for r in rows} >= {"max_abs_err", "max_rel_err", "cosine_similarity"}


def test_at_fp32_the_agreement_is_recorded_only_for_a_kernelized_model(bert):
    model, net, inp = bert
    plain, plain_rows = agreement(torch, model, net, net, "fp32", inp.forward, inp.forward)
    full, full_rows = agreement(torch, model, net, net, "fp32", inp.forward, inp.forward, full=True)
    assert "cosine_similarity" not in plain and full["cosine_similarity"] == pytest.approx(1.0)
    assert len(full_rows) > len(plain_rows) and full["max_abs_err"] == 0.0


def test_an_output_that_cannot_be_compared_is_recorded_why_not_raised(bert):
    model, net, inp = bert

    class Elsewhere(torch.nn.Module):
        def forward(self, **kw):
            raise RuntimeError("no such output")

    fields, rows = agreement(torch, model, net, Elsewhere(), "bf16", inp.forward, inp.forward)
    assert rows == [] and list(fields) == ["agreement_error"]
    assert fields["agreement_error"].startswith("RuntimeError: no such output")
