#!/usr/bin/env bash
# The MPI build on two nodes, as a hostfile launch across machines runs it
# (docs/distributed.md), on this one machine: two network namespaces joined by a veth pair
# stand for the nodes, 10.77.0.1 and 10.77.0.2, listed in a hostfile with one slot each.
# mpirun runs in the first; it starts the second's daemon through a stand-in for ssh
# (plm_rsh_agent) that runs the command in that namespace with a fresh environment, and
# the ranks and daemons talk over TCP on the veth link alone (btl tcp,self; the byte
# transfer and out-of-band channels restricted to 10.77.0.0/24). Each node has its own
# TMPDIR; the file system is shared, as the binary, corpus and run directory must be.
#
# With LIPFORMER_MPIRUN_HOSTS naming that mpirun, it runs the tests that use it:
#   cmd/train TestMPIHosts/TrainAsOneProcess  replicas on two nodes equal one process
#   cmd/train TestMPIHosts/KilledNodeResumes  SIGKILL to the second node's replica ends
#                                             the job; the run directory resumes
#   dist TestMPISumTimes                      float32 all-reduces up to P3's gradient, timed
# and prints the bytes the veth link carried. A test that skips with the nodes ready fails
# the script.
#
#   bash dist/twohosts.sh                          # as root, from anywhere
#   LIPFORMER_SUM_REPS=40 bash dist/twohosts.sh    # more timed calls per size
#
# Arguments go to go test (e.g. -run MPISumTimes). Without root, a working `ip netns` or
# mpirun it prints "skipping: ..." and exits 0. It deletes its namespaces (and the veth
# pair with them) on exit.
set -euo pipefail
cd "$(dirname "$0")/.."

skip() {
	echo "skipping: $*"
	exit 0
}
[ "$(id -u)" = 0 ] || skip "not root: network namespaces need root"
command -v ip >/dev/null || skip "no ip command (iproute2)"
ip netns list >/dev/null 2>&1 || skip "ip netns does not work here"
command -v mpirun >/dev/null || skip "no mpirun (openmpi-bin)"

tag=lfn$$ # unique to this run: namespace and veth names
nsA=${tag}a nsB=${tag}b
hostA=10.77.0.1 hostB=10.77.0.2
tmp=$(mktemp -d)
tests= # the process group of the tests while they run
cleanup() {
	[ -z "$tests" ] || kill -KILL -- "-$tests" 2>/dev/null || true
	for ns in "$nsA" "$nsB"; do
		[ -e "/var/run/netns/$ns" ] || continue
		# processes left in the namespace (by an interrupted test) would keep it alive
		pids=$(ip netns pids "$ns" 2>/dev/null || true)
		[ -z "$pids" ] || kill -KILL $pids 2>/dev/null || true
		ip netns del "$ns" || true
	done
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

if ! err=$(ip netns add "$nsA" 2>&1); then
	skip "cannot create a network namespace: $err"
fi
ip netns add "$nsB"
ip link add "${tag}x" netns "$nsA" type veth peer name "${tag}y" netns "$nsB"
ip -n "$nsA" addr add "$hostA/24" dev "${tag}x"
ip -n "$nsB" addr add "$hostB/24" dev "${tag}y"
for ns in "$nsA" "$nsB"; do
	ip -n "$ns" link set lo up
done
ip -n "$nsA" link set "${tag}x" up
ip -n "$nsB" link set "${tag}y" up
mkdir "$tmp/$hostA" "$tmp/$hostB"

printf '%s slots=1\n%s slots=1\n' "$hostA" "$hostB" >"$tmp/hosts"

# ssh's stand-in: rsh HOST COMMAND... runs the shell command line COMMAND... in HOST's
# namespace with a fresh environment, as ssh runs it in a login's.
cat >"$tmp/rsh" <<EOF
#!/bin/sh
host=\$1
shift
case \$host in
$hostA) ns=$nsA ;;
$hostB) ns=$nsB ;;
*)
	echo "rsh: no node \$host" >&2
	exit 255
	;;
esac
exec env -i PATH="$PATH" HOME="$HOME" TMPDIR="$tmp/\$host" ip netns exec "\$ns" sh -c "\$*"
EOF

# mpirun on the first node with the hostfile: the tests add -np 2 and the rest. Both nodes
# are this machine's cores: bound (Open MPI binds each rank to a core when a node starts at
# most two), both ranks would share core 0 and a round trip would wait for a time slice.
cat >"$tmp/mpirun" <<EOF
#!/bin/sh
exec env TMPDIR="$tmp/$hostA" ip netns exec "$nsA" mpirun --allow-run-as-root \\
	--hostfile "$tmp/hosts" --map-by node --bind-to none --mca plm_rsh_agent "$tmp/rsh" \\
	--mca btl tcp,self --mca btl_tcp_if_include 10.77.0.0/24 --mca oob_tcp_if_include 10.77.0.0/24 "\$@"
EOF
chmod +x "$tmp/rsh" "$tmp/mpirun"

echo "== two nodes: namespaces $nsA ($hostA) and $nsB ($hostB), veth ${tag}x-${tag}y"
# the tests run in a process group of their own, which cleanup ends if they still run
set -m
(
	LIPFORMER_MPIRUN_HOSTS=$tmp/mpirun go test -tags mpi -count=1 -p 1 -v \
		-run 'MPIHosts|MPISumTimes' "$@" ./dist ./cmd/train 2>&1 | tee "$tmp/out"
) &
tests=$!
set +m
status=0
wait "$tests" || status=$?
tests=
if grep -- '--- SKIP' "$tmp/out"; then
	echo "FAIL: a test skipped with $nsA and $nsB ready"
	status=1
fi

stats=/sys/class/net/${tag}y/statistics
rx=$(ip netns exec "$nsB" cat "$stats/rx_bytes")
tx=$(ip netns exec "$nsB" cat "$stats/tx_bytes")
awk -v rx="$rx" -v tx="$tx" -v a="$hostA" -v b="$hostB" \
	'BEGIN { printf "the veth link carried %.1f MB from %s to %s and %.1f MB back\n", rx / 1e6, a, b, tx / 1e6 }'
exit "$status"
