-- packed_key: the parts land in their 16 bits (h on top), any part out of range or NULL gives
-- NULL; host_numbers numbers the hosts 0.. in name order
SELECT packed_key(0, 0, 0, 0) AS zero, packed_key(1, 2, 3, 4) AS parts,
       packed_key(32767, 65535, 65535, 65535) AS all_top,
       packed_key(32768, 0, 0, 0) AS h_out, packed_key(0, 65536, 0, 0) AS a_out,
       packed_key(0, 0, -1, 0) AS b_negative, packed_key(0, 0, 0, NULL) AS c_null,
       (SELECT string_agg(host || '=' || host_n, ' ' ORDER BY host_n) FROM host_numbers) AS hosts
