"""The openai backend's typed option set (part of every scenario's identity) and its own run options.

The load point (concurrency or request rate) and the input and output tokens are in the
scenario's key (its input shape); what the server runs -- its command template, hence the engine
and its flags (tensor parallel size, quantization, KV-cache dtype, ...) -- is in its options, and
so is how a server at --url uses its system (the accelerators it runs on and its parallelism, from
its hardware file or --parallelism): TP 8 and TP 4 on one node are two deployments.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from benchdb.backends.protocol import BackendOptions, Option


@dataclass(frozen=True)
class OpenaiOptions(BackendOptions):
    #: The command template that started the server (``{port}`` left unfilled); None with --url.
    server: str | None = None
    #: The serving program (transformers, vllm, sglang.launch_server, ...); None with --url.
    engine: str | None = None
    #: The hardware the user declared for a server at --url (None: benchdb started it here).
    server_hardware: str | None = None
    #: ``ignore_eos`` and ``min_tokens`` were sent (servers that support them produce exactly
    #: the asked tokens; the output tokens are recorded either way).
    ignore_eos: bool | None = None
    #: The prompts file's content hash (None: generated prompts of the input tokens asked).
    prompts: str | None = None
    #: The accelerators of its system the server runs on (a hardware file's ``accelerators``).
    accelerators: int | None = None
    #: How the server spreads the model over them (benchdb.schema.system.parallelism): tp, pp, ep,
    #: dp, dp_attention, disaggregated, prefill/decode {workers, tp, ep}.
    parallelism: dict[str, Any] | None = None
    #: The workload's definition (:meth:`benchdb.backends.openai.workload.Workload.canonical`, seed
    #: included); None: one-turn requests of the scenario's input length.
    workload: str | None = None


OPTIONS: tuple[Option, ...] = (
    Option(
        "server",
        "str",
        None,
        "Start the server for each model from this command, with {model}, {port} "
        '(and {host}) filled in, e.g. "transformers serve {model} --port {port}"; its process group is '
        "stopped after the model's sweep.",
        metavar="COMMAND",
    ),
    Option(
        "url",
        "str",
        None,
        "Measure an existing OpenAI-compatible endpoint at this base URL instead of "
        "--server (give --hardware-file or --server-hardware).",
        metavar="URL",
    ),
    Option(
        "hardware_file",
        "str",
        None,
        "With --url: a YAML or JSON file describing the server's system "
        "(accelerator, accelerators_per_node, nodes, cpu, interconnect, ...) and how the server uses it "
        "(accelerators, parallelism); docs: guides/systems.md. This machine is only the client.",
        metavar="FILE",
    ),
    Option(
        "server_hardware",
        "str",
        None,
        "With --url: the name of the server's hardware (the scenario's "
        "device is remote:NAME), or the path of a hardware file (.yaml, .yml, .json) as --hardware-file.",
        metavar="NAME",
    ),
    Option(
        "parallelism",
        "str",
        None,
        "How the server spreads the model over its accelerators, e.g. "
        "tp=8,ep=8 or disaggregated=true,prefill.workers=2,prefill.tp=4 (keys: tp, pp, ep, dp, dp_attention, "
        "disaggregated, workers, nodes; prefill./decode. per phase); replaces a hardware file's parallelism.",
        metavar="K=V,...",
    ),
    Option("served_model", "str", None, "The model name sent in requests (default: --model).", metavar="NAME"),
    Option(
        "concurrency",
        "ints",
        (1,),
        "Closed loop: requests kept in flight (comma-separated: one load point each).",
        minimum=1,
    ),
    Option(
        "request_rate",
        "words",
        (),
        "Open loop instead: poisson:R, constant:R or gamma:R:SHAPE requests per "
        "second (comma-separated: one load point each).",
        metavar="SPEC",
    ),
    Option(
        "prompts",
        "str",
        None,
        'A JSONL file of prompts ({"prompt": ...} per line) instead of generated '
        "prompts of --seq-len tokens (exact for a local model folder with a tokenizer.json, else words).",
        metavar="FILE",
    ),
    Option(
        "workload",
        "str",
        None,
        "What each load point sends (docs: guides/serving.md): single, shared-prefix, multi-turn or trace, "
        "with its keys, e.g. multi-turn:turns=4,think=1s or shared-prefix:prefix=512,group=8; or a YAML/JSON "
        "file of the same keys. A trace replays at its own clock: --request-rate trace:SPEED.",
        metavar="KIND:K=V,...|FILE",
    ),
    Option(
        "curve",
        "int",
        0,
        "Measure a curve of N load points (8-32) instead of --concurrency: a short probe finds the "
        "highest useful concurrency, then points are spread as MLPerf Endpoints spreads them (1; low, "
        "medium and high regions in log2 space; an offline-like point at twice the highest).",
        metavar="N",
        minimum=0,
    ),
    Option("curve_max", "int", 1024, "The highest concurrency the --curve probe tries.", minimum=4),
    Option("max_requests", "int", 5000, "Measured requests at most per load point.", minimum=1),
    Option("slo", "str", None, "Service-level objective for goodput, e.g. ttft:500ms,tpot:50ms.", metavar="SLO"),
    Option(
        "ignore_eos",
        "bool",
        False,
        "Send ignore_eos and min_tokens = --gen-tokens (vLLM, SGLang) so every "
        "request produces exactly that many tokens.",
        identity=True,
    ),
    Option(
        "client_workers",
        "str",
        "1",
        "Load generator processes sharing each load point (auto: one per usable "
        "core); each on its own cores where there are enough, the concurrency or rate shared out, their "
        "timelines merged. Changes how much load one client machine can drive, not what is measured.",
        metavar="auto|N",
    ),
    Option("server_timeout", "duration", 600.0, "Time the server may take to become healthy.", minimum=1),
    Option(
        "request_timeout", "duration", 300.0, "Time one request may take before it counts as an error.", minimum=0.1
    ),
)
