"""MTC and the posterior selector on study.py's synthetic pairs: judgments to a 95% call.

Each judges the pair from no judgment (runs cut at 100) until its confidence reaches 0.95 or
300 judgments (the design's budget), an oracle answering from the complete qrels; one run per
pair (seeded). DL 2019's numbers are examples/posterior_selector/results/yardstick_dl19.csv.

    python examples/guided_stopping/selector_judgments.py   # results/selectors_synthetic.csv
"""

from __future__ import annotations

import time

import numpy as np
import pandas as pd

from study import BUDGET, DEPTH, HERE, SEED, synthetic_pairs


def main() -> None:
    from relimpute.selection import SimulatedAssessor, run_selection

    rows = []
    for trial, full, pair, _ in synthetic_pairs(12):
        hidden = full.with_judged([np.zeros(t.n_docs, dtype=bool) for t in full.topics])
        for strategy in ("mtc", "posterior"):
            start = time.process_time()
            result = run_selection(hidden, strategy, SimulatedAssessor(full), systems=pair,
                                   confidence=0.95, budget=BUDGET, depth=DEPTH,
                                   rng=SEED + trial)  # fmt: skip
            p = float(result.pairs["p_a_better"].iloc[0])
            rows.append({"trial": trial, "system_a": pair[0], "system_b": pair[1],
                         "strategy": strategy, "judgments": result.n_judgments,
                         "stopped": result.stopped_because, "p_a_better": p,
                         "cpu_s": time.process_time() - start})  # fmt: skip
            print(rows[-1], flush=True)
    pd.DataFrame(rows).to_csv(HERE / "results" / "selectors_synthetic.csv", index=False,
                              float_format="%.6g")  # fmt: skip


if __name__ == "__main__":
    main()
