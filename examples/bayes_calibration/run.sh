#!/bin/sh
# bayes-mc (the hierarchy, NUTS) against fusion-mc (the default, Laplace) on the three development
# collections, each scored with settings chosen without it: held_out/NAME/{fusion,bayes}.json
# (examples/calibration/held_out.py, then examples/bayes_calibration/held_out.py).
# Protocol of examples/calibration/run.sh (Carterette 2007 §4.3-4.4; k = 10 one run per group,
# c = 2, depth 100, seed 2007: trial t is the same run set and initial pair as there).
# Run from the repository root; data in ../shared/data. TRIALS=200 (the default) is the README's
# study; a smaller TRIALS runs the first trials of the same study (the seed fixes each trial).
set -e
TRIALS=${TRIALS:-200}
OUT=${OUT:-examples/bayes_calibration/loco}
HELD=examples/calibration/held_out
for spec in dl19:trec-dl-2019-passage:2 dl21:trec-dl-2021-passage:2 trec8:trec-8-adhoc:1; do
  name=${spec%%:*}; rest=${spec#*:}; folder=${rest%%:*}; threshold=${rest#*:}
  case " ${ONLY:-dl19 dl21 trec8} " in *" $name "*) ;; *) continue ;; esac
  D=../shared/data/$folder
  relimpute calibrate "$D/qrels.txt" "$D/runs" --rel-threshold "$threshold" \
    --k 10 --c 2 --groups "$D/groups.tsv" --depth 100 --seed 2007 --jobs "${JOBS:-2}" \
    --trials "$TRIALS" --strategies fusion-mc,bayes-mc --settings-dir "$HELD/$name" --quiet \
    -o "$OUT/$name"
done
python examples/bayes_calibration/summarize.py "$OUT"
