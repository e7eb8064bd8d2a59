"""benchdb.backends.shared.onnx_export: the output check against PyTorch fp32 never writes a non-finite
value: NaN/inf outputs (seen here from OpenVINO on tiny:llava at batch 4) or another shape are a
mismatch that says so, with no error metric rows (ingest rejects non-finite values) and null extra
fields."""

import json
import math

import numpy as np
import pytest

from benchdb.backends.shared import onnx_export as export


@pytest.mark.core
def test_finite_errors_are_rows_and_judged_by_the_tolerance():
    ref = np.ones((2, 3))
    status, error, rows, fields = export.check_outcome(ref, ref + 1e-5, "fp32")
    assert status == "ok" and error is None
    assert [r[0] for r in rows] == ["max_abs_err", "max_rel_err"] and math.isclose(rows[1][4], 1e-5, rel_tol=1e-6)
    status, error, rows, _ = export.check_outcome(ref, ref * 1.1, "fp32")
    assert status == "mismatch" and "max rel error 0.1 > 0.001" in error and len(rows) == 2


@pytest.mark.core
@pytest.mark.parametrize(
    "out", [np.array([[1.0, np.nan, 1.0]] * 2), np.array([[1.0, np.inf, 1.0]] * 2), np.ones((3, 2))]
)
def test_nan_inf_or_another_shape_is_a_mismatch_without_values(out):
    status, error, rows, fields = export.check_outcome(np.ones((2, 3)), out, "fp32")
    assert status == "mismatch" and "NaN or inf in the outputs, or another shape" in error
    assert rows == [] and fields["max_abs_err"] is None and fields["max_rel_err"] is None
    json.dumps(fields, allow_nan=False)
