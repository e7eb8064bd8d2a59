"""`benchdb bisect`: the commit that made a benchmark slower, found with an interleaved A/B at every step."""
