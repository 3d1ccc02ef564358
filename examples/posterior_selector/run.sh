#!/bin/sh
# Does judging until the default model's posterior predictive confidence is reached save
# judgments over MTC, and stay calibrated? Carterette (2007) §4.3 protocol on the three
# development collections; fusion's settings chosen without the collection under study
# (examples/calibration/held_out/NAME/fusion.json). Run from the repository root; data in
# ../shared/data (examples/README.md). TRIALS, BUDGET and OUT may be set in the environment.
set -e
OUT=${OUT:-examples/posterior_selector/results}
TRIALS=${TRIALS:-20}
BUDGET=${BUDGET:-300}
for spec in dl19:trec-dl-2019-passage:2 dl21:trec-dl-2021-passage:2 trec8:trec-8-adhoc:1; do
  name=${spec%%:*}; rest=${spec#*:}; folder=${rest%%:*}; threshold=${rest#*:}
  D=../shared/data/$folder
  relimpute calibrate "$D/qrels.txt" "$D/runs" --rel-threshold "$threshold" \
    --k 10 --c 2 --groups "$D/groups.tsv" --depth 100 --seed 2007 --jobs 2 \
    --trials "$TRIALS" --budget "$BUDGET" --strategies mtc,fusion-mc,posterior \
    --settings-dir "examples/calibration/held_out/$name" --quiet -o "$OUT/$name" $RESUME
done
python examples/posterior_selector/summarize.py "$OUT"
