# The lab's hosts and the links between them: one rule, sourced by lab.sh (bash, on this
# machine) and by guest.sh (busybox sh, in each VM). POSIX sh plus `local`.
#
# A scenario may set `hosts="NAME:ROLE ..."` (default "target:target initiator:initiator",
# the two-VM lab). Each NAME is a VM, its host folder (runs/RUN/NAME/) and its hostname.
# Every initiator is linked to every target by `paths` point-to-point links (default 1; 2 or
# more: native multipath, one controller per link to the same subsystem, lab.sh boots with
# nvme_core.multipath=1), numbered k = 0, 1, ... (initiators in `hosts` order, then targets,
# then paths): a QEMU `-netdev dgram` pair of UDP sockets on 127.0.0.1, nothing else. On link k the initiator is 169.254.(10+k).1 and the target
# 169.254.(10+k).2 (/24), MACs 52:54:00:6e:XX:01 / :02 with XX = 0x74 + k.
# Target j (0, 1, ... in `hosts` order) exports subsystem nqn.2026-11.io.ntscope:lab
# (j = 0) or nqn.2026-11.io.ntscope:lab-NAME, namespace 1 on its null_blk, on TCP port
# 4420 + j of each of its link addresses (one nvmet port, hence one ANA group view, per link). Initiator i uses host NQN ...:uuid:6e74736f-
# 0000-4000-8000-00006c6162<21+i> (the first one the initramfs' own /etc/nvme/hostnqn).

topo_hosts() { echo "${hosts:-target:target initiator:initiator}"; }

topo_role() { # topo_role NAME: its role, or fails
	local hr
	for hr in $(topo_hosts); do
		[ "${hr%%:*}" = "$1" ] && { echo "${hr#*:}"; return 0; }
	done
	return 1
}

topo_names() { # topo_names [ROLE]: host names (of that role), in `hosts` order
	local hr
	for hr in $(topo_hosts); do
		[ -z "${1:-}" ] || [ "${hr#*:}" = "$1" ] && echo "${hr%%:*}"
	done
	return 0
}

topo_paths() { echo "${paths:-1}"; } # links per initiator-target pair

topo_links() { # one line per link: K INITIATOR TARGET PATH (PATH 0, 1, ... of that pair)
	local k=0 ini tgt p
	for ini in $(topo_names initiator); do
		for tgt in $(topo_names target); do
			p=0
			while [ $p -lt "$(topo_paths)" ]; do
				echo "$k $ini $tgt $p"
				k=$((k + 1)) p=$((p + 1))
			done
		done
	done
}

topo_index() { # topo_index NAME: its position among the hosts of its role (0, 1, ...)
	local n=0 role x
	role=$(topo_role "$1") || return 1
	for x in $(topo_names "$role"); do
		[ "$x" = "$1" ] && { echo $n; return 0; }
		n=$((n + 1))
	done
	return 1
}

topo_nqn() { # topo_nqn TARGET: the subsystem NQN it exports
	if [ "$(topo_index "$1")" = 0 ]; then echo "nqn.2026-11.io.ntscope:lab"; else echo "nqn.2026-11.io.ntscope:lab-$1"; fi
}

topo_port() { echo $((4420 + $(topo_index "$1"))); } # topo_port TARGET: its NVMe/TCP port

topo_addr() { echo "169.254.$((10 + $1)).$2"; } # topo_addr K 1|2: initiator (1) / target (2) end

topo_mac() { printf '52:54:00:6e:%02x:%02d\n' $((0x74 + $1)) "$2"; } # topo_mac K 1|2

topo_hostnqn() { # topo_hostnqn INITIATOR: host NQN and host id
	local id
	id=$(printf '6e74736f-0000-4000-8000-00006c6162%02x' $((0x21 + $(topo_index "$1"))))
	echo "nqn.2014-08.org.nvmexpress:uuid:$id $id"
}

topo_check() { # names unique, [A-Za-z0-9._-], roles known, at least one of each role
	local hr name seen=" " ni=0 nt=0
	for hr in $(topo_hosts); do
		name=${hr%%:*}
		case "$name" in '' | *[!A-Za-z0-9._-]* | .*) echo "host name '$name' (hosts=\"$(topo_hosts)\") may only use A-Z a-z 0-9 . _ -"; return 1 ;; esac
		case "$hr" in *:initiator) ni=$((ni + 1)) ;; *:target) nt=$((nt + 1)) ;;
		*) echo "host '$hr' (hosts=\"$(topo_hosts)\") is not NAME:initiator or NAME:target"; return 1 ;; esac
		case "$seen" in *" $name "*) echo "host name '$name' appears twice in hosts=\"$(topo_hosts)\""; return 1 ;; esac
		seen="$seen$name "
	done
	[ $ni -ge 1 ] && [ $nt -ge 1 ] || { echo "hosts=\"$(topo_hosts)\" needs at least one initiator and one target"; return 1; }
	case "$(topo_paths)" in [1-4]) ;; *) echo "paths='$(topo_paths)' is not 1 to 4 (links per initiator-target pair)"; return 1 ;; esac
	[ $((ni * nt * $(topo_paths))) -le 8 ] || { echo "hosts=\"$(topo_hosts)\" paths=$(topo_paths): $((ni * nt * $(topo_paths))) links, at most 8"; return 1; }
	return 0
}
