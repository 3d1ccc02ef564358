"""The new-run check (relimpute.bias.newrun, ``relimpute newrun``): against enumeration and the CLI."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest

from relimpute.cli import main
from relimpute.measures import evaluate
from relimpute.confidence.estimands import pool_estimate
from relimpute.bias.newrun import _rank_interval, check_new_runs
from test_confidence_engine import random_estimate, tiny_campaign


def _exact_maps(campaign, estimate):
    """Every joint relevance outcome over the topics (independent Bernoulli p of the unjudged
    documents): ``(weights (O,), MAP (O, S))``, AP = Q / R with R over the judged documents and
    those any run retrieves, as the engine counts (0 when R = 0)."""
    per_topic = []
    for topic, p in zip(campaign.topics, estimate.p):
        counted = topic.judged.copy()
        for s in range(campaign.n_systems):
            counted[topic.ranking[s, : topic.depth[s]]] = True
        free = np.flatnonzero((p > 0) & (p < 1))
        x = np.tile((p >= 1).astype(float), (2 ** len(free), 1))
        x[:, free] = np.array(list(itertools.product([0.0, 1.0], repeat=len(free))))
        w = np.prod(np.where(x[:, free] == 1.0, p[free], 1.0 - p[free]), axis=1)
        r = x[:, counted].sum(axis=1)
        ap = np.zeros((len(x), campaign.n_systems))
        for s in range(campaign.n_systems):
            row = topic.ranking[s, : topic.depth[s]]
            hits = x[:, row]
            q = (hits * np.cumsum(hits, axis=1) / np.arange(1, len(row) + 1)).sum(axis=1)
            ap[:, s] = np.divide(q, r, out=np.zeros_like(q), where=r > 0)
        per_topic.append((w, ap))
    weights, maps = np.ones(1), np.zeros((1, campaign.n_systems))
    for w, ap in per_topic:
        weights = (weights[:, None] * w[None, :]).ravel()
        maps = (maps[:, None, :] + ap[None, :, :]).reshape(-1, campaign.n_systems)
    return weights, maps / campaign.n_topics


@pytest.mark.parametrize("estimand", ["complete", "pool"])
def test_rank_distribution_and_beats_match_enumeration(rng, estimand):
    """P(rank = r) and P(beats) from the Monte Carlo pass agree with the exact distribution
    over every relevance outcome to 0.015 (20,000 draws: the Monte Carlo sd is below 0.004)."""
    campaign = tiny_campaign(rng, n_topics=3, n_docs=7, n_systems=4)
    estimate = random_estimate(campaign, rng)
    check = check_new_runs(campaign, ["s1"], estimate, top=3, n_draws=20_000, rng=3,
                           estimand=estimand, pool_depth=2, pool_group_sd=0.0)  # fmt: skip
    if estimand == "pool":  # below every run's top 2 an unjudged document is nonrelevant
        estimate = pool_estimate(campaign, estimate, 2, group_sd=0.0)
        assert estimate.p[0][~(campaign.topics[0].judged | campaign.topics[0].retrieved(None, 2))].max() == 0
    weights, maps = _exact_maps(campaign, estimate)
    new, officials = 1, [0, 2, 3]
    rank = 1 + (maps[:, officials] > maps[:, [new]] + 1e-12).sum(axis=1)
    exact = np.bincount(rank - 1, weights=weights, minlength=4)
    assert weights.sum() == pytest.approx(1.0, abs=1e-12)
    assert check.ranks.loc["s1"].to_numpy() == pytest.approx(exact, abs=0.015)
    row = check.table.iloc[0]
    for o in officials:
        name = campaign.systems[o]
        diff = maps[:, new] - maps[:, o]
        beats = weights @ ((diff > 1e-12) + 0.5 * (np.abs(diff) <= 1e-12))
        assert row[f"P(beats {name})"] == pytest.approx(beats, abs=0.015)
    assert row["E"] == pytest.approx(weights @ maps[:, new], abs=0.01)


def test_scores_and_judged_shares_are_trec_evals(rng):
    """trec_eval and judged@k columns are the measures' own evaluation (-c), E lies in its
    interval, the rank interval inside 1..N+1 and covering the chosen share."""
    campaign = tiny_campaign(rng, n_topics=4, n_docs=12, n_systems=5, empty=(4, 0))
    estimate = random_estimate(campaign, rng)
    check = check_new_runs(campaign, ["s4", "s0"], estimate, n_draws=2000, rng=0)
    plain = evaluate(campaign, ["AP", "Judged@10", "Judged@100"], missing="zero")
    plain = plain.pivot(index="system", columns="measure", values="value")
    table = check.table.set_index("run")
    for name in ("s4", "s0"):
        assert table.loc[name, "trec_eval"] == pytest.approx(plain.loc[name, "AP"], abs=1e-12)
        assert table.loc[name, "judged@10"] == pytest.approx(plain.loc[name, "Judged@10"])
        assert table.loc[name, "ci_low"] <= table.loc[name, "E"] <= table.loc[name, "ci_high"]
        low, high = table.loc[name, "rank_low"], table.loc[name, "rank_high"]
        assert 1 <= low <= high <= 4
        shares = check.ranks.loc[name]
        assert shares.sum() == pytest.approx(1.0)
        assert shares.loc[low:high].sum() >= 0.9 - 1e-9
    assert table.loc["s4", "empty_topics"] == 1
    assert "retrieves nothing for 1 of 4 topics" in table.loc["s4", "verdict"]
    assert check.officials[0] in {"s1", "s2", "s3"}


def test_rank_interval_is_central():
    assert _rank_interval(np.array([0.0, 1.0, 0.0]), 0.9) == (2, 2)
    assert _rank_interval(np.array([0.04, 0.5, 0.42, 0.04]), 0.9) == (2, 3)
    assert _rank_interval(np.array([0.06, 0.5, 0.38, 0.06]), 0.9) == (1, 4)


def test_unknown_new_run_and_no_official(rng):
    campaign = tiny_campaign(rng)
    estimate = random_estimate(campaign, rng)
    with pytest.raises(Exception, match="not a run of the campaign: nope"):
        check_new_runs(campaign, ["nope"], estimate)
    with pytest.raises(Exception, match="no official run"):
        check_new_runs(campaign, list(campaign.systems), estimate)


QRELS = "".join(f"q{t} 0 d{t}_{i} {int(i % 3 == 0)}\n" for t in range(3) for i in range(6))


def _run(name, t_docs):
    return "".join(
        f"q{t} Q0 d{t}_{i} {rank + 1} {20 - rank} {name}\n"
        for t, docs in t_docs.items()
        for rank, i in enumerate(docs)
    )


@pytest.fixture
def collection(write_collection):
    runs = {
        f"off{k}": _run(f"off{k}", {t: [(i + k) % 9 for i in range(8)] for t in range(3)})
        for k in range(3)
    }
    root = write_collection(QRELS, runs)
    (root / "mine.run").write_text(_run("mine", {t: [8, 7, 0, 3, 1] for t in range(2)}))
    return root


def test_cli_table_verdicts_and_plot(collection, capsys):
    root = collection
    plot = root / "ranks.png"
    code = main(["newrun", str(root / "qrels.txt"), str(root / "runs"), "--new",
                 str(root / "mine.run"), "--mc-draws", "500", "--plot", str(plot), "-Q"])
    out, err = capsys.readouterr()
    assert code == 0
    assert "had it been pooled to depth" in out.splitlines()[0] and "estimand pool" in out
    assert "mine: " in out and " of 4 (90%)" in out
    assert "mine (" in err and "retrieves nothing for 1 of 3 qrels topics" in err
    assert plot.stat().st_size > 1000


def test_cli_json_keeps_the_verdict(collection, capsys):
    root = collection
    main(["newrun", str(root / "qrels.txt"), str(root / "runs"), "--new", str(root / "mine.run"),
          "--mc-draws", "200", "-f", "json", "-Q", "--top", "1"])
    rows = json.loads(capsys.readouterr().out)
    assert rows[0]["run"] == "mine" and "verdict" in rows[0]
    assert sum(key.startswith("P(beats ") for key in rows[0]) == 1


def _written(root, relative, text):
    path = root / relative
    path.parent.mkdir(exist_ok=True)
    path.write_text(text)
    return path


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda root: root / "runs", "not a directory"),
        (lambda root: root / "absent.run", "no such run file"),
        (lambda root: _written(root, "empty.run", ""), "is empty"),
        (lambda root: _written(root, "x/off1", "q0 Q0 d0_1 1 1 x\n"), "as the official run"),
        (lambda root: _written(root, "other.run", "z9 Q0 d0_1 1 1 x\n"), "do not meet the qrels'"),
    ],
)
def test_cli_bad_new_runs(collection, capsys, make, message):
    """A directory, a missing or empty file, a name clash: one line naming the file, exit 2."""
    root = collection
    path = make(root)
    code = main(["newrun", str(root / "qrels.txt"), str(root / "runs"), "--new", str(path)])
    err = capsys.readouterr().err
    assert code == 2
    assert message in err and str(path) in err
    assert "Traceback" not in err


def test_pool_keeps_the_posterior_draws_masked(rng):
    """The pool estimate zeroes p and every posterior draw outside the depth-k pool and keeps
    them inside; with a depth beyond every run it is the estimate itself."""
    from dataclasses import replace

    campaign = tiny_campaign(rng, n_topics=2, n_docs=8, n_systems=3)
    base = random_estimate(campaign, rng)
    draws = [rng.random((5, t.n_docs)) for t in campaign.topics]
    estimate = replace(base, draws=draws)
    pooled = pool_estimate(campaign, estimate, 1, group_sd=0.0)
    for t, topic in enumerate(campaign.topics):
        keep = topic.judged | topic.retrieved(None, 1)
        assert np.array_equal(pooled.draws[t][:, ~keep], np.zeros((5, (~keep).sum())))
        assert np.array_equal(pooled.draws[t][:, keep], draws[t][:, keep])
    deep = pool_estimate(campaign, estimate, 100, group_sd=0.0)
    assert all(np.array_equal(a, b) for a, b in zip(deep.p, base.p))


def test_cli_complete_estimand_and_pool_depth_refused_with_it(collection, capsys):
    root = collection
    args = ["newrun", str(root / "qrels.txt"), str(root / "runs"), "--new", str(root / "mine.run"),
            "--mc-draws", "200", "-Q"]
    assert main(args + ["--estimand", "complete"]) == 0
    assert "estimand complete" in capsys.readouterr().out.splitlines()[0]
    assert main(args + ["--estimand", "complete", "--pool-depth", "3"]) == 2
    assert "--pool-depth" in capsys.readouterr().err


def test_the_shift_moves_each_unjudged_pool_document_by_a_shared_log_odds_draw(rng):
    """With group_sd s, an unjudged pool document's drawn p averages E[sigmoid(logit p + δ)],
    δ ~ N(0, s²) (Gauss–Hermite quadrature, 60 nodes: an independent oracle) to 3 Monte Carlo
    sd; judged documents keep their labels; one δ per draw moves every document alike."""
    campaign = tiny_campaign(rng, n_topics=2, n_docs=8, n_systems=3)
    estimate = random_estimate(campaign, rng)
    s, m = 1.5, 20_000
    pooled = pool_estimate(campaign, estimate, 3, group_sd=s, rng=5, n_draws=m)
    nodes, weights = np.polynomial.hermite_e.hermegauss(60)
    weights = weights / weights.sum()
    for t, topic in enumerate(campaign.topics):
        draws = np.asarray(pooled.draws[t])
        assert draws.shape == (m, topic.n_docs)
        unjudged = ~topic.judged & topic.retrieved(None, 3)
        assert np.array_equal(draws[:, topic.judged], np.broadcast_to(
            estimate.p[t][topic.judged], (m, topic.judged.sum())))
        for d in np.flatnonzero(unjudged):
            p = estimate.p[t][d]
            exact = weights @ (1 / (1 + np.exp(-(np.log(p / (1 - p)) + s * nodes))))
            assert draws[:, d].mean() == pytest.approx(exact, abs=3 * draws[:, d].std() / m**0.5)
        logits = np.log(draws[:, unjudged]) - np.log1p(-draws[:, unjudged])
        shifts = logits - logits[:, :1]  # the same δ for every document of a draw
        assert np.allclose(shifts, shifts[0], atol=1e-6)


def test_a_new_run_ranked_by_the_labels_is_named_in_a_warning(collection, capsys):
    root = collection
    labels = root / "llm.txt"
    labels.write_text("".join(f"q{t} 0 d{t}_{i} {2 - i % 3}\n" for t in range(3) for i in range(9)))
    (root / "tuned.run").write_text(_run("tuned", {t: [0, 3, 6, 1, 4, 7, 2, 5] for t in range(3)}))
    base = ["newrun", str(root / "qrels.txt"), str(root / "runs"), "--new", str(root / "tuned.run"),
            "--new", str(root / "mine.run"), "--mc-draws", "200", "-f", "tsv"]  # fmt: skip
    assert main([*base, "--llm-labels", str(labels)]) == 0
    err = capsys.readouterr().err
    assert f"warning: tuned ({root / 'tuned.run'}) follows the --llm-labels" in err
    assert "100% of its labelled document pairs" in err and "mine.run) follows" not in err
    assert main(base) == 0  # without labels there is nothing to follow
    assert "follows the --llm-labels" not in capsys.readouterr().err


def test_label_agreement_counts_pairs_in_the_labels_order():
    from relimpute import Campaign
    from relimpute.labels import read_labels, with_labels
    from relimpute.bias.newrun import label_agreement
    import pandas as pd

    qrels = pd.DataFrame({"query_id": "q", "doc_id": ["a", "b", "c"], "relevance": [1, 0, 0]})
    runs = {name: pd.DataFrame({"query_id": "q", "doc_id": docs, "score": [3.0, 2.0, 1.0]})
            for name, docs in (("up", ["a", "b", "c"]), ("down", ["c", "b", "a"]))}  # fmt: skip
    campaign = Campaign.from_frames(qrels, runs)
    labels = pd.DataFrame({"query_id": "q", "doc_id": ["a", "b", "c"], "relevance": [2, 1, 1]})
    campaign = with_labels(campaign, [read_labels(labels, name="llm")])
    got = dict(zip(campaign.systems, label_agreement(campaign)))
    assert got == {"up": 1.0, "down": 0.0}  # b, c tie: not counted


def test_new_run_default_shift_is_its_own_not_the_estimands(rng):
    """Without ``pool_group_sd`` the new-run check draws with NEW_RUN_GROUP_SD (chosen against
    the official qrels by examples/new_run/), not the pool estimand's narrower POOL_GROUP_SD:
    its interval is the one an explicit 1.25 gives, not the one at POOL_GROUP_SD."""
    from relimpute.bias.newrun import NEW_RUN_GROUP_SD
    from relimpute.confidence.estimands import POOL_GROUP_SD

    assert NEW_RUN_GROUP_SD == 1.25 and POOL_GROUP_SD < NEW_RUN_GROUP_SD
    campaign = tiny_campaign(rng, n_topics=3, n_docs=9, n_systems=4)
    estimate = random_estimate(campaign, rng)
    width = {}
    for key, sd in (("default", None), ("new", NEW_RUN_GROUP_SD), ("pool", POOL_GROUP_SD)):
        row = check_new_runs(campaign, ["s1"], estimate, n_draws=2000, rng=3, pool_depth=1,
                             pool_group_sd=sd).table.iloc[0]  # fmt: skip
        width[key] = row["ci_high"] - row["ci_low"]
    assert width["default"] == width["new"]
    assert abs(width["default"] - width["pool"]) > 1e-3
