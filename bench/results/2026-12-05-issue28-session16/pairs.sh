#!/bin/bash
# A/B pairs of the stack's CPU by role (stack-2's stack_cpu_by_function.py, 2 rounds each):
#   pairs.sh TREE_A TREE_B PAIRS OUT
# Each side runs in its own tree (a `git archive` of the commit) with that tree first on
# PYTHONPATH and this checkout's venv; OUT gets one line a run: side, pair, load, its medians.
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
for i in $(seq 1 "$3"); do
  for side in A B; do
    tree=$1; [ "$side" = B ] && tree=$2
    (cd "$tree" && PYTHONPATH="$tree" "$here/.venv/bin/python" \
      "$here/bench/results/2026-12-05-issue28-stack-2/stack_cpu_by_function.py" \
      /work/shared/corpus/real --rounds 2 2>/dev/null | tail -1 |
      sed "s/^/$side $i $(cut -d' ' -f1 /proc/loadavg) /") >> "$4"
  done
done
