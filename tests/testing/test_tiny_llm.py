"""The tiny servable LLaMA: built offline, loads back with transformers, never ends early."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from conftest import need_module

need_module("torch", "the README's pinned torch")
need_module("transformers", "benchdb[torch]")
need_module("tokenizers", "benchdb[torch]")


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    from benchdb.testing import tiny_llm

    folder = tmp_path_factory.mktemp("tiny-llm") / "model"
    assert tiny_llm.build(folder) == folder
    return folder


def test_builds_a_llama_with_a_tokenizer_and_never_eos(tiny):
    config = json.loads((tiny / "config.json").read_text())
    assert config["model_type"] == "llama"
    assert (config["hidden_size"], config["num_hidden_layers"]) == (64, 2)
    assert (config["num_attention_heads"], config["num_key_value_heads"]) == (4, 2)
    gen = json.loads((tiny / "generation_config.json").read_text())
    assert gen["suppress_tokens"] == [config["eos_token_id"]]
    assert gen["do_sample"] is False


def test_generates_exactly_max_new_tokens_and_renders_the_chat_template(tiny):
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from benchdb.testing.tiny_llm import VOCAB_SIZE

    tok = AutoTokenizer.from_pretrained(tiny)
    model = AutoModelForCausalLM.from_pretrained(tiny)
    assert type(model).__name__ == "LlamaForCausalLM"
    assert len(tok) == VOCAB_SIZE
    assert tok.bos_token == "<|bos|>" and tok.eos_token == "<|eos|>"
    assert tok.pad_token == "<|pad|>" and tok.unk_token == "<|unk|>"
    text = "The server sends a token, 42 ünïcödé!"
    assert tok.decode(tok(text)["input_ids"]) == text  # byte-level: any text round-trips

    chat = tok.apply_chat_template(
        [{"role": "user", "content": "Say something"}], tokenize=False, add_generation_prompt=True
    )
    assert chat == "<|bos|><|user|>Say something<|eos|><|assistant|>"

    # the EOS row of the tied embedding / LM head is zero: EOS is never the greedy argmax
    assert torch.count_nonzero(model.get_output_embeddings().weight[tok.eos_token_id]) == 0
    prompts = ["The server sends a token", chat]
    for prompt in prompts:
        ids = tok(prompt, return_tensors="pt", add_special_tokens=False)
        out = model.generate(**ids, max_new_tokens=8)
        assert out.shape[1] - ids["input_ids"].shape[1] == 8
        assert tok.eos_token_id not in out[0, ids["input_ids"].shape[1] :].tolist()


def test_same_seed_same_model_and_cli_prints_the_folder(tiny, tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "benchdb.testing.tiny_llm", str(tmp_path / "again")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == str(tmp_path / "again")
    for name in ("tokenizer.json", "model.safetensors", "config.json", "generation_config.json"):
        assert (tmp_path / "again" / name).read_bytes() == (tiny / name).read_bytes(), name


def test_import_does_not_import_torch():
    code = (
        "import sys, benchdb.testing.tiny_llm\nassert 'torch' not in sys.modules and 'transformers' not in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)
