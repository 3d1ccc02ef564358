"""``evaluate`` with intervals: E[m], sd[m] and an interval per run from the default model's
posterior draws (as ``compare``), ``--depth``, and estimate files that carry the draws."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest

from relimpute import Campaign
from relimpute.cli import main
from relimpute.relevance import load_model

from test_cli_llm_labels import files as tiny  # a tiny campaign and its LLM labels

N_TOPICS, N_RUNS, DEPTH, POOL = 5, 4, 30, 4


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """Runs over 60 documents per topic, the depth-4 pool judged (a third relevant)."""
    rng = np.random.default_rng(3)
    root = tmp_path_factory.mktemp("intervals")
    (root / "runs").mkdir()
    qrels, judged = [], set()
    relevant = {t: set(rng.choice(60, 15, replace=False)) for t in range(N_TOPICS)}
    for r in range(N_RUNS):
        lines = []
        for t in range(N_TOPICS):
            docs = rng.permutation(60)[:DEPTH]
            judged.update((t, int(d)) for d in docs[:POOL])
            lines += [f"q{t} Q0 d{d} {i + 1} {DEPTH - i} run{r}\n" for i, d in enumerate(docs)]
        (root / "runs" / f"run{r}").write_text("".join(lines))
    for t, d in sorted(judged):
        qrels.append(f"q{t} 0 d{d} {int(d in relevant[t])}\n")
    (root / "qrels.txt").write_text("".join(qrels))
    return root


def _tsv(capsys) -> pd.DataFrame:
    return pd.read_csv(io.StringIO(capsys.readouterr().out), sep="\t").set_index("system")


def _evaluate(files, capsys, *extra) -> pd.DataFrame:
    argv = ["evaluate", str(files / "qrels.txt"), str(files / "runs"), "-f", "tsv", *extra]
    assert main(argv) == 0
    return _tsv(capsys)


def _independent_map_draws(campaign, estimate, n_draws, rng) -> np.ndarray:
    """``(n_draws, S)`` MAP per relevance draw in plain Python: draw ``d`` takes posterior draw
    ``d mod M`` in every topic, each unjudged document relevant with its probability there."""
    out = np.zeros((n_draws, campaign.n_systems))
    relevant = campaign.relevant()
    for t, topic in enumerate(campaign.topics):
        post = np.asarray(estimate.draws[t])
        for d in range(n_draws):
            p = post[d % len(post)]
            rel = np.where(topic.judged, relevant[t], rng.random(len(p)) < p)
            n_rel = rel.sum()
            for s in range(campaign.n_systems):
                ranked = rel[topic.ranking[s, : topic.depth[s]]]
                hits = np.cumsum(ranked)
                ap = (hits / np.arange(1, len(ranked) + 1))[ranked].sum() / n_rel if n_rel else 0.0
                out[d, s] += ap / campaign.n_topics
    return out


def test_the_interval_covers_an_independent_monte_carlo_of_the_same_draws(files, capsys):
    frame = _evaluate(files, capsys, "--intervals", "--seed", "5")
    assert list(frame.columns) == ["num_q", "E[AP]", "sd[AP]", "ci_low[AP]", "ci_high[AP]"]
    campaign = Campaign.from_files(files / "qrels.txt", files / "runs")
    model = load_model("fusion").fit(campaign, rng=5)
    estimate = model.predict(campaign, grades=False)
    n_draws, clusters = 4000, estimate.n_draws
    draws = _independent_map_draws(campaign, estimate, n_draws, np.random.default_rng(11))
    inside = ((draws >= frame["ci_low[AP]"].to_numpy()) & (draws <= frame["ci_high[AP]"].to_numpy()))
    # Monte Carlo error: draws sharing a posterior draw are not independent, so count the
    # 100 posterior draws as the sample size (conservative), 4 standard errors
    tolerance = 4 * np.sqrt(0.95 * 0.05 / clusters)
    np.testing.assert_allclose(inside.mean(axis=0), 0.95, atol=tolerance)
    sd = draws.std(axis=0)
    np.testing.assert_allclose(frame["E[AP]"], draws.mean(axis=0), atol=4 * sd.max() / np.sqrt(clusters))
    np.testing.assert_allclose(frame["sd[AP]"], sd, rtol=0.25)
    # wider than the point estimate's (unjudged documents only) answer
    point = _evaluate(files, capsys, "--estimate", str(_point_file(files, estimate)), "-m", "AP")
    assert list(point.columns) == ["num_q", "E[AP]"]


def _point_file(files, estimate):
    """The point probabilities alone, as an estimate file written before the draws were kept."""
    from relimpute import write_prob_qrels

    path = files / "point.tsv"
    write_prob_qrels(estimate.to_frame(), path)
    return path


def test_evaluate_model_answers_equal_compares_for_the_same_seed(files, capsys):
    frame = _evaluate(files, capsys, "--model", "fusion", "--seed", "9")
    argv = ["compare", str(files / "qrels.txt"), str(files / "runs"), "-f", "tsv", "--seed", "9"]
    assert main(argv) == 0
    pairs = pd.read_csv(io.StringIO(capsys.readouterr().out), sep="\t")
    e = frame["E[AP]"]
    expected = e[pairs["system_a"]].to_numpy() - e[pairs["system_b"]].to_numpy()
    np.testing.assert_allclose(pairs["e_delta_map"], expected, atol=2e-6)  # tsv: 6 digits
    assert (frame["sd[AP]"] > 0).all()
    assert (frame["ci_low[AP]"] < frame["E[AP]"]).all() and (frame["E[AP]"] < frame["ci_high[AP]"]).all()


def test_an_estimate_file_with_draws_gives_the_direct_fits_interval(files, capsys, tmp_path):
    est = tmp_path / "est.tsv"
    assert main(["fit", str(files / "qrels.txt"), str(files / "runs"), "-o", str(est)]) == 0
    assert "posterior draws in" in capsys.readouterr().err
    assert (tmp_path / "est.tsv.draws.npz").is_file()
    direct = _evaluate(files, capsys, "--intervals", "-m", "AP", "-m", "P@10")
    from_file = _evaluate(files, capsys, "--estimate", str(est), "-m", "AP", "-m", "P@10")
    assert list(from_file.columns) == list(direct.columns)
    # the same draws, kept to 3 significant digits (float16): the same answer within 1e-3
    np.testing.assert_allclose(from_file.to_numpy(), direct.to_numpy(), atol=1e-3)
    # an estimate file without draws where intervals are asked: refused, never narrow
    est.with_name("est.tsv.draws.npz").unlink()
    argv = ["evaluate", str(files / "qrels.txt"), str(files / "runs"), "--estimate", str(est)]
    assert main([*argv, "--intervals"]) == 2
    err = capsys.readouterr().err
    assert f"{est} holds no posterior draws" in err.replace("one probability per document and ", "")
    assert "refit with `relimpute fit" in err and "Traceback" not in err
    assert main(argv) == 0  # without --intervals: E[m] only, and says why
    out, err = capsys.readouterr()
    assert "sd[" not in out and "ci_low" not in out and "E[m] only" in err


def test_a_companion_of_another_fit_is_refused(files, capsys, tmp_path):
    est = tmp_path / "est.tsv"
    assert main(["fit", str(files / "qrels.txt"), str(files / "runs"), "-o", str(est)]) == 0
    lines = est.read_text().splitlines()
    row = next(i for i, line in enumerate(lines[1:], 1) if 0 < float(line.split("\t")[2]) < 1)
    fields = lines[row].split("\t")
    fields[2] = "0.5" if fields[2] != "0.5" else "0.25"
    lines[row] = "\t".join(fields)
    est.write_text("\n".join(lines) + "\n")
    capsys.readouterr()
    argv = ["evaluate", str(files / "qrels.txt"), str(files / "runs"), "--estimate", str(est)]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "est.tsv.draws.npz" in err and "another fit" in err and "Traceback" not in err


def test_a_fit_without_draws_removes_the_companion_an_earlier_fit_left(files, capsys, tmp_path):
    est, settings = tmp_path / "est.tsv", tmp_path / "uniform.json"
    settings.write_text('{"model": "uniform", "params": {"prior": 0.3}}')
    base = ["fit", str(files / "qrels.txt"), str(files / "runs"), "-o", str(est)]
    assert main(base) == 0 and (tmp_path / "est.tsv.draws.npz").is_file()
    assert main([*base, "--model", str(settings)]) == 0
    assert not (tmp_path / "est.tsv.draws.npz").exists()


def test_depth_truncates_every_run_as_trec_eval_m(files, capsys, tmp_path):
    cut = tmp_path / "runs"
    cut.mkdir()
    for run in (files / "runs").iterdir():
        lines = [line for line in run.read_text().splitlines() if int(line.split()[3]) <= 10]
        (cut / run.name).write_text("\n".join(lines) + "\n")
    frame = _evaluate(files, capsys, "--depth", "10", "-m", "AP", "-m", "R@100")
    argv = ["evaluate", str(files / "qrels.txt"), str(cut), "-f", "tsv", "-m", "AP", "-m", "R@100"]
    assert main(argv) == 0
    pd.testing.assert_frame_equal(frame, _tsv(capsys))
    full = _evaluate(files, capsys, "-m", "AP")
    assert (frame["AP"] < full["AP"]).any()
    # with intervals, --depth is the engine's, as compare --depth
    deep = _evaluate(files, capsys, "--intervals", "--depth", "10")
    assert (deep["E[AP]"] < _evaluate(files, capsys, "--intervals")["E[AP]"]).any()


def test_model_options_refuse_what_they_cannot_answer(files, capsys):
    base = ["evaluate", str(files / "qrels.txt"), str(files / "runs")]
    for extra, message in (
        (["--intervals", "-q"], "--intervals cannot be combined with -q/--per-topic"),
        (["--model", "fusion", "--format", "trec"], "--model cannot be combined with --format trec"),
        (["--model", "fusion", "--estimate", "x.tsv"], "give one of --model and --estimate"),
    ):
        assert main([*base, *extra]) == 2
        err = capsys.readouterr().err
        assert message in err and "Traceback" not in err


def test_llm_labels_give_intervals_under_the_labels_model_or_a_settings_file_for_it(
    tiny, capsys, tmp_path
):
    qrels, runs, labels, _ = tiny
    base = ["evaluate", qrels, *runs, "--llm-labels", labels, "--seed", "3", "-f", "tsv"]
    assert main(base) == 0
    default = _tsv(capsys)
    assert list(default.columns) == ["num_q", "E[AP]", "sd[AP]", "ci_low[AP]", "ci_high[AP]"]
    settings = tmp_path / "labels.json"
    settings.write_text('{"model": "fusion-llm", "params": {}}')
    assert main([*base, "--model", str(settings)]) == 0
    pd.testing.assert_frame_equal(_tsv(capsys), default)
    assert main([*base, "--model", "rtc"]) == 2
    assert "does not read --llm-labels" in capsys.readouterr().err


def test_baseline_tests_run_on_the_engines_expected_scores(files, capsys):
    from relimpute.confidence import ConfidenceEngine
    from relimpute.measures.significance import compare_to_baseline

    base = ["--intervals", "--baseline", "run0", "-m", "AP", "-m", "P@10", "--seed", "4",
            "--mc-draws", "500", "--correction", "none"]  # fmt: skip
    argv = ["evaluate", str(files / "qrels.txt"), str(files / "runs"), "-f", "tsv", *base]
    assert main([*argv, "--topics-only"]) == 0
    out, err = capsys.readouterr()
    cli = pd.read_csv(io.StringIO(out), sep="\t")
    assert "per-topic E[m]" in err and "topic sampling only" in err
    campaign = Campaign.from_files(files / "qrels.txt", sorted((files / "runs").iterdir()))
    estimate = load_model().fit(campaign, rng=4).predict(campaign, grades=False)
    tidy = []
    for m in ("AP", "P@10"):
        scores = ConfidenceEngine().confidence(campaign, estimate, pairs=[], measure=m,
                                               n_draws=500, rng=4).scores  # fmt: skip
        tidy.append(scores.topic_frame().rename(columns={"e_ap": "value"}).assign(measure=m))
    direct = compare_to_baseline(pd.concat(tidy), "run0", correction="none", rng=4)
    assert len(cli) == len(direct) == 2 * 3 * 3
    for column in ("system_mean", "mean_difference", "pvalue"):
        np.testing.assert_allclose(cli[column], direct[column], atol=2e-6)  # tsv: 6 digits
    # by default the t-test adds the judgments' variance of each mean difference: larger p
    assert main(argv) == 0
    out, err = capsys.readouterr()
    added = pd.read_csv(io.StringIO(out), sep="\t")
    t = (added["test"] == "t").to_numpy()
    assert (added["pvalue"][t].to_numpy() >= cli["pvalue"][t].to_numpy() - 1e-9).all()
    assert (added["pvalue"][t] > cli["pvalue"][t] + 1e-6).any()
    np.testing.assert_allclose(added["pvalue"][~t], cli["pvalue"][~t])
    assert "unjudged documents leave" in err


def test_baseline_with_a_model_refuses_what_it_cannot_answer(files, capsys):
    base = ["evaluate", str(files / "qrels.txt"), str(files / "runs"), "--baseline", "run0"]
    for extra, message in (
        (["--intervals", "-q"], "--intervals cannot be combined with -q/--per-topic"),
        (["--model", "fusion", "--format", "trec"], "--model cannot be combined with --format trec"),
        (["--intervals", "--baseline", "x"], "--baseline: unknown run(s) x"),
        (["--topics-only"], "--topics-only is for --baseline with --intervals"),
    ):
        assert main([*base, *extra]) == 2
        err = capsys.readouterr().err
        assert message in err and "Traceback" not in err
