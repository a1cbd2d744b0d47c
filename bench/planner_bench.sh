#!/usr/bin/env bash
# The planner's figures against its goals: exact planning time of
# omgs and auto for 500 model-shaped layers (goal: under 50 ms), and how far
# above the optimum the OMGS paper's greedy rule (and every other strategy)
# lands on 100 random model-shaped profiles and on a ResNet-20 profile; and
# the planning time on GPT-2-large- and GPT-2-XL-shaped profiles at 10 Gbit/s
# (bench/model_profiles.py; 436 and 580 tensors of identical blocks, the
# hardest real-model profiles: auto's exact search there outgrows its budget
# and returns a plan within the gap its bounds certify).
#   bench/planner_bench.sh [BUILD_DIR] [planner_bench options, e.g. --layers 1000]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$(realpath -m "${1:-$root/build}")
shift || true
ninja -C "$build" -j2 planner_bench mgs-plan >/dev/null
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for model in gpt2-large gpt2-xl; do
  python3 "$root/bench/model_profiles.py" "$model" 10 >"$tmp/$model-10Gbit.json"
done
cd "$root" # the profiles' names as the output gives them: ./test/..., gpt2-*.json
"$build/bench/planner_bench" "$@" ./test/mgs-plan/Inputs/resnet20.json \
  "$tmp/gpt2-large-10Gbit.json" "$tmp/gpt2-xl-10Gbit.json" | sed "s|$tmp/||"
echo
echo "ResNet-20 profile (test/mgs-plan/Inputs/resnet20.json):"
"$build/bin/mgs-plan" "$root/test/mgs-plan/Inputs/resnet20.json" --compare
