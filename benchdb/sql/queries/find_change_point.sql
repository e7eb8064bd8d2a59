SELECT change_id, status FROM change_points WHERE starts_with(change_id, $prefix)
