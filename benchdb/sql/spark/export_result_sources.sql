SELECT * FROM result_sources
