SELECT * FROM source_statistics
