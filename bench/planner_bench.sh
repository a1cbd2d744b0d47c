#!/usr/bin/env bash
# The planner's figures against its goals: exact planning time of
# omgs and auto for 500 model-shaped layers (goal: under 50 ms), and how far
# above the optimum the OMGS paper's greedy rule (and every other strategy)
# lands on 100 random model-shaped profiles and on a ResNet-20 profile.
#   bench/planner_bench.sh [BUILD_DIR] [planner_bench options, e.g. --layers 1000]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:-$root/build}
shift || true
ninja -C "$build" -j2 planner_bench mgs-plan >/dev/null
"$build/bench/planner_bench" "$@" "$root/test/mgs-plan/Inputs/resnet20.json"
echo
echo "ResNet-20 profile (test/mgs-plan/Inputs/resnet20.json):"
"$build/bin/mgs-plan" "$root/test/mgs-plan/Inputs/resnet20.json" --compare
