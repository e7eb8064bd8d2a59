SELECT * FROM change_points
