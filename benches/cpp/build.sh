#!/bin/sh
# Builds the Ice C++11 bench server and client and the fan-in client into $1
# (default: target/cpp-bench). `cargo xtask compare` builds the same programs
# into target/bench-cpp/ itself (xtask/src/compare/build.rs).
set -e
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here/../../target/cpp-bench}
mkdir -p "$out"
slice2cpp --output-dir "$out" "$here/../Bench.ice"
for p in bench_server bench_client; do
    g++ -O2 -std=c++11 -DICE_CPP11_MAPPING -I"$out" -o "$out/$p" "$here/$p.cpp" "$out/Bench.cpp" -lGlacier2++11 -lIce++11 -lpthread
done
# IceStorm's C++ API (headers and libIceStorm++11 from libzeroc-ice-dev).
g++ -O2 -std=c++11 -DICE_CPP11_MAPPING -I"$out" -o "$out/fanin_client" "$here/fanin_client.cpp" "$out/Bench.cpp" -lIceStorm++11 -lIce++11 -lpthread
echo "built $out/bench_server $out/bench_client $out/fanin_client"
