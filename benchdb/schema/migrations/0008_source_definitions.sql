-- Schema 8: what an imported result's source meant by its figures. Serving tools each define TTFT,
-- ITL and TPOT their own way (GuideLLM's TPOT includes the first token, SGLang's and vLLM's ITL is
-- the gap between streamed chunks, AIPerf's divides by client-tokenized counts): definitions holds,
-- per figure, the source's definition and how benchdb recomputed its own from the per-request data
-- (a JSON object; NULL for formats imported before this schema and for sources with no such notes).
ALTER TABLE result_sources ADD COLUMN definitions JSON;
