"""benchdb.backends.shared.tiny: the configs behind ``tiny:<model_type>`` specs. Each is of the model
type it is named for, small in every width it sets (random weights, built in a moment on a CPU), and
the same on every call: its JSON is hashed into the model's revision, part of each result's identity."""

from __future__ import annotations

import pytest

from benchdb.backends.shared import models
from benchdb.backends.shared.tiny import tiny_configs
from benchdb.errors import BenchdbError

#: Widths a config sets (its own or a sub-config's), none above this.
WIDTHS = ("hidden_size", "d_model", "intermediate_size", "encoder_ffn_dim", "decoder_ffn_dim")


def _widths(doc) -> list[int]:
    if isinstance(doc, dict):
        own = [v for k, v in doc.items() if k in WIDTHS and isinstance(v, int)]
        return own + [w for v in doc.values() for w in _widths(v)]
    return []


def test_each_config_is_its_model_type_small_and_the_same_every_time():
    configs = tiny_configs()
    assert len(configs) >= 13 and {"bert", "llama", "vit", "whisper", "clip", "llava"} <= set(configs)
    for name, make in configs.items():
        config = make()
        assert config.model_type == name, name
        widths = _widths(config.to_dict())
        assert widths and max(widths) <= 64, (name, widths)
        assert make().to_json_string() == config.to_json_string(), name


def test_a_tiny_spec_names_the_configs_it_could_have_been():
    model = models.resolve("tiny:bert")
    assert model.spec == "tiny:bert" and model.path is None
    assert model.revision == models.resolve("tiny:bert").revision != models.resolve("tiny:llama").revision
    with pytest.raises(BenchdbError) as err:
        models.resolve("tiny:nosuch")
    assert str(err.value) == "no tiny config for model type 'nosuch'; choose one of " + ", ".join(
        f"tiny:{t}" for t in tiny_configs()
    )
