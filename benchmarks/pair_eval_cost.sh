#!/usr/bin/env bash
# What grading minimal pairs adds to a Dyck pre-training run: the recipe's MLM run with pair_eval on and off,
# alternating, three times each, one run at a time (results/measurements.yaml, `pair_eval_cost`).
#   bash benchmarks/pair_eval_cost.sh
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(mktemp -d)
for i in 1 2 3; do
    for on in true false; do
        start=$(date +%s.%N)
        python -m minibert fit -c configs/pretrain.yaml -c configs/languages/dyck.yaml \
            -c configs/recipes/dyck-pretrain.yaml --pair_eval.enabled "$on" \
            --trainer.default_root_dir "$out/$i-$on" >/dev/null 2>&1
        echo "pair_eval=$on run $i: $(python -c "import time; print(round(time.time() - $start, 2))") s"
    done
done
rm -rf "$out"
