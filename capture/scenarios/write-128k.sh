# Writes, large: 128 KiB sequential writes exceed the in-capsule size, so the target
# sends an R2T and the initiator answers with H2C data PDU(s).
: "${qd:=1}"
: "${runtime:=3}"
workload() { run_fio write128k --rw=write --bs=128k --iodepth="$qd"; }
truth() {
	cat <<JSON
{"scenario": "write-128k", "family": "writes", "cause": "none",
 "injected": null, "expected_bottleneck": null,
 "write_path": {"in_capsule": false, "r2t_per_io": 1, "h2c_data_pdus_per_io": ">=1"},
 "workload": [{"job": "write128k", "rw": "write", "bs_bytes": 131072, "iodepth": $qd, "cpu": null, "runtime_s": $runtime}],
 "expect": "R2T path: host send -> target R2T -> H2C data -> target exec -> response; the extra round trip shows in the network/transport stages"}
JSON
}
