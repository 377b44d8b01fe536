SELECT system, count(*) AS columns FROM raw_contract GROUP BY system ORDER BY system
