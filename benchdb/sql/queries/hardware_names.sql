SELECT DISTINCT device_name FROM hardware ORDER BY 1
