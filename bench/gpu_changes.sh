#!/bin/bash
# What changed on the GPU side since the last GPU run: the CUDA sources, the
# descriptor checks they share with the CPU and the GPU tests added or changed
# since the commit that run checked (working-tree changes included), and the
# GPU tests (GoogleTest names) that did not exist then, so never ran on a GPU.
#
#   bench/gpu_changes.sh [RESULTS_FILE]    (default bench/results/gpu-check-h200.txt)
#
# The last run's commit is the one its results file names ("bundle of commit
# HASH", which bench/gpu_check.sh prints from the bundle's COMMIT), else the
# last commit that changed the results file (a run's results are committed
# with the code they checked). Needs the git repository; gpu_bundle.sh runs it
# and packs its output, so gpu_check.sh prints it where there is none.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
RESULTS=${1:-$ROOT/bench/results/gpu-check-h200.txt}
cd "$ROOT"
REL=$(realpath --relative-to="$ROOT" "$RESULTS")
PATHS=(runtime/lib/Kernels/CUDA runtime/lib/Comm/NCCL runtime/lib/Descriptors runtime/test/CUDA)
TESTS=runtime/test/CUDA

LAST=$(grep -oE 'bundle of commit [0-9a-f]{7,40}' "$RESULTS" 2>/dev/null | head -1 |
  awk '{print $4}' || true)
HOW="named in $REL"
if [[ -z $LAST ]]; then
  LAST=$(git log -1 --format=%h -- "$REL")
  HOW="the last commit that changed $REL"
fi
if [[ -z $LAST ]] || ! git rev-parse -q --verify "$LAST^{commit}" >/dev/null; then
  echo "gpu_changes: no last GPU run's commit found ($REL)"
  exit 1
fi
echo "Changed since the last GPU run: commit $LAST ($HOW, $(git log -1 --format=%cs "$LAST"))"
dirty=$(git status --porcelain -- "${PATHS[@]}")
echo "now: $(git rev-parse --short=12 HEAD)${dirty:+ + uncommitted changes}"

# Status, lines added and removed, path: committed and uncommitted changes
# against LAST, then files git does not track yet.
table=$(join -t $'\t' -1 2 -2 3 \
  <(git diff --name-status --no-renames "$LAST" -- "${PATHS[@]}" | sort -t $'\t' -k2,2) \
  <(git diff --numstat --no-renames "$LAST" -- "${PATHS[@]}" | sort -t $'\t' -k3,3) |
  awk -F '\t' '{ printf "%-6s %6s %6s  %s\n", $2, "+" $3, "-" $4, $1 }')
untracked=$(git ls-files --others --exclude-standard -- "${PATHS[@]}" |
  while read -r f; do printf "%-6s %6s %6s  %s\n" "new" "+$(wc -l < "$f")" "-0" "$f"; done)
printf "%-6s %6s %6s  %s\n" status added removed file
if [[ -z $table$untracked ]]; then
  echo "(nothing)"
else
  printf "%s\n" "$table" "$untracked" | sed '/^$/d'
fi

# GoogleTest names of the GPU tests, then and now.
names() { # CAT-COMMAND FILES...: "Suite.Name" per TEST/TEST_F/TEST_P
  "$@" 2>/dev/null | grep -oE '^\s*TEST(_F|_P)?\(\s*\w+\s*,\s*\w+' |
    sed -E 's/^\s*TEST(_F|_P)?\(\s*(\w+)\s*,\s*(\w+)/\2.\3/' | sort -u
}
then_files=$(git ls-tree -r --name-only "$LAST" -- "$TESTS" | grep -E '\.(cpp|cu)$' || true)
now_files=$(ls "$TESTS"/*.cpp "$TESTS"/*.cu 2>/dev/null || true)
then_names=$(for f in $then_files; do git show "$LAST:$f"; done | names cat)
now_names=$(names cat $now_files)
never=$(comm -13 <(echo "$then_names") <(echo "$now_names") | sed '/^$/d')
echo
echo "GPU tests never run on a GPU (added since $LAST): $(echo -n "$never" | grep -c . || true)"
[[ -n $never ]] && echo "$never" | sed 's/^/  /'
gone=$(comm -23 <(echo "$then_names") <(echo "$now_names") | sed '/^$/d')
if [[ -n $gone ]]; then
  echo "GPU tests removed or renamed since $LAST:"
  echo "$gone" | sed 's/^/  /'
fi
exit 0
