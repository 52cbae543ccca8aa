#!/usr/bin/env bash
# The floor diagnostic's candidates: three copies each (ids X_a.py, X_b.py, X_c.py, as in the
# recorded runs) of eager's very matmul alone (plain.py), with a forked busy child
# (busy_child.py), with a forked idle child (idle_child.py), and rt2_sigstop_reference (sigstop),
# made in the folder given ($1), under 1_Square_matrix_multiplication_/. Prints the folder.
set -eu
HERE=$(cd "$(dirname "$0")" && pwd); ROOT=$(cd "$HERE/../../../.." && pwd)
D="$1/1_Square_matrix_multiplication_"; mkdir -p "$D"
for x in a b c; do
  for k in plain busy_child idle_child; do cp "$HERE/$k.py" "$D/${k}_$x.py"; done
  cp "$ROOT/tests/data/candidates/1_Square_matrix_multiplication_/rt2_sigstop_reference.py" "$D/sigstop_$x.py"
done
echo "$1"
