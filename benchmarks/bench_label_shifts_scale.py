"""fusion-llm's label-shift fit alone at many topics: CPU seconds and peak memory.

The structured fit (:func:`relimpute.relevance.offset_logistic.fit_offset_logistic` with the
per-topic shifts as the arrowhead's diagonal block) and 100 Laplace draws, on simulated judged,
labelled documents: 4 label values, 20 per topic, logit P = 0.5 η + β_v with
β = (−2, −0.5, 1, 2) (printed: the fitted β, which should be near it). One process per size;
no results file (a quick look: the figure of record is ``bench_campaign_size.py --llm-labels``).

    python benchmarks/bench_label_shifts_scale.py 1000 10000
"""

from __future__ import annotations

import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp

SRC = Path(__file__).resolve().parents[1] / "src"


def one(n_topics: int, g: int = 4, per: int = 20) -> str:
    from relimpute.relevance.arrowhead import laplace_draws
    from relimpute.relevance.offset_logistic import fit_offset_logistic

    rng = np.random.default_rng(0)
    n = n_topics * per
    topic, v, eta = np.repeat(np.arange(n_topics), per), rng.integers(0, g, n), rng.normal(-1, 2, n)
    y = (rng.random(n) < 1 / (1 + np.exp(-(0.5 * eta + np.array([-2, -0.5, 1, 2])[v])))).astype(float)
    cols = np.column_stack([v, g * (1 + topic) + v]).ravel()
    labels = sp.csr_matrix((np.ones(2 * n), (np.repeat(np.arange(n), 2), cols)), shape=(n, g * (1 + n_topics)))
    design = sp.hstack([labels, sp.csr_matrix(eta[:, None])], format="csr")
    prec = np.full(design.shape[1], 1.0)
    prec[:g], prec[-1] = 0.25, 1e12
    start = time.process_time()
    theta, posterior = fit_offset_logistic(design, y, 0.5 * eta, prec, block=(g, g * (1 + n_topics)))
    laplace_draws(np.random.default_rng(1), theta, posterior, 100)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return (f"{n_topics:,} topics, {len(theta):,} parameters: {time.process_time() - start:.2f} s CPU, "
            f"peak {peak:.0f} MB; fitted β {np.round(theta[:g], 2)}")  # fmt: skip


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--one":
        sys.path.insert(0, str(SRC))
        print(one(int(sys.argv[2])))
    else:
        for size in sys.argv[1:] or ["1000", "10000"]:
            subprocess.run([sys.executable, __file__, "--one", size], check=True)
