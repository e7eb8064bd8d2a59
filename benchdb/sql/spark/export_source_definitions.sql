SELECT * FROM source_definitions
