-- Per request of the serving results to export (benchdb export --format vllm-serve), in send
-- order per process: its send (t_offset_s of its per-request rows: seconds from its process's
-- window start), TTFT, E2E, tokens, whether it failed, and the arrival of each content chunk
-- (chunk_tokens rows), from which the chunk gaps are rebuilt. window_s: the process's window.
WITH s AS (
    SELECT * FROM samples WHERE list_contains($ids, result_id)
)
SELECT result_id, coalesce(repeat, 0) AS process, iteration,
       min(t_offset_s) FILTER (WHERE metric IN ('ttft_s', 'e2e_s', 'request_error', 'output_tokens')) AS sent_s,
       max(value) FILTER (WHERE metric = 'ttft_s')                       AS ttft_s,
       max(value) FILTER (WHERE metric = 'e2e_s')                        AS e2e_s,
       max(value) FILTER (WHERE metric = 'input_tokens')                 AS input_tokens,
       max(value) FILTER (WHERE metric = 'output_tokens')                AS output_tokens,
       coalesce(max(value) FILTER (WHERE metric = 'request_error'), 0) > 0 AS failed,
       list(t_offset_s ORDER BY t_offset_s) FILTER (WHERE metric = 'chunk_tokens') AS chunk_times,
       max(value) FILTER (WHERE metric = 'window_s')                     AS window_s
FROM s
WHERE metric IN ('ttft_s', 'e2e_s', 'input_tokens', 'output_tokens', 'request_error', 'chunk_tokens', 'window_s')
GROUP BY ALL
ORDER BY result_id, process, iteration
