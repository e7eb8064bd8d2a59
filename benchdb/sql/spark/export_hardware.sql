SELECT * FROM hardware
