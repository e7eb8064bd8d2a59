"""Model specs, task/family detection, tiny models (their configs: :mod:`benchdb.backends.shared.tiny`) and
loading — shared by every ML runner.

Specs:
- ``tiny:<model_type>``: random weights from a small transformers config, no download;
- a local folder with a ``config.json`` (save_pretrained output);
- a Hugging Face Hub id, resolved from the local cache only (benchdb never downloads).

torch and transformers are imported inside functions: importing this module is cheap.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from benchdb.backends.shared.tiny import tiny_configs
from benchdb.errors import BackendUnavailable, BenchdbError

FAMILIES = ("embedding", "text_generation", "vision", "audio", "multimodal")


@dataclass(frozen=True)
class Kind:
    """How benchdb treats a model type: family, task, auto class, inputs, generation."""

    model_type: str
    family: str
    task: str
    auto_class: str  # transformers Auto* class that builds/loads it
    inputs: str  # input recipe name, see benchdb.backends.shared.inputs
    generative: bool = False


KINDS: dict[str, Kind] = {
    k.model_type: k
    for k in (
        Kind("bert", "embedding", "feature-extraction", "AutoModel", "text"),
        Kind("llama", "text_generation", "text-generation", "AutoModelForCausalLM", "text", True),
        Kind("qwen2", "text_generation", "text-generation", "AutoModelForCausalLM", "text", True),
        Kind("t5", "text_generation", "text2text-generation", "AutoModelForSeq2SeqLM", "seq2seq_text", True),
        Kind("vit", "vision", "image-feature-extraction", "AutoModel", "image"),
        Kind("detr", "vision", "object-detection", "AutoModelForObjectDetection", "image"),
        Kind("wav2vec2", "audio", "audio-feature-extraction", "AutoModel", "audio_values"),
        Kind("whisper", "audio", "automatic-speech-recognition", "AutoModelForSpeechSeq2Seq", "audio_features", True),
        Kind("clip", "multimodal", "zero-shot-image-classification", "AutoModel", "text_image"),
        Kind("xclip", "multimodal", "zero-shot-video-classification", "AutoModel", "text_video"),
        Kind("clap", "multimodal", "zero-shot-audio-classification", "AutoModel", "text_audio"),
        Kind("llava", "multimodal", "image-text-to-text", "AutoModelForImageTextToText", "llava", True),
        Kind("llava_next", "multimodal", "image-text-to-text", "AutoModelForImageTextToText", "llava_next", True),
    )
}
KEY_CLASSES = tuple(KINDS)

#: Predefined model lists. ``key``/``small`` are real Hub ids for users (they must be in the local
#: cache); ``tiny`` needs nothing.
MODEL_LISTS: dict[str, tuple[str, ...]] = {
    "key": (
        "google-bert/bert-base-uncased",
        "laion/clap-htsat-unfused",
        "openai/clip-vit-base-patch32",
        "facebook/detr-resnet-50",
        "meta-llama/Llama-3.2-1B",
        "llava-hf/llava-1.5-7b-hf",
        "llava-hf/llava-v1.6-mistral-7b-hf",
        "Qwen/Qwen2-0.5B",
        "google-t5/t5-base",
        "google/vit-base-patch16-224",
        "facebook/wav2vec2-base-960h",
        "openai/whisper-base",
        "microsoft/xclip-base-patch32",
    ),
    "small": (
        "sentence-transformers/all-MiniLM-L6-v2",
        "prajjwal1/bert-tiny",
        "Qwen/Qwen2-0.5B",
        "google-t5/t5-small",
        "openai/whisper-tiny",
        "facebook/wav2vec2-base",
        "google/vit-base-patch16-224",
        "openai/clip-vit-base-patch32",
        "HuggingFaceTB/SmolLM2-135M",
    ),
    "tiny": tuple(f"tiny:{t}" for t in KINDS),
}


def expand_models(specs: tuple[str, ...] | list[str]) -> list[str]:
    """Model specs with ``list:<name>`` entries replaced by the predefined list."""
    out: list[str] = []
    for spec in specs:
        if spec.startswith("list:"):
            name = spec[5:]
            if name not in MODEL_LISTS:
                raise BenchdbError(f"unknown model list {name!r}; choose one of {', '.join(MODEL_LISTS)}")
            out.extend(MODEL_LISTS[name])
        else:
            out.append(spec)
    return out


def kind_from_config(config: Any, task: str | None = None) -> Kind:
    """The Kind of a config: known model types first, then the architecture's name."""
    mt = getattr(config, "model_type", "")
    kind = KINDS.get(mt)
    if kind is None:
        arch = (getattr(config, "architectures", None) or [""])[0]
        if arch.endswith("ForCausalLM"):
            kind = Kind(mt, "text_generation", "text-generation", "AutoModelForCausalLM", "text", True)
        elif getattr(config, "is_encoder_decoder", False):
            kind = Kind(mt, "text_generation", "text2text-generation", "AutoModelForSeq2SeqLM", "seq2seq_text", True)
        elif hasattr(config, "image_size") and hasattr(config, "num_channels"):
            kind = Kind(mt, "vision", "image-feature-extraction", "AutoModel", "image")
        elif hasattr(config, "vocab_size"):
            kind = Kind(mt, "embedding", "feature-extraction", "AutoModel", "text")
        else:
            raise BenchdbError(
                f"benchdb cannot tell the inputs of model type {mt!r}; supported types: {', '.join(KINDS)}"
            )
    if task and task != kind.task:
        overrides = {
            "feature-extraction": ("embedding", "AutoModel", False),
            "text-generation": ("text_generation", "AutoModelForCausalLM", True),
            # classifier heads (random for tiny models): their outputs' top-1 agreement with
            # fp32 is what quantized precisions are judged by
            "text-classification": ("classification", "AutoModelForSequenceClassification", False),
            "image-classification": ("vision", "AutoModelForImageClassification", False),
        }
        if task not in overrides:
            raise BenchdbError(f"--task {task!r} is not supported; use one of {', '.join(overrides)}")
        fam, auto, gen = overrides[task]
        kind = Kind(kind.model_type, fam, task, auto, kind.inputs if kind.inputs != "seq2seq_text" else "text", gen)
    return kind


@dataclass
class ResolvedModel:
    spec: str  # what the user typed (the model_id in the warehouse)
    kind: Kind
    path: str | None  # local folder with weights, None for tiny models
    revision: str | None  # Hub commit or content hash; identifies the weights
    #: the config's architectures (config.json's own list), for :meth:`info`
    architectures: list[str] | None = None
    #: the transformers config; a folder's is read on first use (:attr:`config`): planning a run
    #: of a model type benchdb knows needs only its kind, and transformers' config code imports
    #: torch (about a second of the planning process's start on a small machine)
    loaded_config: Any = None

    @property
    def config(self) -> Any:
        if self.loaded_config is None:
            import transformers as T

            assert self.path is not None, "a tiny model's config is made when it is resolved"
            self.loaded_config = T.AutoConfig.from_pretrained(self.path)
        return self.loaded_config

    def info(self, num_parameters: int | None = None) -> dict:
        return {
            "model_id": self.spec,
            "revision": self.revision,
            "model_type": self.kind.model_type,
            "architecture": (self.architectures[0] if self.architectures else None) or self.kind.auto_class,
            "family": self.kind.family,
            "task": self.kind.task,
            "num_parameters": num_parameters,
            "flops_per_item": None,
            "source": "tiny" if self.path is None else ("local" if os.path.isdir(self.spec) else "hub"),
        }


def _folder_revision(folder: Path) -> str:
    """Content identity of a local model folder: config bytes plus weight file names and sizes."""
    h = hashlib.sha256()
    cfg = folder / "config.json"
    if cfg.exists():
        h.update(cfg.read_bytes())
    for p in sorted(folder.iterdir()):
        if p.suffix in {".safetensors", ".bin", ".pt", ".pth", ".h5", ".msgpack"}:
            h.update(f"{p.name}:{p.stat().st_size}".encode())
    return "sha256:" + h.hexdigest()[:16]


def lacking(spec: str) -> list[str]:
    """The packages this environment lacks to build ``spec``: a tiny model is made from a transformers
    config with random torch weights (and exported from torch by the graph backends)."""
    import importlib.util

    if not spec.startswith("tiny:"):
        return []
    return [m for m in ("torch", "transformers") if importlib.util.find_spec(m) is None]


def torch_hint() -> str:
    """The command that installs torch and transformers (the pytorch backend's, with torch pinned)."""
    from benchdb.backends import registry

    return registry.info("pytorch").hint


def resolve(spec: str, task: str | None = None) -> ResolvedModel:
    """Find a model's config without loading weights; clear errors for what is missing."""
    if spec.startswith("tiny:"):
        missing = lacking(spec)
        if missing:
            raise BackendUnavailable(
                f"{spec} is built with torch and transformers; {' and '.join(missing)} not installed: "
                f"install with: {torch_hint()}"
            )
        mt = spec[5:]
        tiny = tiny_configs()
        if mt not in tiny:
            raise BenchdbError(
                f"no tiny config for model type {mt!r}; choose one of " + ", ".join(f"tiny:{t}" for t in tiny)
            )
        config = tiny[mt]()
        return ResolvedModel(
            spec,
            kind_from_config(config, task),
            None,
            "tiny:" + hashlib.sha256(config.to_json_string().encode()).hexdigest()[:16],
            getattr(config, "architectures", None),
            config,
        )
    folder = Path(spec).expanduser()
    if folder.is_dir():
        if not (folder / "config.json").exists():
            raise BenchdbError(
                f"model folder {spec} has no config.json; give a folder written by "
                "save_pretrained, a cached Hub id, or tiny:<model_type>"
            )
        return _from_folder(spec, folder, task, _folder_revision(folder))
    if spec.startswith(("/", ".", "~")) or not _looks_like_hub_id(spec) and "/" in spec:
        raise BenchdbError(
            f"model path {spec} does not exist; give a folder written by save_pretrained, "
            "a cached Hub id, or tiny:<model_type>"
        )
    try:
        from huggingface_hub import snapshot_download

        path = snapshot_download(spec, local_files_only=True)
    except Exception as exc:  # LocalEntryNotFoundError, bad repo id, missing hub library
        raise BenchdbError(
            f"model {spec} is not in the local Hugging Face cache and benchdb does not download; fetch it "
            f"first with `hf download {spec}` (or `huggingface-cli download {spec}`), or give a local "
            f"folder or tiny:<model_type> ({type(exc).__name__})"
        ) from None
    return _from_folder(spec, Path(path), task, Path(path).name)


def _from_folder(spec: str, folder: Path, task: str | None, revision: str) -> ResolvedModel:
    """A saved model: a model type benchdb knows is told from config.json alone (transformers'
    AutoConfig dispatches on the same key); any other needs the config's attributes, read now."""
    try:
        raw = json.loads((folder / "config.json").read_text())
    except (OSError, ValueError):
        raw = None
    if isinstance(raw, dict) and isinstance(raw.get("model_type"), str) and raw["model_type"] in KINDS:
        archs = raw.get("architectures")
        return ResolvedModel(
            spec,
            kind_from_config(SimpleNamespace(model_type=raw["model_type"]), task),
            str(folder),
            revision,
            archs if isinstance(archs, list) else None,
        )
    import transformers as T

    config = T.AutoConfig.from_pretrained(folder)
    return ResolvedModel(
        spec, kind_from_config(config, task), str(folder), revision, getattr(config, "architectures", None), config
    )


def _looks_like_hub_id(spec: str) -> bool:
    parts = spec.split("/")
    return len(parts) == 2 and all(parts)


#: What loading any model needs: torch and transformers' model code (``transformers.modeling_utils``
#: alone takes ~1.7 s on a small machine; the model itself then loads in ~0.1 s). The fork server of
#: the measuring children imports them once (isolation.prestart; the PRELOAD of the PyTorch, ONNX
#: Runtime and OpenVINO runners).
PRELOAD = ("torch", "transformers.modeling_utils")


def load_for_run(spec: str, task: str | None, threads: int):
    """(resolved model, torch module or None, load seconds, load exception or None) for a runner:
    quiet transformers, fixed torch threads, the load timed on its own."""
    import time

    import torch
    import transformers

    transformers.logging.set_verbosity_error()
    # no "Loading weights" bar: benchdb reports progress itself, and the bar's lock is a process-shared
    # semaphore that a measuring child, ended without teardown, leaves behind ("leaked semaphore")
    transformers.logging.disable_progress_bar()
    torch.set_num_threads(threads)
    model = resolve(spec, task)
    t0 = time.perf_counter()
    try:
        net = build(model)
    except Exception as exc:  # the runner records it as every scenario's status
        return model, None, 0.0, exc
    return model, net, time.perf_counter() - t0, None


def build(model: ResolvedModel):
    """Instantiate the torch model in eval mode (random weights for tiny specs, seeded)."""
    import torch
    import transformers as T

    auto = getattr(T, model.kind.auto_class)
    if model.path is None:
        torch.manual_seed(0)
        net = auto.from_config(model.config)
    else:
        net = auto.from_pretrained(model.path)
    return net.eval()
