-- the sampled requests' block latency beside every request's
SELECT * FROM sample_block_check;
