-- Schema 8: what an imported result's source meant by its figures. Serving tools each define TTFT,
-- ITL and TPOT their own way (GuideLLM's TPOT includes the first token, SGLang's and vLLM's ITL is
-- the gap between streamed chunks, AIPerf's divides by client-tokenized counts): one row per
-- imported result and benchdb metric with the source's closest figure and its definition,
-- benchdb's definition, whether they agree, and whether benchdb could recompute its own from the
-- source's per-request data (why not, where it could not). Long format, as source_statistics.
CREATE TABLE source_definitions (
    result_id          VARCHAR NOT NULL,      -- results.result_id
    metric             VARCHAR NOT NULL,      -- benchdb's metric (ttft_s, tpot_s, itl_token_s, ...)
    source_metric      VARCHAR,               -- the source's closest figure (source_statistics.metric), if any
    source_definition  VARCHAR,
    benchdb_definition VARCHAR,
    same_definition    BOOLEAN,               -- NULL: not comparable
    recomputed         BOOLEAN NOT NULL,      -- benchdb's figure was recomputed from the source's requests
    why                VARCHAR                -- why not, when it was not
);
