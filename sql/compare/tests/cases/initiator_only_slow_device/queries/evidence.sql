-- the verdict's evidence line: the stage's change and the kernel's own srtt beside it
SELECT group_key, evidence FROM cmp_verdict ORDER BY group_key;
