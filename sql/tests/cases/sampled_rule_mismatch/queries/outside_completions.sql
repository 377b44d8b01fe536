-- the initiator's completions that are not commands of the sample: by cid, by block request
SELECT * FROM sample_outside_completions ORDER BY host;
