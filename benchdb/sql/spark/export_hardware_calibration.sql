SELECT * FROM hardware_calibration
