#!/bin/sh
# The reusability study of Carterette (2007, §4.3-4.4) on the three development collections.
# Run from the repository root; data in ../shared/data (examples/README.md).
# Each collection is scored with fusion's settings chosen without it (held_out/NAME/fusion.json,
# written by held_out.py); the other models use the shipped models/.
# Seed 2007 everywhere: trial t is the same run set and initial pair for every strategy.
# About 25 minutes per collection on 2 cores.
set -e
OUT=examples/calibration
STRATEGIES=mtc,mtc+fusion,fusion-mc
for spec in dl19:trec-dl-2019-passage:2 dl21:trec-dl-2021-passage:2 trec8:trec-8-adhoc:1; do
  name=${spec%%:*}; rest=${spec#*:}; folder=${rest%%:*}; threshold=${rest#*:}
  D=../shared/data/$folder
  relimpute calibrate "$D/qrels.txt" "$D/runs" --rel-threshold "$threshold" \
    --k 10 --c 2 --groups "$D/groups.tsv" --depth 100 --seed 2007 --jobs 2 \
    --trials 200 --strategies "$STRATEGIES" --settings-dir "$OUT/held_out/$name" --quiet -o "$OUT/$name"
done
python "$OUT/cross_collection.py"
python "$OUT/details.py"
