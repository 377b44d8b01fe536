-- outside_sample(host, cid) under the counter rule (cid & 0x3000 = 0): the tag bits do not
-- count, counters 1, 2, 3 are outside, 0 and 4 inside
SELECT cid, outside_sample('initiator', cid) AS outside_initiator,
       outside_sample('target', cid) AS outside_target
FROM (VALUES (1), (7), (4097), (8193), (12289), (16385), (16392)) v(cid) ORDER BY cid;
