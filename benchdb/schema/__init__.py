"""The contract runners and ingest share: the Parquet schema and its metadata, identities, the
backends' option sets and the system a result ran on. It imports nothing above it."""
