"""The jackknife's own bias correction of AP and its delete-two variance
(relimpute.confidence.survey.quenouille) against brute force: every replicate recomputed from
the weights of the sample less one document, or less two, AP's numerator summed pair by pair.

The universe has a census stratum (π = 1, no replicates) and two sampled strata, so pairs
across strata and deletions in another stratum than the replicate's are exercised; one design
leaves a stratum with two judged (a replicate there has one left: no correction of its own)
and one with a single judged (the Poisson form: its replicate about the estimate). HT,
model-assisted and PPI++ (the table's λ) and every pair of runs. Exact: 1e-10 absolute on
the estimates, 1e-9 relative on the variances (the same sums in another order)."""

from itertools import combinations, product

import numpy as np
import pandas as pd
import pytest

from relimpute.confidence.survey import estimate

N, RUNS, DEPTH = 30, 3, 22
STRATUM = np.repeat([0, 1, 2], [8, 12, 10])  # 0: the census
SIZE = np.bincount(STRATUM).astype(float)
DOCS = np.array([f"d{i}" for i in range(N)])


def universe(seed):
    rng = np.random.default_rng(seed)
    x = (rng.random(N) < 0.35).astype(float)
    p = np.clip(0.5 * x + 0.5 * rng.random(N), 0, 1)
    ranks = np.zeros((RUNS, N), int)
    for r in range(RUNS):
        ranks[r, rng.permutation(N)[:DEPTH]] = np.arange(1, DEPTH + 1)
    return rng, x, p, ranks


def draw(rng, n1, n2):
    drawn = STRATUM == 0
    drawn[8 + rng.permutation(12)[:n1]] = True
    drawn[20 + rng.permutation(10)[:n2]] = True
    return drawn


def numerator(v, w, rank, f):
    """Σ_k v_k w_k / r_k + ½ Σ_{j ≠ k} v_j v_k w_j w_k f_jk / max(r_j, r_k), f_jk = f[h] when
    j and k are both in stratum h, else 1: every ordered pair once."""
    at = np.flatnonzero((rank > 0) & (w > 0) & (v != 0))
    terms = [v[k] * w[k] / rank[k] if j == k else
             0.5 * v[j] * v[k] * w[j] * w[k] / max(rank[j], rank[k])
             * (f[STRATUM[k]] if STRATUM[j] == STRATUM[k] else 1.0)
             for j, k in product(at, repeat=2)]
    return float(sum(terms))


def ap_by_hand(drawn, x, p, rank, lam, floor=0.0):
    """AP̂(λ) on the judged set ``drawn``: weights N_h/n_h, pair factors of n_h draws, R̂ held
    at the relevant judged and at ``floor`` (PPI++: 1)."""
    n = np.bincount(STRATUM, weights=drawn, minlength=3)
    w = np.where(drawn, SIZE[STRATUM] / np.maximum(n[STRATUM], 1), 0.0)
    both = n * (n - 1) / (SIZE * (SIZE - 1))
    f = np.where(both > 0, (n / SIZE) ** 2 / np.where(both > 0, both, 1), 0.0)
    top = numerator(x, w, rank, f) + lam * (numerator(p, np.ones(N), rank, np.ones(3))
                                            - numerator(p, w, rank, f))
    r_hat = max(w @ x + lam * (p.sum() - w @ p), x[drawn].sum(), floor)
    return top / r_hat if r_hat >= 1e-9 else 0.0


def corrected_by_hand(drawn, theta):
    """θ̂ − Σ_h (1 − n_h/N_h)(n_h − 1)(mean of h's delete-one θ̂ − θ̂), over 2 ≤ n_h < N_h."""
    value = theta(drawn)
    n = np.bincount(STRATUM, weights=drawn, minlength=3)
    bias = 0.0
    for h in range(3):
        if 2 <= n[h] < SIZE[h]:
            reps = [theta(drawn & (np.arange(N) != d))
                    for d in np.flatnonzero(drawn & (STRATUM == h))]
            bias += (1 - n[h] / SIZE[h]) * (n[h] - 1) * (np.mean(reps) - value)
    return value - bias


def jackknife_by_hand(drawn, estimator):
    """The delete-one jackknife variance of ``estimator`` about each stratum's mean; a stratum
    with one judged: (1 − π) about the estimate."""
    value = estimator(drawn)
    n = np.bincount(STRATUM, weights=drawn, minlength=3)
    var = 0.0
    for h in (1, 2):
        reps = [estimator(drawn & (np.arange(N) != d))
                for d in np.flatnonzero(drawn & (STRATUM == h))]
        if n[h] >= 2:
            var += (1 - n[h] / SIZE[h]) * (n[h] - 1) / n[h] * np.sum(
                (np.array(reps) - np.mean(reps)) ** 2)
        elif n[h] == 1:
            var += (1 - 1 / SIZE[h]) * (reps[0] - value) ** 2
    return var


def by_hand(drawn, theta, variance):
    """(θ̃, the jackknife variance of θ̃ (delete-two) or, ``averaged``, its mean with θ̂'s)."""
    twice = jackknife_by_hand(drawn, lambda d: corrected_by_hand(d, theta))
    if variance == "averaged":
        twice = 0.5 * (twice + jackknife_by_hand(drawn, theta))
    return corrected_by_hand(drawn, theta), twice


def table(drawn, x, p, ranks, estimator, bias_correction="jackknife", variance="jackknife"):
    runs = {f"r{r}": pd.DataFrame({"query_id": "q", "doc_id": DOCS[ranks[r] > 0],
                                   "score": -ranks[r][ranks[r] > 0].astype(float)})
            for r in range(RUNS)}
    sample = pd.DataFrame({"query_id": "q", "doc_id": DOCS, "stratum": STRATUM,
                           "relevance": np.where(drawn, x.astype(int), -1)})
    control = pd.DataFrame({"query_id": "q", "doc_id": DOCS, "p": p})
    return estimate(sample, runs, control=None if estimator == "ht" else control,
                    estimator=estimator, pairs="all", sampling="stratified",
                    bias_correction=bias_correction, variance=variance)


@pytest.mark.parametrize("n1,n2,variance", [(5, 4, "jackknife"), (4, 2, "jackknife"),
                                           (6, 1, "jackknife"), (5, 4, "averaged")])
@pytest.mark.parametrize("estimator", ["ht", "model-assisted", "ppi++"])
def test_corrected_estimate_and_delete_two_variance_by_brute_force(n1, n2, variance, estimator):
    rng, x, p, ranks = universe(5 + n2)
    drawn = draw(rng, n1, n2)
    found = table(drawn, x, p, ranks, estimator, variance=variance)
    found = found[found["query_id"] == "all"]
    quantities = [((r,), (1.0,)) for r in range(RUNS)]
    quantities += [(pair, (1.0, -1.0)) for pair in combinations(range(RUNS), 2)]
    for (runs, signs), (_, row) in zip(quantities, found.iterrows()):
        lam, floor = row["lambda"], float(estimator == "ppi++")
        value, var = by_hand(drawn, lambda d: sum(
            s * ap_by_hand(d, x, p, ranks[r], lam, floor) for r, s in zip(runs, signs)),
            variance)
        if estimator == "ppi++":  # clipped to what a universe can have, or HT's own value
            ht, _ = by_hand(drawn, lambda d: sum(
                s * ap_by_hand(d, x, p, ranks[r], 0.0, 0.0) for r, s in zip(runs, signs)),
                variance)
            low, high = -1.0 if len(runs) == 2 else 0.0, 1.0
            value = float(np.clip(value, low + (1 - lam) * (min(low, ht) - low),
                                  high + (1 - lam) * (max(high, ht) - high)))
        assert row["estimate"] == pytest.approx(value, abs=1e-10)
        assert row["se"] ** 2 == pytest.approx(var, rel=1e-9, abs=1e-14)


def test_old_keyword_values_and_refusals():
    rng, x, p, ranks = universe(1)
    drawn = draw(rng, 5, 4)
    for old, name in ((True, "taylor"), (False, "none")):
        pd.testing.assert_frame_equal(table(drawn, x, p, ranks, "ht", old),
                                      table(drawn, x, p, ranks, "ht", name))
    with pytest.raises(ValueError, match="not one of"):
        table(drawn, x, p, ranks, "ht", "quenouille")
    with pytest.raises(ValueError, match="variance"):
        table(drawn, x, p, ranks, "ht", "jackknife", "bootstrap")
    sample = pd.DataFrame({"query_id": "q", "doc_id": DOCS, "inclusion": 0.5,
                           "relevance": np.where(drawn, x.astype(int), -1)})
    run = pd.DataFrame({"query_id": "q", "doc_id": DOCS, "score": -np.arange(N, dtype=float)})
    with pytest.raises(ValueError, match="stratified design"):
        estimate(sample, {"r": run}, bias_correction="jackknife")


def test_auto_reads_the_design():
    """The default (``auto``): a stratified sample takes the jackknife's corrected ratio with
    the averaged variance, a Poisson sample the Taylor term with the delete-one jackknife."""
    rng, x, p, ranks = universe(3)
    drawn = draw(rng, 5, 4)
    want = table(drawn, x, p, ranks, "ppi++", "jackknife", "averaged")
    pd.testing.assert_frame_equal(table(drawn, x, p, ranks, "ppi++", "auto", "auto"), want)
    assert not want.equals(table(drawn, x, p, ranks, "ppi++", "taylor", "jackknife"))
    sample = pd.DataFrame({"query_id": "q", "doc_id": DOCS, "inclusion": 0.5,
                           "relevance": np.where(drawn, x.astype(int), -1)})
    runs = {f"r{r}": pd.DataFrame({"query_id": "q", "doc_id": DOCS[ranks[r] > 0],
                                   "score": -ranks[r][ranks[r] > 0].astype(float)})
            for r in range(RUNS)}
    pd.testing.assert_frame_equal(estimate(sample, runs, pairs="all"),
                                  estimate(sample, runs, pairs="all", bias_correction="taylor",
                                           variance="jackknife"))


def test_compare_on_the_command_line_gives_the_same_rows(tmp_path):
    """``compare --estimator ht --bias-correction jackknife`` reads strata from sampled qrels
    and prints estimate()'s rows; on a Poisson sample it says why not."""
    import io
    from contextlib import redirect_stderr, redirect_stdout

    from relimpute.cli import main
    from relimpute.cli import _survey
    from relimpute.confidence.survey.quenouille import BIAS_CORRECTIONS
    from relimpute.confidence.survey.samplings import VARIANCES

    assert (_survey.BIAS_CORRECTIONS, _survey.VARIANCES) == (BIAS_CORRECTIONS, VARIANCES)
    rng, x, p, ranks = universe(2)
    drawn = draw(rng, 5, 4)
    (tmp_path / "runs").mkdir()
    for r in range(RUNS):
        at = np.flatnonzero(ranks[r] > 0)
        (tmp_path / "runs" / f"r{r}").write_text("".join(
            f"q Q0 {DOCS[d]} {ranks[r][d]} {-ranks[r][d]} r{r}\n" for d in at))
    (tmp_path / "q.txt").write_text("".join(
        f"q 0 {DOCS[d]} {STRATUM[d]} {int(x[d]) if drawn[d] else -1}\n" for d in range(N)))
    chosen = ["--bias-correction", "jackknife", "--variance"]
    for flags, variance, title in ((chosen + ["jackknife"], "jackknife", "its delete-two"),
                                   (chosen + ["averaged"], "averaged", "the mean of"),
                                   ([], "averaged", "the mean of")):  # the default: by design
        out, err = io.StringIO(), io.StringIO()
        with redirect_stdout(out), redirect_stderr(err):
            code = main(["compare", str(tmp_path / "q.txt"), str(tmp_path / "runs"),
                         "--estimator", "ht", "-f", "tsv", *flags])
        assert code == 0 and title in err.getvalue()
        got = pd.read_csv(io.StringIO(out.getvalue()), sep="\t")
        want = table(drawn, x, p, ranks, "ht", variance=variance)
        want = want[want["query_id"] == "all"]
        assert np.allclose(got["estimate"], want["estimate"], atol=1e-6)
        assert np.allclose(got["se"], want["se"], atol=1e-6)
    (tmp_path / "p.tsv").write_text("query_id doc_id relevance inclusion_probability\n" + "".join(
        f"q {DOCS[d]} {int(x[d]) if drawn[d] else -1} 0.5\n" for d in range(N)))
    with redirect_stdout(io.StringIO()), redirect_stderr(err):
        code = main(["evaluate", str(tmp_path / "p.tsv"), str(tmp_path / "runs"),
                     "--estimator", "ht", "--bias-correction", "jackknife"])
    assert code != 0 and "stratified design" in err.getvalue()


@pytest.mark.parametrize("estimator", ["ht", "ppi++"])
def test_quantities_in_chunks_give_the_same_rows(monkeypatch, estimator):
    """The delete-two values are read in chunks of quantities (memory: Q m² floats at once for
    every pair of a large sample); one quantity a chunk gives the same table."""
    from relimpute.confidence.survey import quenouille

    rng, x, p, ranks = universe(4)
    drawn = draw(rng, 5, 4)
    whole = table(drawn, x, p, ranks, estimator)
    monkeypatch.setattr(quenouille, "CHUNK_FLOATS", 1)
    pd.testing.assert_frame_equal(table(drawn, x, p, ranks, estimator), whole)
