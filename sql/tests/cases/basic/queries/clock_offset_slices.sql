SELECT * FROM clock_offset_slices ORDER BY slice
