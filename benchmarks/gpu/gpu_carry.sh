#!/usr/bin/env bash
# Gathers, on a machine with network, what an air-gapped GPU box needs beside this checkout to run
# benchmarks/gpu/gpu_check.sh, into one git-ignored folder, benchmarks/gpu_carry/ (made anew each time):
#   wheels/  the packages the GPU cases import that the box's python lacks, as wheels for it (CPython 3.12 on
#            manylinux x86_64 unless PY_VERSION / PLATFORMS say otherwise), named as NAME==VERSION arguments;
#            none by default: the H200 box's python has everything the cases import (docs/gpu.md lists it, and
#            `python3 -m benchmarks.gpu.gpu_check env --device cpu` on the box names what is missing);
#   data/    the RAMDocs and SciFact files the default judge's pairs and the peers' workloads read (9.9 MB), from
#            $CONFLICTSCORE_DATA (default ../shared/data beside the checkout);
#   COMMIT   the commit it was made at (the box may get the files without .git).
# Then it prints every file with its size and the total, and benchmarks/tools/tree_size.py: the checkout and this
# folder against the 64 MiB that can travel (exit 1 when over).
#
#   benchmarks/gpu/gpu_carry.sh                       the data only (enough for the H200 box)
#   benchmarks/gpu/gpu_carry.sh tqdm==4.67.1 ...      and these wheels (pip download --no-deps: name every one)
set -euo pipefail
cd "$(dirname "$0")/../.."
PY=${PYTHON:-python3}
CARRY=benchmarks/gpu_carry
DATA=${CONFLICTSCORE_DATA:-../shared/data}
PY_VERSION=${PY_VERSION:-3.12}
PLATFORMS=${PLATFORMS:-manylinux_2_28_x86_64 manylinux_2_17_x86_64 manylinux2014_x86_64}

for f in ramdocs/RAMDocs_test.jsonl scifact/corpus.jsonl scifact/claims_dev_cited.jsonl; do
  [ -f "$DATA/$f" ] || { echo "gpu_carry: $DATA/$f not found (set CONFLICTSCORE_DATA to the data folder)" >&2; exit 2; }
done
rm -rf "$CARRY"
mkdir -p "$CARRY/wheels" "$CARRY/data/ramdocs" "$CARRY/data/scifact"
if [ $# -gt 0 ]; then
  platform_flags=()
  for p in $PLATFORMS; do platform_flags+=(--platform "$p"); done
  "$PY" -m pip download -q --no-deps --only-binary=:all: --python-version "$PY_VERSION" --implementation cp \
    "${platform_flags[@]}" -d "$CARRY/wheels" "$@"
fi
cp "$DATA/ramdocs/RAMDocs_test.jsonl" "$CARRY/data/ramdocs/"
[ -f "$DATA/ramdocs/LICENSE" ] && cp "$DATA/ramdocs/LICENSE" "$CARRY/data/ramdocs/"
cp "$DATA/scifact/corpus.jsonl" "$DATA/scifact/claims_dev_cited.jsonl" "$CARRY/data/scifact/"
git rev-parse HEAD > "$CARRY/COMMIT" 2> /dev/null || echo unknown > "$CARRY/COMMIT"

echo "benchmarks/gpu_carry/ (carry it with the checkout; gpu_check.sh installs the wheels into .site/ there):"
(cd "$CARRY" && find . -type f -printf '%s\t%p\n' | sort -k2 | awk -F'\t' '{printf "  %12d  %s\n", $1, $2}')
total=$(find "$CARRY" -type f -printf '%s\n' | awk '{s += $1} END {print s + 0}')
wheels=$(find "$CARRY/wheels" -type f -name '*.whl' | wc -l)
echo "  total: $total bytes ($wheels wheels)"
echo
"$PY" -m benchmarks.tools.tree_size
