"""benchdb.backends.shared.inputs: every key class's inputs, whose shape is known (for the plan)
before the model is built."""

from benchdb.backends.shared import inputs, models


def test_input_shapes_are_known_before_the_model_is_built():
    for t in models.KEY_CLASSES:
        m = models.resolve(f"tiny:{t}")
        described = inputs.describe(m, 16)
        net = models.build(m)
        assert inputs.make(m, net, 1, 16, new_tokens=2).shape == described, t
