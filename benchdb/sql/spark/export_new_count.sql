-- How many results the next partitioned export adds (relation `exported`: what it holds).
SELECT count(*) FROM results WHERE result_id NOT IN (SELECT result_id FROM exported)
