#!/bin/sh
# Side-by-side runs of the Bench.ice workloads: Ice C++ and floe, each as
# server and client, alternated ROUNDS times. Prints the JSON lines of every
# run prefixed with "server/client".
#   benches/compare.sh [ROUNDS] [WORKLOAD...]     (default: 3 latency byteseq_send)
# Needs: cargo (release examples), slice2cpp, g++ with libIce++11.
set -e
root=$(cd "$(dirname "$0")/.." && pwd)
rounds=${1:-3}
[ $# -gt 0 ] && shift
workloads=${*:-latency byteseq_send}
cpp=$root/target/cpp-bench
[ -x "$cpp/bench_client" ] || "$root/benches/cpp/build.sh" "$cpp" >/dev/null
(cd "$root" && cargo build --release --quiet --example bench_server --example bench_client)
floe=$root/target/release/examples

free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

run() { # label server client
    port=$(free_port)
    out=$(mktemp)
    "$2" "$port" >"$out" 2>&1 &
    pid=$!
    i=0
    while ! grep -q "Bench ready" "$out" && [ $i -lt 50 ]; do sleep 0.1; i=$((i+1)); done
    # shellcheck disable=SC2086
    "$3" "$port" $workloads | sed "s|^|$1 |"
    "$3" "$port" shutdown >/dev/null 2>&1 || true
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    rm -f "$out"
}

r=0
while [ $r -lt "$rounds" ]; do
    run cpp/cpp "$cpp/bench_server" "$cpp/bench_client"
    run floe/floe "$floe/bench_server" "$floe/bench_client"
    run cpp/floe "$cpp/bench_server" "$floe/bench_client"
    run floe/cpp "$floe/bench_server" "$cpp/bench_client"
    r=$((r+1))
done
