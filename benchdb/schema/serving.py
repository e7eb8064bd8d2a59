"""The serving metric vocabulary, defined once (docs: guides/serving.md): what the openai backend
(:mod:`benchdb.backends.openai`), the imports of other serving tools (:mod:`benchdb.interop`) and
the serving reports all write and read. The metrics computed from request records are in
:mod:`benchdb.schema.serving_metrics`.

The contract rows of a serving result (``metric``, ``unit``; ``iteration`` is the request's index
in send order, warm-up requests excluded; ``t_offset_s`` is seconds from the measurement window's
start to the request's send, or to the chunk's arrival for ``chunk_tokens``):
"""

from __future__ import annotations

#: Per request (one row each; ``tpot_s`` only when it produced more than one token).
TTFT = "ttft_s"  # send -> first streamed chunk with content
E2E = "e2e_s"  # send -> end of the stream
TPOT = "tpot_s"  # (E2E - TTFT) / (output_tokens - 1)
FIRST_BYTE = "first_byte_s"  # send -> response headers
INPUT_TOKENS = "input_tokens"  # from the server's usage
OUTPUT_TOKENS = "output_tokens"  # from the server's usage, else the content chunks
REQUEST_ERROR = "request_error"  # value 1 for a request that failed (its error is in extra["errors"])
#: Per gap (several rows per request): the gap between content chunks, and per token (a gap
#: shared by the tokens of the later chunk: gap / tokens, once per token). The first is excluded.
ITL_CHUNK = "itl_chunk_s"
ITL_TOKEN = "itl_token_s"
#: The raw timeline: one row per content chunk, value = tokens it carried.
CHUNK_TOKENS = "chunk_tokens"
#: Per load point (one row each, iteration 0).
REQUEST_THROUGHPUT = "request_throughput"  # completed requests / window
OUTPUT_THROUGHPUT = "output_throughput"  # output tokens / window
TOTAL_THROUGHPUT = "total_throughput"  # (input + output tokens) / window
GOODPUT = "goodput"  # requests within every SLO / window
WINDOW = "window_s"  # the measurement window
CLIENT_CPU = "client_cpu_pct"  # the load generator's CPU use, % of one core
#: Measured energy of the device the server ran on (RAPL for a CPU, NVML for a CUDA device; only
#: when benchdb started the server here), over the whole load point, warm-up included.
ENERGY = "energy_j"
ENERGY_PER_OUTPUT_TOKEN = "energy_per_output_token_j"
#: A workload's requests (--workload; :mod:`benchdb.schema.serving_sessions`), per request: its turn
#: in its conversation (1-based), its TTFT again under the turn's kind (a conversation's first turn
#: sends no history; a later one sends the conversation so far), the prompt tokens the server says
#: its prefix cache served, the client's estimate of the prompt's words an earlier request already
#: sent or got back, and, for a replayed trace, how late it left against the trace's clock.
TURN = "turn"
TTFT_FIRST_TURN = "ttft_first_turn_s"
TTFT_LATER_TURNS = "ttft_later_turns_s"
CACHED_TOKENS = "cached_tokens"
SHARED_PREFIX_WORDS = "shared_prefix_words"
SEND_LAG = "send_lag_s"
#: The prompt's tokens by the model's own tokenizer, where the client has it (a local model folder).
CLIENT_INPUT_TOKENS = "client_input_tokens"
#: Per conversation (iteration: its number in order of first send): first send -> last turn's end,
#: for conversations that ran every turn.
SESSION = "session_s"
#: Per load point: the server's cached prompt tokens / its prompt tokens, the client's estimated
#: shared words / the prompts' words (%), and conversations that met the SLO in every turn / window.
CACHE_HIT_PCT = "cache_hit_pct"
SHARED_PREFIX_PCT = "shared_prefix_pct"
SESSION_GOODPUT = "session_goodput"
#: The load point's steady-state window (:mod:`benchdb.schema.steady_state`; its bounds, method
#: and, when none was found, why, are in the result's ``extra["steady_state"]``): TTFT and TPOT of the
#: requests sent within it, and its throughputs over its issue span (first to last send in it).
STEADY_TTFT = "steady_ttft_s"
STEADY_TPOT = "steady_tpot_s"
STEADY_OUTPUT_THROUGHPUT = "steady_output_throughput"
STEADY_REQUEST_THROUGHPUT = "steady_request_throughput"
STEADY_TOTAL_THROUGHPUT = "steady_total_throughput"

UNITS = {
    TTFT: "s",
    E2E: "s",
    TPOT: "s",
    FIRST_BYTE: "s",
    INPUT_TOKENS: "tokens",
    OUTPUT_TOKENS: "tokens",
    REQUEST_ERROR: "count",
    ITL_CHUNK: "s",
    ITL_TOKEN: "s",
    CHUNK_TOKENS: "tokens",
    REQUEST_THROUGHPUT: "req/s",
    OUTPUT_THROUGHPUT: "tokens/s",
    TOTAL_THROUGHPUT: "tokens/s",
    GOODPUT: "req/s",
    WINDOW: "s",
    CLIENT_CPU: "%",
    ENERGY: "J",
    ENERGY_PER_OUTPUT_TOKEN: "J",
    TURN: "count",
    TTFT_FIRST_TURN: "s",
    TTFT_LATER_TURNS: "s",
    CACHED_TOKENS: "tokens",
    SHARED_PREFIX_WORDS: "words",
    SEND_LAG: "s",
    CLIENT_INPUT_TOKENS: "tokens",
    SESSION: "s",
    CACHE_HIT_PCT: "%",
    SHARED_PREFIX_PCT: "%",
    SESSION_GOODPUT: "sessions/s",
    STEADY_TTFT: "s",
    STEADY_TPOT: "s",
    STEADY_OUTPUT_THROUGHPUT: "tokens/s",
    STEADY_REQUEST_THROUGHPUT: "req/s",
    STEADY_TOTAL_THROUGHPUT: "tokens/s",
}
