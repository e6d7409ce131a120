#!/usr/bin/env bash
# Rebuilds the golden-vector generator against the installed Ice 3.7 (C++11
# mapping) and rewrites ../vectors.txt. Review the diff before committing.
#
#   crates/wire/tests/golden/gen/gen.sh [build-dir]
#
# The build goes to build-dir (default: <workspace>/target/golden-gen/manual).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../../../../.." && pwd)
BUILD=${1:-$ROOT/target/golden-gen/manual}
mkdir -p "$BUILD"
slice2cpp --output-dir "$BUILD" "$HERE/Golden.ice"
g++ -std=c++11 -DICE_CPP11_MAPPING -O1 -I"$BUILD" -o "$BUILD/gen" \
    "$HERE/gen.cpp" "$BUILD/Golden.cpp" -lIce++11 -lpthread
{
    echo "# Golden vectors written by Ice $(slice2cpp --version 2>&1) Ice::OutputStream (C++11 mapping)."
    echo "# Regenerate with crates/wire/tests/golden/gen/gen.sh; format: name hex ('-' = no bytes)."
    "$BUILD/gen"
} > "$HERE/../vectors.txt.tmp"
mv "$HERE/../vectors.txt.tmp" "$HERE/../vectors.txt"
echo "wrote $(grep -vc '^#' "$HERE/../vectors.txt") vectors to $HERE/../vectors.txt"
