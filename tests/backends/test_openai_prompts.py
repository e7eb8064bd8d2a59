"""benchdb.backends.openai.prompts: the prompts a load point sends. A --prompts file (JSON lines
with "prompt") is read whole or refused in one line naming the line; else prompts are generated
from the seed, of the asked length in tokens where the model folder has a tokenizer.json, in words
elsewhere."""

from __future__ import annotations

import hashlib

import pytest
from conftest import need_module

from benchdb.backends.openai import prompts
from benchdb.backends.openai.workload import WORDS
from benchdb.errors import BenchdbError
from benchdb.harness.scenario import RunOptions


def _opts(**backend_options) -> RunOptions:
    return RunOptions("openai", ("m",), backend_options=backend_options)


@pytest.mark.core
def test_a_prompts_file_is_read_whole_and_known_by_its_hash(tmp_path):
    good = tmp_path / "p.jsonl"
    good.write_text('{"prompt": "hello there"}\n\n{"prompt": 42, "other": 1}\n')
    assert prompts.read_prompts(str(good)) == ["hello there", "42"]
    assert prompts.prompts_hash(str(good)) == hashlib.sha256(good.read_bytes()).hexdigest()[:16]
    assert prompts.prompts_hash(None) is None
    # the file's prompts, whatever the length and count asked
    assert prompts.prompts_for(_opts(prompts=str(good)), "m", words=100, count=9, seed=1) == ["hello there", "42"]


@pytest.mark.core
def test_a_bad_prompts_file_is_one_line(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"prompt": "hello"}\n{"text": "no prompt key"}\n')
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n\n")
    huge = tmp_path / "huge.jsonl"
    with open(huge, "wb") as fh:  # sparse: its size is refused before a byte is read
        fh.truncate(prompts.PROMPTS_BYTES + 1)
    for path, says in (
        (bad, f'--prompts {bad} line 2: not a JSON object with "prompt"'),
        (empty, f"--prompts {empty} holds no prompt"),
        (huge, f"--prompts {huge} is larger than the"),
        (tmp_path / "none.jsonl", f"--prompts {tmp_path / 'none.jsonl'}: No such file"),
    ):
        with pytest.raises(BenchdbError) as err:
            prompts.prompts_hash(str(path))  # checked when planned, before any server starts
        assert str(err.value).startswith(says), str(err.value)


@pytest.mark.core
def test_generated_prompts_are_words_from_the_seed_without_a_tokenizer(tmp_path):
    made = prompts.prompts_for(_opts(), str(tmp_path), words=5, count=3, seed=7)
    assert len(made) == 3 and all(len(p.split()) == 5 for p in made)
    assert prompts.prompts_for(_opts(), str(tmp_path), words=5, count=3, seed=7) == made
    assert prompts.prompts_for(_opts(), str(tmp_path), words=5, count=3, seed=8) != made
    assert prompts.tokenizer_path(str(tmp_path)) is None and prompts.load_tokenizer(None) is None
    (tmp_path / "tokenizer.json").write_text("not a tokenizer")
    assert prompts.load_tokenizer(prompts.tokenizer_path(str(tmp_path))) is None  # words, not a failure


def test_generated_prompts_have_the_asked_tokens_with_the_models_tokenizer(tmp_path):
    tokenizers = need_module("tokenizers", "benchdb[torch]")
    from tokenizers import decoders, models, pre_tokenizers, trainers

    tok = tokenizers.Tokenizer(models.BPE())  # byte-level BPE, as a served model's tokenizer.json holds
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=266, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False
    )  # few merges: a word is several tokens, so 12 tokens are fewer than 12 words
    tok.train_from_iterator([" ".join(WORDS)] * 20, trainer=trainer)
    tok.save(str(tmp_path / "tokenizer.json"))
    assert prompts.tokenizer_path(str(tmp_path)) == str(tmp_path / "tokenizer.json")
    made = prompts.prompts_for(_opts(), str(tmp_path), words=12, count=4, seed=3)
    loaded = prompts.load_tokenizer(str(tmp_path / "tokenizer.json"))
    assert [len(loaded.encode(p, add_special_tokens=False).ids) for p in made] == [12, 12, 12, 12]
    assert all(len(p.split()) < 12 for p in made)
