-- $n new file ids from the sequence (gaps after a rollback are harmless; reuse is impossible).
SELECT nextval('ingested_files_seq') FROM range($n)
