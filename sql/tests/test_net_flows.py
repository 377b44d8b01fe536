"""Other traffic on the NVMe/TCP path (sql/core/net_flows.sql) on real lab captures recorded with
the capture key net_flows (fixtures/lab-6.1-patched-nic-flows{,-base}: an iperf3 stream from the
target to the initiator beside 4 KiB reads): each connection's bytes equal an independent
reading of `trace-cmd report`, the path is the interface holding the NVMe/TCP address, and the
stream's bytes are iperf3's own. Needs the converter and trace-cmd."""
import collections
import os
import re
import subprocess

import pytest

from ntscope.sql import views

RUN = "lab-6.1-patched-nic-flows"
BASE = "lab-6.1-patched-nic-flows-base"
LINE = re.compile(r"\s(\d+)\.(\d{9}): tcp_probe:\s+family=AF_INET src=([\d.]+):(\d+) dest=([\d.]+):(\d+) "
                  r"mark=\S+ data_len=(\d+) snd_nxt=\S+ snd_una=(0x[0-9a-f]+) .* sock_cookie=([0-9a-f]+)")


def trace_cmd_flows(trace, from_ts, to_ts):
    """{(local, lport, remote, rport): (segments, bytes received, bytes sent)} from trace-cmd's
    text of tcp_probe, events in [from_ts, to_ts]: received = sum of data_len, sent = snd_una's
    advance between a connection's events (mod 2^32)."""
    out = subprocess.run(["trace-cmd", "report", "-t", "-i", trace], capture_output=True, text=True, check=True)
    flows = collections.defaultdict(lambda: [0, 0, 0, None])
    for line in out.stdout.splitlines():
        m = LINE.search(line)
        if not m:
            continue
        ts = int(m.group(1)) * 1_000_000_000 + int(m.group(2))
        if not from_ts <= ts <= to_ts:
            continue
        key = (m.group(3), int(m.group(4)), m.group(5), int(m.group(6)), m.group(9))
        f = flows[key]
        una = int(m.group(8), 16)
        f[0] += 1
        f[1] += int(m.group(7))
        if f[3] is not None:
            step = (una - f[3]) % 2**32
            f[2] += step if step < 2**31 else 0
        f[3] = una
    return {k[:4]: tuple(v[:3]) for k, v in flows.items()}


def test_flows_equal_trace_cmd(fixture_run):
    dst = fixture_run(RUN)
    con = views.connect(dst)
    for host in ("initiator", "target"):
        lo, hi = con.execute("SELECT from_ts, to_ts FROM nvme_io_windows WHERE host = ?", [host]).fetchone()
        want = trace_cmd_flows(os.path.join(dst, host, "trace.dat"), lo, hi)
        got = {(r[0], r[1], r[2], r[3]): (r[4], r[5], r[6]) for r in con.execute(
            "SELECT local_addr, local_port, remote_addr, remote_port, segments, bytes_received, bytes_sent "
            "FROM tcp_flows WHERE host = ?", [host]).fetchall()}
        assert got == want
        # the stream: iperf3's data connection to port 5201 carries megabytes, NVMe/TCP's port none
        assert max(b[1] + b[2] for b in got.values()) > 5e6
        assert all(4420 not in (k[1], k[3]) for k in got)


def test_path_is_the_interface_of_the_nvme_tcp_address(fixture_run):
    con = views.connect(fixture_run(RUN))
    rows = con.execute("SELECT host, address, interface FROM nvme_tcp_path_addresses ORDER BY host").fetchall()
    assert rows == [("initiator", "169.254.10.1", "eth0"), ("target", "169.254.10.2", "eth0")]
    assert con.execute("SELECT bool_and(on_nvme_path) FROM tcp_flows").fetchone()[0]


def iperf3_receiver_bytes(path):
    """iperf3's own 'receiver' line: the bytes it received (its MBytes are MiB)."""
    text = open(path).read()
    m = re.search(r"([\d.]+) ([KMG])Bytes\s+[\d.]+ [KMG]bits/sec\s+receiver", text)
    assert m, text
    return float(m.group(1)) * {"K": 2**10, "M": 2**20, "G": 2**30}[m.group(2)]


def test_the_stream_is_all_there_and_on_the_path(fixture_run):
    # the initiator received the stream's every byte as iperf3 counted them (the trace covers
    # the whole stream: iperf3 runs inside the recorded workload), and while the I/O ran the
    # path carried part of it (the stream ran faster before and after the reads)
    dst = fixture_run(RUN)
    con = views.connect(dst)
    got = con.execute("SELECT sum(data_len) FROM raw_tcp WHERE host = 'initiator' AND sport = 5201 "
                      "OR host = 'initiator' AND dport = 5201").fetchone()[0]
    want = iperf3_receiver_bytes(os.path.join(dst, "initiator", "iperf3.txt"))
    assert abs(got - want) <= 0.01 * want, (got, want)   # iperf3 prints 3 digits
    rate, path, flow = con.execute("SELECT other_bytes_per_s, path, top_flow FROM run_other_traffic").fetchone()
    assert 1e6 < rate < want / 3   # bytes/s in the ~3 s of I/O, the stream's 5 s holding more
    assert path.startswith("eth0 169.254.10.") and ":5201" in flow
    base = views.connect(fixture_run(BASE))
    assert base.execute("SELECT other_bytes_per_s FROM run_other_traffic").fetchone()[0] < 1e4


def test_without_net_flows_nothing_is_claimed(fixture_run):
    # a run recorded without the key (an older capture): no row, so compare says nothing
    con = views.connect(fixture_run("lab-6.1-patched-nic-contention-cpuwait"))
    assert con.execute("SELECT count(*) FROM run_other_traffic").fetchone()[0] == 0
    assert con.execute("SELECT count(*) FROM tcp_flows").fetchone()[0] == 0


@pytest.mark.parametrize("host_json", [{"net_flows": None}])
def test_a_host_json_without_net_flows_is_not_recorded(fixture_run, host_json):
    # the same trace, its host.json saying the key was off: no claim either way
    con = views.connect(fixture_run(RUN, host_json=host_json))
    assert con.execute("SELECT count(*) FROM path_other_traffic").fetchone()[0] == 0
