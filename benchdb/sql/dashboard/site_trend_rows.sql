-- The static site: how many rows of history every series has in all (trends.sql bound to NULL), to
-- size the files they are written to (benchdb/web/packed.py).
SELECT count(*) FROM trends
