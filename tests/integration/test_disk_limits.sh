#!/usr/bin/env bash
# A candidate that fills the disk below its folders (work folder, load_inline / Triton build
# folder) is stopped at its quota (runtime_error) and its files are removed; an honest candidate
# beside it passes. With less free space than the reserve no candidate starts (task_error); a
# malformed limit is a usage error. (runner::DiskGuard, red team rt17's disk fill.)
set -uo pipefail
KGYM=$1; ROOT=$2
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
mkdir -p "$T/tmp"
export KGYM_CACHE_DIR="$T/cache"  # the build filler writes into the (content-addressed) build cache
TMPDIR="$T/tmp" KGYM_KEEP_WORK=1 KGYM_DISK_QUOTA_MB=64 KGYM_BUILD_KEEP_MB=16 "$KGYM" eval --suite "$ROOT/examples/suite" \
  --candidates "$ROOT/tests/data/disk" --profile off --cases 2 --no-timing -q --out "$T/v.jsonl" > "$T/log" 2>&1 \
  || { cat "$T/log"; exit 1; }
python3 "$ROOT/tests/integration/expect_outcomes.py" "$T/v.jsonl" "$ROOT/tests/data/disk" || exit 1
for c in fill_work_folder build_cache_filler deleted_but_open deep_path mapped_window; do
  grep "\"candidate_id\":\"19_ReLU/$c.py\"" "$T/v.jsonl" | grep -q "KGYM_DISK_QUOTA_MB" \
    || { echo "FAIL: $c's verdict does not name the disk quota"; grep "$c" "$T/v.jsonl"; exit 1; }
done
left=$(du -sm "$T/tmp" "$T/cache" | awk '{s += $1} END {print s}')
[ "$left" -lt 32 ] || { echo "FAIL: the fillers' files stayed ($left MB)"; du -sh "$T"/tmp/*/* "$T"/cache/build/* ; exit 1; }
# Within the quota but over KGYM_BUILD_KEEP_MB: its build folder is not kept either.
[ -z "$(find "$T/cache" -name leftover.bin)" ] || { echo "FAIL: a 40 MiB build folder was kept"; exit 1; }

mkdir -p "$T/one/19_ReLU" && cp "$ROOT/tests/data/disk/19_ReLU/honest.py" "$T/one/19_ReLU/"
KGYM_DISK_RESERVE_MB=999999999 "$KGYM" eval --suite "$ROOT/examples/suite" --candidates "$T/one" --profile off \
  --cases 2 --no-timing -q --out "$T/low.jsonl" > "$T/log" 2>&1 || { cat "$T/log"; exit 1; }
grep -q '"outcome":"task_error"' "$T/low.jsonl" && grep -q "KGYM_DISK_RESERVE_MB" "$T/low.jsonl" \
  || { echo "FAIL: a disk below the reserve did not stop the verdict with a message"; cat "$T/low.jsonl"; exit 1; }

KGYM_DISK_QUOTA_MB=lots "$KGYM" eval --suite "$ROOT/examples/suite" --candidates "$T/one" --profile off \
  --no-timing -q --out "$T/bad.jsonl" > "$T/log" 2>&1
rc=$?
[ "$rc" -eq 2 ] && grep -q "KGYM_DISK_QUOTA_MB='lots'" "$T/log" \
  || { echo "FAIL: a malformed KGYM_DISK_QUOTA_MB gave exit $rc"; cat "$T/log"; exit 1; }
echo "ok: disk fillers stopped and cleaned, low disk refused, malformed limit named"
