"""Deterministic model inputs per modality, with the shape recorded as a scenario axis.

Shared by every ML runner so backends are compared on identical inputs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from benchdb.backends.shared import models
from benchdb.backends.shared.models import ResolvedModel
from benchdb.errors import BenchdbError
from benchdb.harness.scenario import RunOptions, Scenario

#: Recipes whose size is set by --seq-len (they contain text); the others have fixed shapes.
TEXT_RECIPES = {"text", "seq2seq_text", "text_image", "text_video", "text_audio", "llava", "llava_next"}
AUDIO_SAMPLES = 16000  # 1 s at 16 kHz for waveform models


@dataclass
class Inputs:
    forward: dict[str, Any]  # keyword arguments of model(**forward)
    generate: dict[str, Any] | None  # keyword arguments of model.generate(**generate)
    shape: str  # the scenario's input_shape, e.g. "seq_len=128"
    items: int  # batch size (items per call)
    extra: dict[str, Any] = field(default_factory=dict)


def uses_seq_len(model: ResolvedModel) -> bool:
    return model.kind.inputs in TEXT_RECIPES


def expand_scenarios(
    opts: RunOptions, backend: str, device: str, options, settings=None, *, generates: bool = False
) -> list[tuple[str, list[Scenario]]]:
    """Every (mode, precision, batch size, sequence length) scenario of every model in ``opts``,
    grouped by model. ``options(mode, precision)`` gives the backend's typed option set (identity),
    ``settings(mode)`` backend-specific settings (not identity). Sequence lengths apply only to
    models with text inputs; ``generates``: the backend measures generation, so the forced number
    of new tokens of a generative model is part of its input shape."""
    out = []
    for spec in models.expand_models(opts.models):
        m = models.resolve(spec, opts.task)
        lens = opts.seq_lens if uses_seq_len(m) else opts.seq_lens[:1]
        new_tokens = opts.gen_tokens if generates and m.kind.generative else None
        out.append(
            (
                spec,
                [
                    Scenario(
                        spec,
                        backend,
                        device,
                        mode,
                        precision,
                        bs,
                        describe(m, sl, new_tokens),
                        options(mode, precision).as_dict(),
                        {
                            "seq_len": sl if uses_seq_len(m) else None,
                            "task": m.kind.task,
                            **(settings(mode) if settings else {}),
                        },
                    )
                    for mode in opts.modes
                    for precision in opts.precisions
                    for bs in opts.batch_sizes
                    for sl in lens
                ],
            )
        )
    return out


def _sub(config: Any, name: str) -> Any:
    return getattr(config, name, None) or config


def _image_size(vcfg: Any) -> int:
    size = getattr(vcfg, "image_size", None)
    if isinstance(size, (list, tuple)):
        size = size[0]
    if isinstance(size, dict):
        size = size.get("height") or size.get("shortest_edge")
    return int(size or 224)


def _text_ids(torch, gen, cfg, batch: int, seq_len: int, avoid: int | None = None):
    vocab = int(getattr(cfg, "vocab_size", None) or 1000)
    high = min(vocab, 1000)
    if avoid is not None and avoid < high:
        high = avoid
    if high <= 5:
        raise BenchdbError(f"vocabulary of {vocab} tokens is too small for benchdb's random prompts")
    ids = torch.randint(5, high, (batch, seq_len), generator=gen)
    return ids, torch.ones_like(ids)


def _check_positions(cfg: Any, seq_len: int, extra_tokens: int = 0) -> None:
    limit = getattr(cfg, "max_position_embeddings", None)
    if limit and seq_len + extra_tokens > limit:
        more = f" + {extra_tokens} image/generated tokens" if extra_tokens else ""
        raise ValueError(f"seq_len {seq_len}{more} exceeds the model's max_position_embeddings {limit}")


def describe(model: ResolvedModel, seq_len: int, new_tokens: int | None = None) -> str:
    """The input_shape of a scenario, from the config alone (known before the model is built);
    ``new_tokens``, when given, is appended as ``new_tokens=N`` (generation is measured)."""
    shape = _describe(model, seq_len)
    return shape if new_tokens is None else f"{shape},new_tokens={new_tokens}"


def _describe(model: ResolvedModel, seq_len: int) -> str:
    recipe = model.kind.inputs
    if recipe in ("text", "seq2seq_text"):  # (a text model's shape needs no config: none is read)
        return f"seq_len={seq_len}"
    cfg = model.config
    if recipe == "image":
        size = _detr_or_image_size(model)
        return f"image={size}x{size}"
    if recipe == "audio_values":
        return f"audio_samples={AUDIO_SAMPLES}"
    if recipe == "audio_features":
        return f"mel={cfg.num_mel_bins}x{2 * int(cfg.max_source_positions)}"
    if recipe == "text_video":
        vcfg = _sub(cfg, "vision_config")
        size = _image_size(vcfg)
        return f"seq_len={seq_len},video={int(getattr(vcfg, 'num_frames', 8))}x{size}x{size}"
    if recipe == "text_audio":
        acfg = _sub(cfg, "audio_config")
        return f"seq_len={seq_len},mel={int(acfg.spec_size)}x{int(acfg.num_mel_bins)}"
    if recipe in ("text_image", "llava", "llava_next"):
        size = _image_size(_sub(cfg, "vision_config"))
        return f"seq_len={seq_len},image={size}x{size}"
    raise BenchdbError(f"no input recipe {recipe!r}")


def _detr_or_image_size(model: ResolvedModel) -> int:
    if model.kind.model_type == "detr":
        return 64 if model.path is None else 800
    return _image_size(model.config)


def make(model: ResolvedModel, net: Any, batch: int, seq_len: int, *, new_tokens: int = 8, seed: int = 0) -> Inputs:
    """Inputs for ``net`` (a torch module) at a batch size and sequence length, on the CPU in fp32."""
    import torch

    gen = torch.Generator().manual_seed(seed)
    cfg = model.config
    recipe = model.kind.inputs
    shape = describe(model, seq_len)
    if recipe == "text":
        _check_positions(cfg, seq_len, new_tokens if model.kind.generative else 0)
        ids, mask = _text_ids(torch, gen, cfg, batch, seq_len)
        fwd = {"input_ids": ids, "attention_mask": mask}
        return Inputs(fwd, dict(fwd) if model.kind.generative else None, shape, batch)
    if recipe == "seq2seq_text":
        ids, mask = _text_ids(torch, gen, cfg, batch, seq_len)
        start = getattr(cfg, "decoder_start_token_id", None) or 0
        dec = torch.full((batch, 1), start, dtype=torch.long)
        return Inputs(
            {"input_ids": ids, "attention_mask": mask, "decoder_input_ids": dec},
            {"input_ids": ids, "attention_mask": mask},
            shape,
            batch,
        )
    if recipe == "image":
        size = _detr_or_image_size(model)
        px = torch.randn(batch, getattr(cfg, "num_channels", 3), size, size, generator=gen)
        return Inputs({"pixel_values": px}, None, shape, batch)
    if recipe == "audio_values":
        wav = torch.randn(batch, AUDIO_SAMPLES, generator=gen)
        return Inputs({"input_values": wav}, None, shape, batch)
    if recipe == "audio_features":
        frames = 2 * int(cfg.max_source_positions)
        feats = torch.randn(batch, int(cfg.num_mel_bins), frames, generator=gen)
        start = getattr(cfg, "decoder_start_token_id", None) or 0
        dec = torch.full((batch, 1), start, dtype=torch.long)
        return Inputs({"input_features": feats, "decoder_input_ids": dec}, {"input_features": feats}, shape, batch)
    if recipe in ("text_image", "text_video"):
        tcfg, vcfg = _sub(cfg, "text_config"), _sub(cfg, "vision_config")
        _check_positions(tcfg, seq_len)
        ids, mask = _text_ids(torch, gen, tcfg, batch, seq_len)
        size = _image_size(vcfg)
        if recipe == "text_image":
            px = torch.randn(batch, 3, size, size, generator=gen)
        else:
            frames = int(getattr(vcfg, "num_frames", 8))
            px = torch.randn(batch, frames, 3, size, size, generator=gen)
        return Inputs({"input_ids": ids, "attention_mask": mask, "pixel_values": px}, None, shape, batch)
    if recipe == "text_audio":
        tcfg, acfg = _sub(cfg, "text_config"), _sub(cfg, "audio_config")
        _check_positions(tcfg, seq_len)
        ids, mask = _text_ids(torch, gen, tcfg, batch, seq_len)
        frames, mels = int(acfg.spec_size), int(acfg.num_mel_bins)
        feats = torch.randn(batch, 1, frames, mels, generator=gen)
        return Inputs({"input_ids": ids, "attention_mask": mask, "input_features": feats}, None, shape, batch)
    if recipe in ("llava", "llava_next"):
        tcfg, vcfg = _sub(cfg, "text_config"), _sub(cfg, "vision_config")
        size = _image_size(vcfg)
        image_token = int(getattr(cfg, "image_token_index", None) or cfg.image_token_id)
        vision: dict[str, Any] = {}
        if recipe == "llava":
            vision["pixel_values"] = torch.randn(batch, 3, size, size, generator=gen)
        else:
            # base image plus one tile at the model's first grid pinpoint
            h, w = (cfg.image_grid_pinpoints or [[size, size]])[0]
            tiles = 1 + (h // size) * (w // size)
            vision["pixel_values"] = torch.randn(batch, tiles, 3, size, size, generator=gen)
            vision["image_sizes"] = torch.tensor([[h, w]] * batch)
        n_image = _count_image_features(net, vision)
        _check_positions(tcfg, seq_len, n_image + new_tokens)
        text, _ = _text_ids(torch, gen, tcfg, batch, seq_len, avoid=image_token)
        ids = torch.cat([torch.full((batch, n_image), image_token, dtype=torch.long), text], dim=1)
        fwd = {"input_ids": ids, "attention_mask": torch.ones_like(ids), **vision}
        return Inputs(fwd, dict(fwd), shape, batch, {"image_tokens": n_image})
    raise BenchdbError(f"no input recipe {recipe!r}")


def _count_image_features(net: Any, vision: dict[str, Any]) -> int:
    """How many image tokens the prompt needs: as many as the vision tower yields per image."""
    import torch

    one = {k: v[:1] for k, v in vision.items()}
    with torch.inference_mode():
        feats = net.get_image_features(**one)
    if hasattr(feats, "pooler_output") and isinstance(feats.pooler_output, (list, tuple)):
        return int(feats.pooler_output[0].shape[0])
    if hasattr(feats, "last_hidden_state") and not isinstance(feats, torch.Tensor):
        feats = feats.pooler_output if feats.pooler_output is not None else feats.last_hidden_state
    if isinstance(feats, (list, tuple)):
        return int(feats[0].shape[0])
    return int(feats.shape[-2])


def feeds(names: list[str], fwd: dict[str, Any]) -> dict[str, Any]:
    """An exported graph's inputs (``names``) as numpy arrays from torch ``fwd``: by name when the
    graph kept the keyword names (dynamo), else in order (an export may drop inputs the model never
    reads, so the graph can have fewer than fwd)."""
    if set(names) <= set(fwd):
        return {n: fwd[n].numpy() for n in names}
    return {n: t.numpy() for n, t in zip(names, fwd.values(), strict=False)}


def to_device(inputs: dict[str, Any], device: Any, dtype: Any) -> dict[str, Any]:
    """Move tensors to a device; floating tensors take the scenario's precision."""
    out = {}
    for k, v in inputs.items():
        if hasattr(v, "to"):
            v = v.to(device=device, dtype=dtype) if v.is_floating_point() else v.to(device)
        out[k] = v
    return out
