INSERT OR IGNORE INTO architectures BY NAME
SELECT arch_id, model_id, revision, model_type, architecture, family, task, num_parameters,
       flops_per_item, CAST(info AS JSON) AS info
FROM new_architectures
