"""benchdb.backends.shared.models: a saved model of a type benchdb knows is planned from its config.json
alone (no torch, no transformers in the planning process), with the kind, model record and input
shape transformers' own config gives; any other type still reads transformers' config."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from benchdb.backends.shared import models

PLAN = """
import json, sys
from benchdb.backends.shared import inputs, models
m = models.resolve(sys.argv[1], None if sys.argv[2] == "-" else sys.argv[2])
print(json.dumps({"kind": list(vars(m.kind).values()), "info": m.info(), "shape": inputs.describe(m, 64),
                  "imported": sorted(n for n in ("torch", "transformers") if n in sys.modules)}))
"""


def _saved(folder, config) -> str:
    import transformers as T

    T.AutoModel.from_config(config).save_pretrained(folder)
    return str(folder)


def _planned(folder: str, task: str | None = None) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", PLAN, folder, task or "-"], capture_output=True, text=True, check=True
    ).stdout
    return json.loads(out)


@pytest.mark.parametrize("task", [None, "text-classification"])
def test_a_saved_model_of_a_known_type_is_planned_without_torch_as_its_config_says(tmp_path, task):
    import transformers as T

    config = models.tiny_configs()["bert"]()
    folder = _saved(tmp_path / "bert", config)
    planned = _planned(folder, task)
    assert planned["imported"] == []  # neither torch nor transformers (~1 s beside the fork server's import)
    # what transformers' own config gives, through the same rules
    loaded = T.AutoConfig.from_pretrained(folder)
    kind = models.kind_from_config(loaded, task)
    assert planned["kind"] == list(vars(kind).values())
    assert planned["info"]["architecture"] == loaded.architectures[0] == "BertModel"
    assert planned["info"]["model_type"] == "bert" and planned["info"]["task"] == kind.task
    assert planned["shape"] == "seq_len=64"
    # the measuring child reads the full config on first use: the same as AutoConfig's
    m = models.resolve(folder, task)
    assert m.loaded_config is None and m.config.to_dict() == loaded.to_dict()


def test_a_saved_model_whose_shape_needs_its_config_reads_it(tmp_path):
    config = models.tiny_configs()["vit"]()
    folder = _saved(tmp_path / "vit", config)
    planned = _planned(folder)
    assert planned["shape"] == f"image={config.image_size}x{config.image_size}"
    assert "transformers" in planned["imported"]


def test_a_model_type_benchdb_does_not_list_is_told_from_transformers_config(tmp_path):
    import transformers as T

    config = T.DistilBertConfig(dim=32, n_layers=1, n_heads=2, hidden_dim=64, vocab_size=100)
    folder = _saved(tmp_path / "distilbert", config)
    planned = _planned(folder)
    assert planned["kind"][:4] == ["distilbert", "embedding", "feature-extraction", "AutoModel"]
    assert planned["info"]["architecture"] == "DistilBertModel" and "transformers" in planned["imported"]
    assert models.resolve(folder).loaded_config is not None  # read at once: its attributes decide the kind
