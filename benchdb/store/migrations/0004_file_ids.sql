-- Schema 4: file ids come from a sequence, so a file recorded as rejected can never take an id
-- that a load in flight has already handed out.
CREATE SEQUENCE ingested_files_seq;
-- Advance it past the ids already used.
SELECT max(nextval('ingested_files_seq')) FROM range((SELECT coalesce(max(file_id), 0) FROM ingested_files));
