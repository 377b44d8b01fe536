# Digests: the connections use NVMe/TCP header and data digests (nvme connect -g -G):
# CRC32C over every PDU header and every data PDU, computed on both hosts in the transport
# (send and receive paths). 128 KiB random reads so that the data digest has bytes to
# cover, at qd 1: at qd 4 the emulated link's queueing varied more than the digests cost
# (one pair came out faster). Where the CRC time lands varies between runs: the target's
# response building (nvmet_tcp_completion) and the clock-free network stage (the PDUs'
# send and receive paths), so truth.json names no ntprof stage; three pairs on this
# machine: end_to_end LAD 1.21, 1.59, 1.19, cause digest in each.
# digest=0: the same workload without digests, the base.
: "${digest:=1}"
: "${qd:=1}"
: "${runtime:=3}"
[ "$digest" = 0 ] || connect="-g -G"
workload() { run_fio randread128k --rw=randread --bs=128k --iodepth="$qd"; }
truth() {
	cause=digest bn='{"stock": "fabric_total"}'
	inj='{"nvme_connect": "-g -G", "header_digest": true, "data_digest": true}'
	[ "$digest" != 0 ] || cause=none bn=null inj='{"nvme_connect": "", "header_digest": false, "data_digest": false}'
	cat <<JSON
{"scenario": "digest", "family": "digest", "cause": "$cause",
 "injected": $inj,
 "expected_bottleneck": $bn,
 "workload": [{"job": "randread128k", "rw": "randread", "bs_bytes": 131072, "iodepth": $qd, "cpu": null, "runtime_s": $runtime}],
 "expect": "CRC32C over every PDU on both hosts: the transports' send and receive work grows (in the clock-free network stage and the target's response building), the verdict says digest"}
JSON
}
