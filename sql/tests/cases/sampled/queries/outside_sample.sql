-- outside_sample(host, cid) for the ids 0..5: in the sample when cid & 3 = 0
SELECT range AS cid, outside_sample('initiator', range) AS outside_initiator,
       outside_sample('target', range) AS outside_target
FROM range(0, 6) ORDER BY cid;
