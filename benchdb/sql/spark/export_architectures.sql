SELECT * FROM architectures
