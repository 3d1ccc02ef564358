"""The numba kernels of relimpute.confidence.survey.batched against the array forms they
replace: AP's pair Grams against the m × m matrices of every run (to 1e-12 relative: sums of
non-negative terms in another order), the quadratic forms against einsum (bit for bit: the
same order), the jackknife's replicate sums against the (B, Q, m) arrays (1e-12 relative),
the overcount's forms, AP's ranked sums (totals.ranked_pair_sums), the ratios, a pair's forms,
the Gram's gathered basis and the replicates' totals against their array forms (bit for bit:
the same arithmetic in the same order)."""

import numpy as np

from relimpute.confidence.survey._kernels import gathered_basis, pair_grams, \
    pair_overcount_forms, paired_forms, quadratic_forms, ratio_rows, replicate_ratios, \
    replicate_side, replicate_variance
from relimpute.confidence.survey.measures import ratio_parts
from relimpute.confidence.survey.samplings import _stratum_means
from relimpute.confidence.survey.totals import ranked_pair_arrays, ranked_pair_sums

B, R, N, M = 4, 5, 60, 25


def ranks_of(rng):
    ranks = np.zeros((R, N), int)
    for r in range(R):
        order = rng.permutation(N)[:30]
        ranks[r, order] = np.arange(1, 31)
    return ranks


def test_pair_grams_equal_the_dense_matrices():
    rng = np.random.default_rng(1)
    ranks = ranks_of(rng)
    idx = np.stack([rng.permutation(N)[:M] for _ in range(B)])
    valid = rng.random((B, M)) < 0.8
    c = [np.where(valid, rng.random((B, M)), 0.0) for _ in range(3)]
    got = pair_grams(ranks, idx, valid, *c)
    r = ranks[:, idx].transpose(1, 0, 2) * valid[:, None]  # (B, R, M)
    later = np.maximum(r[..., :, None], r[..., None, :]).astype(float)
    both = (r[..., :, None] > 0) & (r[..., None, :] > 0) & (np.eye(M) == 0)
    inv = np.where(both, 1.0 / np.where(both, later, 1.0), 0.0)  # (B, R, M, M)
    for k in range(3):
        cc = c[k][:, :, None] * c[k][:, None, :]
        want = 0.5 * np.einsum("bide,bjde,bde->bij", inv, inv, cc)
        assert want.max() > 0
        np.testing.assert_allclose(got[k], want, rtol=1e-12, atol=0)


def test_quadratic_forms_equal_einsum_bit_for_bit():
    rng = np.random.default_rng(2)
    z = rng.standard_normal((B, 12, 30))
    gram = z @ z.transpose(0, 2, 1)
    index = np.stack([rng.permutation(12)[:6] for _ in range(40)])
    left, right = rng.standard_normal((2, B, 40, 6))
    right[0, 0] = 0.0  # a form that vanishes: 0
    got = quadratic_forms(gram, index, left, right)
    sub = gram[:, index[:, :, None], index[:, None, :]]
    want = np.einsum("bqi,bqij,bqj->bq", left, sub, right)
    np.testing.assert_array_equal(got, want)


def test_replicate_variance_equals_the_array_form():
    rng = np.random.default_rng(3)
    nx, np_ = rng.random((2, B, R, M))
    rx = 1.0 + rng.random((B, M))
    rx[0, :3] = 0.0  # R̂ = 0: AP 0
    rp = rng.random((B, M))
    least = np.where(rng.random((B, M)) < 0.3, 1.5, 0.0)  # R̂ held at the relevant judged
    coef = rng.random((B, M))
    pop_n, pop_r = rng.random(R) * 3, 2.0
    first, second = np.array([0, 1, 2, 0, 3]), np.array([-1, -1, 4, 3, 1])
    lam = rng.random((B, len(first)))
    centre = rng.random((B, len(first)))
    h = (rng.random((B, M)) < 0.5).astype(np.int64)
    split = rng.random((B, M)) < 0.7
    for stratified in (False, True):
        sp = split if stratified else np.zeros_like(split)
        got = replicate_variance(nx, np_, rx, rp, least, coef, pop_n, pop_r, first, second,
                                 lam, centre, h, sp, 2)
        lp = lam[..., None]
        raw = rx[:, None] + lp * (pop_r - rp[:, None])
        n = np.where((second < 0)[:, None], nx[:, first] + lp * (pop_n[first][:, None]
                                                                  - np_[:, first]),
                     nx[:, first] - nx[:, second] + lp * ((pop_n[first] - pop_n[second])
                                                          [:, None] - np_[:, first]
                                                          + np_[:, second]))
        rep = ratio_parts(n, raw, least[:, None])[0]
        c = _stratum_means(rep, sp, h, 2, centre[..., None]) if stratified else \
            centre[..., None]
        want = (coef[:, None] * (rep - c) ** 2).sum(-1)
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=0)


def test_pair_overcount_forms_equal_the_array_form():
    rng = np.random.default_rng(4)
    grams = rng.random((3, B, R, R))
    rx, rp = 1.0 + rng.random((2, B))
    rx[0] = -3.0  # R̂ ≤ 0: 0
    first, second = np.array([0, 1, 2, 4]), np.array([3, 0, 2, 1])
    lam = rng.random((B, len(first)))
    raw = rx[:, None] + lam * (2.0 - rp[:, None])
    rows = np.arange(B)[:, None]
    for members in ([(first, 1.0)], [(first, -1.0)], [(first, 1.0), (second, -1.0)]):
        total = 0.0
        for i, si in members:
            for j, sj in members:
                q = grams[0][rows, i, j] - lam * (grams[1][rows, i, j] + grams[1][rows, j, i]) \
                    + lam**2 * grams[2][rows, i, j]
                total = total + si * sj * q
        want = np.where(raw > 0, total / np.where(raw > 0, raw, 1.0) ** 2, 0.0)
        (a, sa), (b, sb) = members[0], members[-1] if len(members) == 2 else (-first - 1, 0.0)
        got = pair_overcount_forms(grams, a, b, sa, sb, lam, rx, rp, 2.0)
        assert (want[0] == 0).all() and (want[1:] != 0).any()
        np.testing.assert_array_equal(got, want)


def ranked_pair_sums_arrays(v, w, ranks, stratum, factor, inner=False):
    """The array form ranked_pair_sums had (totals.ranked_pair_arrays, which reads one sample):
    cumulative sums over (B, R, D) arrays, the sums over ranks numpy's."""
    depth = max(int((ranks > 0).sum(1).max(initial=0)), 1)
    order = np.argsort(np.where(ranks > 0, ranks, np.iinfo(np.int64).max), axis=1,
                       kind="stable")[:, :depth]
    factor = np.broadcast_to(np.asarray(factor, dtype=float), (len(w), np.shape(factor)[-1]))
    adjust = np.array([inner or not (factor[:, s] == 1.0).all() for s in range(factor.shape[1])])
    _, terms, deriv, share = ranked_pair_arrays(v, w, order, np.take_along_axis(ranks, order, 1),
                                                stratum[order], factor, adjust, inner)
    return terms.sum(axis=-1), deriv, share if inner else None


def test_ranked_pair_sums_equal_the_array_form_bit_for_bit():
    rng = np.random.default_rng(5)
    ranks = ranks_of(rng)
    v = np.where(rng.random(N) < 0.5, rng.random(N), 0.0)
    stratum = (rng.random(N) < 0.4).astype(int)
    for b in (1, B):
        w = np.where(rng.random((b, N)) < 0.4, 1 / 0.4, 0.0)
        cases = [(np.zeros(N, int), np.ones((b, 1))), (stratum, 1 + rng.random((b, 2))),
                 (stratum, np.ones((b, 2)))]
        for (st, f), inner in [(c, i) for c in cases for i in (False, True)]:
            got, want = ranked_pair_sums(v, w, ranks, st, f, inner), \
                ranked_pair_sums_arrays(v, w, ranks, st, f, inner)
            assert (want[0] > 0).any()
            for g, e in zip(got, want):
                np.testing.assert_array_equal(g, e)


def test_ratios_equal_ratio_parts_bit_for_bit():
    rng = np.random.default_rng(6)
    nx, np_ = rng.random((2, B, R))
    rx, rp = rng.random((2, B)) * 2
    rx[0] = 0.0  # R̂ = 0 at λ = 0: AP 0
    least = np.where(rng.random(B) < 0.5, 1.2, 0.0)  # held where R̂ < 1.2
    least[0] = 0.0
    pop_n, runs = rng.random(R) * 3, np.array([0, 2, 4, 1])
    lam = rng.random((B, len(runs)))
    lam[0] = 0.0
    for floor in (0.0, 1.0):
        got = ratio_rows(nx, np_, pop_n, runs, rx, rp, 2.5, lam, least, floor)
        n_hat = nx[:, runs] + lam * (pop_n[runs] - np_[:, runs])
        raw = rx[:, None] + lam * (2.5 - rp[:, None])
        want = (*ratio_parts(n_hat, raw, np.maximum(least[:, None], floor)), n_hat, raw)
        assert (want[2] == 0).any() and (want[2] != 0).any()
        assert floor or (want[0][0] == 0).all()
        for g, e in zip(got, want):
            np.testing.assert_array_equal(g, e)
    nx3, np3 = rng.random((2, B, R, M))
    rx3, rp3 = rng.random((2, B, M)) * 2
    least3 = np.where(rng.random((B, M)) < 0.3, 1.5, 0.0)
    got = replicate_ratios(nx3, np3, pop_n, rx3, rp3, 2.5, 0.7, least3, 1.0)
    want = ratio_parts(nx3 + 0.7 * (pop_n[:, None] - np3),
                       rx3[:, None] + 0.7 * (2.5 - rp3[:, None]),
                       np.maximum(least3[:, None], 1.0))[0]
    np.testing.assert_array_equal(got, want)


def test_paired_forms_equal_the_reduced_form():
    rng = np.random.default_rng(7)
    z = rng.standard_normal((B, 12, 30))
    gram = z @ z.transpose(0, 2, 1)
    index = np.stack([np.r_[rng.permutation(10)[:2], 10, 11, rng.permutation(10)[:2], 10, 11]
                      for _ in range(20)])
    left, right = rng.standard_normal((2, B, 20, 8))
    reduce = [0, 1, 4, 5]
    want = quadratic_forms(gram, np.ascontiguousarray(index[:, [0, 1, 4, 5, 2, 3]]),
                           *(np.concatenate([c[..., reduce], c[..., [2]] + c[..., [6]],
                                             c[..., [3]] + c[..., [7]]], -1)
                             for c in (left, right)))
    np.testing.assert_array_equal(paired_forms(gram, index, left, right), want)


def test_gathered_basis_equals_the_array_form():
    rng = np.random.default_rng(8)
    dnx, dnp = rng.random((2, B, R, N))
    x, p = (rng.random(N) < 0.3).astype(float), rng.random(N)
    drawn = rng.random((B, N)) < 0.3
    m = drawn.sum(1).max()
    idx = np.argsort(~drawn, axis=1, kind="stable")[:, :m]
    valid = np.take_along_axis(drawn, idx, 1)
    root = rng.random((B, m))
    stratum = (rng.random(N) < 0.5).astype(np.int64)
    centred = rng.random((B, 2)) < 0.7
    mean = rng.random((B, 2 * R + 2, 2))
    got = gathered_basis(dnx, dnp, x, p, idx, valid, root, stratum, centred, mean)
    z = np.concatenate([dnx, dnp, np.broadcast_to(x, (B, 1, N)), np.broadcast_to(p, (B, 1, N))],
                       axis=1)
    z = z - np.where(centred[:, None], mean, 0.0)[..., stratum]
    want = np.take_along_axis(z, idx[:, None, :], axis=2) * np.where(valid, root, 0.0)[:, None]
    np.testing.assert_array_equal(got, want)


def test_replicate_side_equals_the_array_form():
    rng = np.random.default_rng(9)
    deriv, inner = rng.random((2, B, R, N))
    v, w = rng.random(N), rng.random((B, M)) * 3
    idx = np.stack([rng.permutation(N)[:M] for _ in range(B)])
    r_total, n_total = rng.random(B), rng.random((B, R))
    v_h, rest_h, pairs_h = rng.random((B, 2)), rng.random((B, R, 2)), rng.random((B, R, 2))
    c, g = 1 + rng.random((2, B, M))
    h = (rng.random((B, M)) < 0.5).astype(np.int64)
    for stratified in (False, True):
        got = replicate_side(deriv, inner, v, idx, w, r_total, n_total, v_h, rest_h, pairs_h,
                             c, g, h, stratified)
        r = r_total[:, None] - w * v[idx]
        scaled = w[:, None] * np.take_along_axis(deriv, idx[:, None], 2)
        n = n_total[..., None] - scaled
        if stratified:
            r = r + (c - 1) * (v_h[np.arange(B)[:, None], h] - w * v[idx])
            at = np.broadcast_to(h[:, None, :], (B, R, M))
            cc, gg = c[:, None], g[:, None]
            n = n + ((cc - 1) * np.take_along_axis(rest_h, at, 2)
                     + (gg - 1) * np.take_along_axis(pairs_h, at, 2) - (cc - 1) * scaled
                     + (cc - gg) * np.take_along_axis(inner, idx[:, None], 2))
        np.testing.assert_array_equal(got[0], r)
        np.testing.assert_array_equal(got[1], n)


def test_one_sample_reads_the_arrays_as_the_kernels_do():
    """B = 1 goes to relimpute.confidence.survey._small's arrays (no numba to load): the
    kernels' results bit for bit, the pair Grams and replicate sums to 1e-12 relative."""
    from relimpute.confidence.survey import _kernels, _small
    from relimpute.confidence.survey._ranked import ranked_pair_terms

    rng = np.random.default_rng(10)
    ranks = ranks_of(rng)
    idx = rng.permutation(N)[:M][None]
    valid = rng.random((1, M)) < 0.8
    c = [np.where(valid, rng.random((1, M)), 0.0) for _ in range(3)]
    grams = _kernels.pair_grams(ranks, idx, valid, *c)
    np.testing.assert_allclose(_small.pair_grams(ranks, idx, valid, *c), grams, rtol=1e-12)
    lam, rx, rp = rng.random((1, 4)), 1 + rng.random(1), rng.random(1)
    for second, s2 in ((np.array([3, 0, 2, 1]), -1.0), (-np.arange(1, 5), 0.0)):
        args = (grams, np.array([0, 1, 2, 4]), second, 1.0, s2, lam, rx, rp, 2.0)
        np.testing.assert_array_equal(_small.pair_overcount_forms(*args),
                                      _kernels.pair_overcount_forms(*args))
    nx, np_ = rng.random((2, 1, R, M))
    rxm, rpm, coef = 1 + rng.random((1, M)), rng.random((1, M)), rng.random((1, M))
    least = np.where(rng.random((1, M)) < 0.3, 1.5, 0.0)
    first, second = np.array([0, 1, 2, 0, 3]), np.array([-1, -1, 4, 3, 1])
    h = (rng.random((1, M)) < 0.5).astype(np.int64)
    for split in (np.zeros((1, M), bool), rng.random((1, M)) < 0.7):
        args = (nx, np_, rxm, rpm, least, coef, rng.random(R) * 3, 2.0, first, second,
                rng.random((1, 5)), rng.random((1, 5)), h, split, 2)
        np.testing.assert_allclose(_small.replicate_variance(*args),
                                   _kernels.replicate_variance(*args), rtol=1e-12)
    z = rng.standard_normal((1, 12, 30))
    gram = z @ z.transpose(0, 2, 1)
    index = np.stack([np.r_[rng.permutation(10)[:2], 10, 11, rng.permutation(10)[:2], 10, 11]
                      for _ in range(20)])
    left, right = rng.standard_normal((2, 1, 20, 8))
    left[0, 3] = 0.0  # a form that vanishes: 0
    for name, at, ll, rr in (("paired_forms", index, left, right),
                             ("quadratic_forms", index[:, :6], left[..., :6], right[..., :6])):
        np.testing.assert_array_equal(getattr(_small, name)(gram, at, ll, rr),
                                      getattr(_kernels, name)(gram, at, ll, rr))
    dnx, dnp, deriv, inner = rng.random((4, 1, R, N))
    x, p = (rng.random(N) < 0.3).astype(float), rng.random(N)
    stratum = h[0, rng.integers(M, size=N)]
    args = (dnx, dnp, x, p, idx, valid, rng.random((1, M)), stratum, rng.random((1, 2)) < 0.7,
            rng.random((1, 2 * R + 2, 2)))
    np.testing.assert_array_equal(_small.gathered_basis(*args), _kernels.gathered_basis(*args))
    for floor in (0.0, 1.0):
        args = (nx[..., 0], np_[..., 0], rng.random(R) * 3, np.array([0, 2, 4, 1]), rxm[:, 0],
                rpm[:, 0], 2.5, rng.random((1, 4)), least[:, 0], floor)
        for g, e in zip(_small.ratio_rows(*args), _kernels.ratio_rows(*args)):
            np.testing.assert_array_equal(g, e)
        args = (nx, np_, rng.random(R) * 3, rxm, rpm, 2.5, 0.7, least, floor)
        np.testing.assert_array_equal(_small.replicate_ratios(*args),
                                      _kernels.replicate_ratios(*args))
    for stratified in (False, True):
        args = (deriv, inner, p, idx, rng.random((1, M)) * 3, rng.random(1), rng.random((1, R)),
                rng.random((1, 2)), rng.random((1, R, 2)), rng.random((1, R, 2)),
                1 + rng.random((1, M)), 1 + rng.random((1, M)), h, stratified)
        for g, e in zip(_small.replicate_side(*args), _kernels.replicate_side(*args)):
            np.testing.assert_array_equal(g, e)
    order = np.argsort(np.where(ranks > 0, ranks, N + 1), axis=1, kind="stable")[:, :30]
    w = np.where(rng.random((1, N)) < 0.4, 1 / 0.4, 0.0)
    v = np.where(rng.random(N) < 0.5, rng.random(N), 0.0)
    for inner_share in (False, True):
        args = (v, w, order, np.take_along_axis(ranks, order, 1), stratum[order],
                1 + rng.random((1, 2)), np.array([True, inner_share]), inner_share)
        got, want = ranked_pair_arrays(*args), ranked_pair_terms(*args)
        for g, e in zip(got[1:], want[1:]):  # the sums: numpy's pairwise sum of the terms
            np.testing.assert_array_equal(g, e)


def test_one_sample_on_the_command_line_loads_no_numba(tmp_path):
    """``evaluate``/``compare --estimator`` on a sample: numba's first kernel would cost more
    than the command's arithmetic."""
    import subprocess
    import sys
    from pathlib import Path

    (tmp_path / "runs").mkdir()
    for name, ranking in (("A", "abcde"), ("B", "edcab")):
        (tmp_path / "runs" / name).write_text("".join(
            f"{t} Q0 {d} {i + 1} {9 - i} {name}\n" for t in (1, 2)
            for i, d in enumerate(ranking)))
    (tmp_path / "q.tsv").write_text(
        "query_id doc_id relevance inclusion_probability\n1 a 1 1\n1 b 0 0.5\n1 c 1 0.5\n"
        "1 d -1 0.25\n1 e 1 0.25\n2 a 1 0.5\n2 b 1 0.5\n2 c 0 0.5\n2 d -1 0.5\n")
    code = ("import sys\nfrom relimpute.cli import main\n"
            f"main(['compare', {str(tmp_path / 'q.tsv')!r}, {str(tmp_path / 'runs')!r}, "
            "'--estimator', 'ppi++', '--llm-labels', sys.argv[1]])\n"
            "print('numba' in sys.modules)")
    (tmp_path / "labels.txt").write_text("1 0 a 2\n1 0 b 0\n1 0 c 1\n2 0 a 1\n2 0 d 1\n")
    src = Path(__file__).resolve().parents[1] / "src"
    got = subprocess.run([sys.executable, "-c", code, str(tmp_path / "labels.txt")],
                         capture_output=True, text=True, env={"PYTHONPATH": str(src)})
    assert got.returncode == 0, got.stderr
    assert got.stdout.strip().splitlines()[-1] == "False"
