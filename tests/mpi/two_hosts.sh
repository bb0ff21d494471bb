#!/usr/bin/env bash
# Two "hosts" on one machine: runs an MPI program on 2 processes, one in each of two network namespaces
# joined by a veth pair, with Open MPI's TCP transport between them (the only one it may use besides
# self), so that what the program's processes send each other crosses a network interface.
#
#   tests/mpi/two_hosts.sh [--min-bytes N] [--timeout S] [--same-namespace] MPIRUN PROGRAM [ARGS...]
#
# mpirun runs inside namespace 1 (10.X.Y.1/24) and starts the second host's daemon through Open MPI's
# rsh launcher, with an agent that runs it inside namespace 2 (10.X.Y.2/24) instead of over ssh; the
# hosts are named by their addresses, so nothing needs to resolve. Each rank records its network
# namespace before it execs PROGRAM. Fails when PROGRAM fails on either rank, when the two ranks did
# not run in the two namespaces (one each), or when fewer than N bytes (default 1,000,000) crossed the
# veth pair. --same-namespace starts both ranks in namespace 1 (the check that the check fails).
# Exits 77 (skipped), saying why, where it cannot run: not root, no `ip` (iproute2), no namespaces or
# veth devices (a container without CAP_NET_ADMIN), an mpirun other than Open MPI's.
# Leaves nothing behind: the namespaces (and with them the veth pair) and its temporary directory are
# removed on every exit.
set -uo pipefail

self=$(readlink -f "${BASH_SOURCE[0]}")

# --- Called by mpirun as its rsh agent: `agent HOST COMMAND...` runs COMMAND in HOST's namespace.
if [ "$(basename "$0")" = agent ]; then
    host=$1
    shift
    for pair in ${TPUDSL_TWO_HOSTS_MAP:?}; do
        if [ "${pair%%=*}" = "$host" ]; then
            # ssh hands its arguments, joined by spaces, to the remote shell: so does this.
            exec ip netns exec "${pair#*=}" /bin/sh -c "$*"
        fi
    done
    echo "two_hosts agent: no namespace for host $host" >&2
    exit 1
fi

# --- Run by mpirun as each rank's program: `rank DIR PROGRAM ARGS...` records where it runs, then execs.
if [ "$(basename "$0")" = rank ]; then
    dir=$1
    shift
    {
        echo "netns $(readlink /proc/self/ns/net)"
        echo "name $(ip netns identify $$)"
        echo "addresses $(ip -4 -o addr show scope global | awk '{printf "%s %s ", $2, $4}')"
    } > "$dir/rank.${OMPI_COMM_WORLD_RANK:?not started by Open MPI}"
    exec "$@"
fi

# --- The test.
skip() { echo "two_hosts: SKIPPED: $*"; exit 77; }

min_bytes=1000000
limit=120
same=0
while [ $# -gt 0 ]; do
    case $1 in
        --min-bytes) min_bytes=$2; shift 2 ;;
        --timeout) limit=$2; shift 2 ;;
        --same-namespace) same=1; shift ;;
        --) shift; break ;;
        -*) echo "two_hosts: unknown option $1" >&2; exit 2 ;;
        *) break ;;
    esac
done
[ $# -ge 2 ] || { echo "usage: $0 [--min-bytes N] [--timeout S] [--same-namespace] MPIRUN PROGRAM [ARGS...]" >&2; exit 2; }
mpirun=$1
shift

[ "$(id -u)" -eq 0 ] || skip "needs root (network namespaces and a veth pair)"
command -v ip > /dev/null || skip "no ip command (Debian: apt-get install iproute2)"
"$mpirun" --version 2>/dev/null | grep -Eq "Open MPI|OpenRTE" || skip "$mpirun is not Open MPI's mpirun (uses its rsh launcher and MCA options)"

# Names unique to this run: namespaces and veth devices by PID (a device name has at most 15 characters),
# the subnet by PID too (it exists only inside the two namespaces, so it cannot clash with the machine's).
id=$$
ns1=tpudsl_h1_$id
ns2=tpudsl_h2_$id
veth1=tpuh1_$id
veth2=tpuh2_$id
net=10.$((200 + id % 50)).$(((id / 50) % 250 + 1))
addr1=$net.1
addr2=$net.2
work=
job=

# shellcheck disable=SC2317   # called by the trap
cleanup() {
    local ns pid
    if [ -n "$job" ]; then   # interrupted: timeout passes the signal on to mpirun
        kill -TERM "$job" 2> /dev/null
        for _ in 1 2 3 4 5; do kill -0 "$job" 2> /dev/null && sleep 1; done
    fi
    for ns in "$ns1" "$ns2"; do
        if ip netns list 2> /dev/null | grep -qw "$ns"; then
            for pid in $(ip netns pids "$ns" 2> /dev/null); do   # what this run left there (a timed-out job)
                kill -9 "$pid" 2> /dev/null
            done
            ip netns delete "$ns" 2> /dev/null   # removes the veth end inside it, and so the pair
        fi
    done
    [ -n "$work" ] && rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

ip netns add "$ns1" 2> /dev/null || skip "cannot create a network namespace (ip netns add: needs CAP_NET_ADMIN and CAP_SYS_ADMIN)"
ip netns add "$ns2" 2> /dev/null || skip "cannot create a second network namespace"
ip link add "$veth1" netns "$ns1" type veth peer name "$veth2" netns "$ns2" 2> /dev/null ||
    skip "cannot create a veth pair between two namespaces (needs CAP_NET_ADMIN, and the kernel's veth driver)"
set -e
ip -n "$ns1" addr add "$addr1/24" dev "$veth1"
ip -n "$ns2" addr add "$addr2/24" dev "$veth2"
for ns in "$ns1" "$ns2"; do ip -n "$ns" link set lo up; done
ip -n "$ns1" link set "$veth1" up
ip -n "$ns2" link set "$veth2" up
set +e

work=$(mktemp -d /tmp/tpudsl_two_hosts.XXXXXX)
ln -s "$self" "$work/agent"
ln -s "$self" "$work/rank"
if [ "$same" -eq 1 ]; then
    export TPUDSL_TWO_HOSTS_MAP="$addr1=$ns1 $addr2=$ns1"
else
    export TPUDSL_TWO_HOSTS_MAP="$addr1=$ns1 $addr2=$ns2"
fi

echo "two_hosts: $ns1 ($veth1 $addr1/24) <-veth-> $ns2 ($veth2 $addr2/24)"
printf '%s slots=1\n' "$addr1" "$addr2" > "$work/hosts"   # the recipe's hostfile (docs/distribute.md)
# shellcheck disable=SC2054   # tcp,self is one argument
command=(timeout --kill-after=10 "$limit" ip netns exec "$ns1"
         "$mpirun" --hostfile "$work/hosts" -np 2 --bind-to none --map-by ppr:1:node
         --allow-run-as-root --oversubscribe
         --mca plm rsh --mca plm_rsh_agent "$work/agent"
         --mca pml ob1 --mca btl tcp,self
         --mca btl_tcp_if_include "$net.0/24" --mca oob_tcp_if_include "$net.0/24"
         "$work/rank" "$work" "$@")
echo "two_hosts: ${command[*]}"
start=$(date +%s%N)
"${command[@]}" &   # in the background, so that a signal to this script is handled at once (the trap)
job=$!
wait "$job"
rc=$?
job=
ms=$((($(date +%s%N) - start) / 1000000))
seconds=$((ms / 1000)).$(printf %03d $((ms % 1000)))

failed=0
fail() { echo "two_hosts: FAILED: $*"; failed=1; }
[ "$rc" -eq 0 ] || fail "the job ended with status $rc$([ "$rc" -eq 124 ] && echo " (timed out after $limit s)")"

expect1=$(ip netns exec "$ns1" readlink /proc/self/ns/net)
expect2=$(ip netns exec "$ns2" readlink /proc/self/ns/net)
for r in 0 1; do
    if [ -f "$work/rank.$r" ]; then
        echo "two_hosts: rank $r ran in network namespace $(sed -n 's/^name //p' "$work/rank.$r")" \
             "($(sed -n 's/^netns //p' "$work/rank.$r")), addresses: $(sed -n 's/^addresses //p' "$work/rank.$r")"
    else
        fail "rank $r did not start"
    fi
done
got0=$(sed -n 's/^netns //p' "$work/rank.0" 2> /dev/null)
got1=$(sed -n 's/^netns //p' "$work/rank.1" 2> /dev/null)
if [ -n "$got0" ] && [ -n "$got1" ]; then
    if [ "$got0" = "$got1" ]; then
        fail "both ranks ran in the same network namespace ($got0)"
    elif [ "$got0" != "$expect1" ] || [ "$got1" != "$expect2" ]; then
        fail "the ranks ran in $got0 and $got1, not in $ns1 ($expect1) and $ns2 ($expect2)"
    fi
fi

stat() { ip netns exec "$1" cat "/sys/class/net/$2/statistics/$3"; }
sent=$(stat "$ns1" "$veth1" tx_bytes)
received=$(stat "$ns1" "$veth1" rx_bytes)
echo "two_hosts: over the veth pair, $ns1 sent $sent bytes ($(stat "$ns1" "$veth1" tx_packets) packets)" \
     "and received $received bytes ($(stat "$ns1" "$veth1" rx_packets) packets); the job took $seconds s"
if [ $((sent + received)) -lt "$min_bytes" ]; then
    fail "fewer than $min_bytes bytes crossed the veth pair"
fi

if [ "$failed" -eq 0 ]; then
    echo "two_hosts: passed: 2 ranks in 2 network namespaces, MPI over TCP across the veth pair"
    exit 0
fi
exit 1
