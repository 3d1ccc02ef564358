#!/bin/sh
# Rerun every study whose numbers depend on the default relevance model's settings
# (models/fusion.json and examples/calibration/held_out/), e.g. after changing them.
# Run from the repository root; data in ../shared/data (examples/README.md). About 90 minutes
# on 2 cores: two lanes run side by side, each study writing its summary tables (committed)
# and its per-trial files (not committed, see .gitignore) where its README says.
#
# Not rerun here (they do not use the fusion settings; each README gives the command):
# the choices of the settings themselves (examples/calibration/choose_setting.py and
# choose_below_pool.py; models/provenance/), the power study
# (examples/precision/power_study.py), the corpus-bootstrap split
# (examples/precision/split_corpus.py), the Bayesian pool-bias row
# (examples/poolbias/bayes_advi.json), the Webber & Park tables and the reference check.
# Afterwards `git diff examples/` shows which summary tables moved; the READMEs quote them.
set -e
export PYTHONPATH=${PYTHONPATH:-$PWD/src}  # this tree's code, whatever is installed
D=../shared/data
G=0,0.25,0.5,0.75,1,1.5,2
LOG=${LOG:-/tmp/relimpute-regenerate}
mkdir -p "$LOG"

python examples/calibration/held_out.py > "$LOG/held_out.txt"

(
  sh examples/calibration/run.sh
  python examples/poolbias/run.py $D/trec-8-adhoc --depth 100 --models fusion --group-sds $G --stem trec8_d100
  python examples/poolbias/run.py $D/trec-dl-2021-passage --rel-threshold 2 --depth 10 --models fusion --group-sds $G --stem dl21_d10
  python examples/pool_coverage/run.py
) > "$LOG/lane1.txt" 2>&1 &
LANE1=$!

(
  python examples/believability/run.py --models fusion,rtc,uniform --collections dl19,dl21,trec8
  python examples/two_uncertainties/run.py
  python examples/estimand_coverage/run.py
  python examples/precision/split_topics.py --splits 100 trec8 dl19
  python examples/precision/split_topics.py --split corpus --splits 50 trec8 dl19
  python examples/poolbias/run.py $D/trec-8-adhoc --depth 10 --models fusion --group-sds $G --stem trec8_d10
  python examples/poolbias/run.py $D/trec-dl-2019-passage --rel-threshold 2 --depth 10 --models fusion --group-sds $G --stem dl19_d10
) > "$LOG/lane2.txt" 2>&1 &
LANE2=$!

wait $LANE1
wait $LANE2
python examples/poolbias/choose_group_sd.py trec8_d10 trec8_d100 dl19_d10 dl21_d10
python examples/poolbias/report.py trec8_d10 trec8_d100 dl19_d10 dl21_d10
echo "logs in $LOG"
