#!/bin/sh
# The DL 2019 reusability studies (Carterette 2007 §4.3-4.4) behind this folder.
# Run from the repository root; the data lives in ../shared/data (not shipped).
# Every command uses seed 2007, so trial t is the same run set and initial pair everywhere
# and the studies can be combined into paired comparisons (relimpute.calibration.combine_studies).
set -e
D=../shared/data/trec-dl-2019-passage
OUT=examples/dl19_calibration
TMP=${TMPDIR:-/tmp}/dl19_calibration
COMMON="--runs $D/runs --qrels $D/qrels.txt --k 10 --c 2 --one-per-group $D/groups.tsv --depth 100 --rel-threshold 2 --seed 2007 --jobs 2"

# 300 trials: MTC (uniform), RTC with the paper's expert model, IP with MTC's budget (~16 min),
# then RTC with the shipped settings models/rtc.json (~6 min).
relimpute calibrate $COMMON --trials 300 --strategies mtc,rtc-paper,ip -o $TMP/a
relimpute calibrate $COMMON --trials 300 --strategies rtc -o $TMP/b

# 30 trials with the Bayesian hierarchy (ADVI, 25-40 s per trial): plug-in confidence, and
# Monte Carlo confidence over its posterior draws.
relimpute calibrate $COMMON --trials 30 --strategies mtc,bayes,bayes-mc -o $TMP/c

python - <<PY
from relimpute.calibration import CalibrationReport, combine_studies, read_study
for folder, parts in (("mtc_rtc_ip", ["a", "b"]), ("bayes_30", ["c", "b", "a"])):
    study = combine_studies(*(read_study("$TMP/" + p) for p in parts))
    CalibrationReport.from_study(study).write("$OUT/" + folder, study=study)
PY

# The ceiling of the protocol: a model that knows every label (100 trials, ~4 min).
python $OUT/oracle_ceiling.py 100

# The >= 200-trial comparison issue 6 asks for (~20 min with 2 workers).
relimpute calibrate $COMMON --trials 200 --strategies mtc,rtc,bayes -o $OUT/mtc_rtc_bayes_200

# The final comparison with the committed models, Monte Carlo confidence included (~17 min).
relimpute calibrate $COMMON --trials 200 --strategies mtc,rtc,bayes,bayes-mc -o $OUT/final_200
