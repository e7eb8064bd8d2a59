"""A tiny random-weight LLaMA that ``transformers serve`` can serve, built offline in seconds.

``build(folder)`` writes, with ``save_pretrained``:

- a byte-level BPE tokenizer trained with the ``tokenizers`` library on a few hundred generated
  sentences (vocabulary 512, every byte in the initial alphabet so any text encodes), wrapped as
  ``PreTrainedTokenizerFast`` with ``<|bos|>`` / ``<|eos|>`` / ``<|pad|>`` / ``<|unk|>`` and a simple
  Jinja chat template;
- a ``LlamaForCausalLM`` with random weights: hidden 64, 2 layers, 4 attention heads, 2 KV heads,
  tied embedding / LM head (``size="small"``: hidden 1024, 16 layers, 16 heads, 8 KV heads, about
  250 M parameters stored in bfloat16, so that on a GPU the model, not Python, is the bottleneck);
- ``generation_config.json``: greedy decoding. With ``no_eos=True`` (the default) the model never
  ends a sequence itself, so every request yields exactly ``max_tokens`` tokens: the generation
  config suppresses EOS (``suppress_tokens=[eos]``, honoured by ``model.generate()``) and the EOS
  row of the tied embedding / LM head is zeroed (its logit is then exactly 0, never the greedy
  argmax, which also covers ``--continuous-batching``, whose manager ignores ``suppress_tokens``).

LLaMA and not Qwen2: for Qwen2-family model types ``transformers serve`` runs a ChatML response
parser on ``/v1/chat/completions`` streams that holds back and merges text, so chat chunks stop
being one per token.

The same inputs (``seed``) give the same tokenizer and weights. torch, transformers and tokenizers
are imported inside :func:`build` only (``import benchdb`` never imports torch).

Run ``python -m benchdb.testing.tiny_llm DIR`` to build one into DIR (it prints the folder).
"""

from __future__ import annotations

import argparse
import random
from pathlib import Path

VOCAB_SIZE = 512
N_SENTENCES = 600

#: The model shapes ``build`` knows: LlamaConfig fields, and the dtype the weights are saved in.
SIZES: dict[str, dict] = {
    "tiny": {
        "hidden_size": 64,
        "intermediate_size": 128,
        "num_hidden_layers": 2,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "max_position_embeddings": 512,
        "dtype": "float32",
    },
    "small": {
        "hidden_size": 1024,
        "intermediate_size": 4096,
        "num_hidden_layers": 16,
        "num_attention_heads": 16,
        "num_key_value_heads": 8,
        "max_position_embeddings": 2048,
        "dtype": "bfloat16",
    },
}

CHAT_TEMPLATE = (
    "{{ bos_token }}"
    "{% for message in messages %}"
    "<|{{ message['role'] }}|>{{ message['content'] }}{{ eos_token }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}"
)

_WORDS = (
    "the a one every some benchmark model token server request latency stream batch cache kernel "
    "tensor layer head query answer fast slow small large red blue green runs sends returns measures "
    "reads writes waits starts stops computes prints and or but with without over under before after "
    "cat dog bird tree river mountain city house road light sound time day night"
).split()


def sentences(n: int, seed: int = 0) -> list[str]:
    """``n`` generated sentences, the same for the same seed (the tokenizer's training text)."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        words = [rng.choice(_WORDS) for _ in range(rng.randint(4, 14))]
        s = " ".join(words).capitalize() + rng.choice([".", "!", "?", ","])
        if rng.random() < 0.3:
            s += f" {rng.randint(0, 9999)}"
        out.append(s)
    return out


def build(folder: Path, *, seed: int = 0, no_eos: bool = True, size: str = "tiny") -> Path:
    """Write the tokenizer, the random-weight model (shape ``SIZES[size]``) and its generation
    config into ``folder``."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import GenerationConfig, LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    shape = dict(SIZES[size])
    dtype = getattr(torch, shape.pop("dtype"))
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)

    tok = Tokenizer(models.BPE(unk_token="<|unk|>"))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.post_processor = processors.ByteLevel(trim_offsets=False)
    trainer = trainers.BpeTrainer(
        vocab_size=VOCAB_SIZE,
        special_tokens=["<|pad|>", "<|bos|>", "<|eos|>", "<|unk|>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),  # all 256 bytes: any text encodes
        show_progress=False,
    )
    tok.train_from_iterator(sentences(N_SENTENCES, seed), trainer=trainer)
    hf_tok = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        bos_token="<|bos|>",
        eos_token="<|eos|>",
        pad_token="<|pad|>",
        unk_token="<|unk|>",
        model_max_length=shape["max_position_embeddings"],
    )
    hf_tok.chat_template = CHAT_TEMPLATE
    hf_tok.save_pretrained(folder)

    config = LlamaConfig(
        vocab_size=len(hf_tok),
        **shape,
        bos_token_id=hf_tok.bos_token_id,
        eos_token_id=hf_tok.eos_token_id,
        pad_token_id=hf_tok.pad_token_id,
        tie_word_embeddings=True,
    )
    torch.manual_seed(seed)
    model = LlamaForCausalLM(config)
    eos = hf_tok.eos_token_id
    model.generation_config = GenerationConfig(
        bos_token_id=hf_tok.bos_token_id,
        eos_token_id=eos,
        pad_token_id=hf_tok.pad_token_id,
        do_sample=False,
        # EOS logit -inf on the model.generate() path
        **({"suppress_tokens": [eos]} if no_eos else {}),
    )
    if no_eos:
        # the tied embedding / LM head's EOS row zeroed: EOS's logit is exactly 0, below the greedy
        # argmax, on every path (--continuous-batching ignores suppress_tokens)
        embedding = model.get_input_embeddings()
        assert isinstance(embedding, torch.nn.Embedding)
        with torch.no_grad():
            embedding.weight[eos].zero_()
    model.to(dtype).save_pretrained(folder)
    return folder


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m benchdb.testing.tiny_llm", description=(__doc__ or "").split("\n")[0]
    )
    parser.add_argument("folder", type=Path, help="where to write the model (created if missing)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--eos", action="store_true", help="let the model end sequences (default: never EOS)")
    parser.add_argument(
        "--size",
        choices=sorted(SIZES),
        default="tiny",
        help="tiny: 2 layers of 64 (CPU tests); small: ~250 M parameters in bf16 (a GPU's load)",
    )
    args = parser.parse_args(argv)
    print(build(args.folder, seed=args.seed, no_eos=not args.eos, size=args.size))


if __name__ == "__main__":
    main()
