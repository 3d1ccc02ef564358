"""``relimpute poolbias``: a small study end to end, and clear errors on bad input."""

from __future__ import annotations

import pandas as pd
import pytest

from relimpute.cli import main
from relimpute.simulate import simulate_campaign


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    root = tmp_path_factory.mktemp("poolbias")
    sim = simulate_campaign(n_topics=8, n_systems=8, n_docs=200, depth=30, n_families=4, rng=3)
    campaign = sim.campaign.pooled(15, list(sim.campaign.systems))
    qrels, runs = campaign.to_files(root)
    groups = pd.DataFrame(
        {"run": list(campaign.systems), "group": [f"g{f}" for f in sim.family], "pooled": "yes"}
    )
    groups.to_csv(root / "groups.tsv", sep="\t", index=False)
    return root, qrels, runs, groups


def _args(files, *extra, groups="groups.tsv"):
    root, qrels, runs, _ = files
    return [
        "poolbias",
        str(qrels),
        str(runs),
        "--groups",
        str(root / groups),
        "--common-topics",
        "3",
        *extra,
    ]


def test_writes_tables_and_prints_metrics(files, tmp_path, capsys):
    out = tmp_path / "out"
    code = main(
        _args(
            files,
            "--pool-depth",
            "5",
            "--correctors",
            "reduced,lipani",
            "-m",
            "P@5",
            "-m",
            "AP",
            "--common-topics",
            "3",
            "--common-repeats",
            "2",
            "-o",
            str(out),
            "-f",
            "tsv",
        )
    )
    printed, err = capsys.readouterr()
    assert code == 0, err
    metrics = pd.read_csv(out / "metrics.tsv", sep="\t")
    assert set(metrics["corrector"]) == {"reduced", "lipani", "webber-park-topics"}
    assert set(metrics["filter"]) == {"all", "top75"}
    assert {"mae", "sre", "sre_star", "tau", "coverage"} <= set(metrics.columns)
    assert (out / "estimates.tsv").is_file() and (out / "metrics.md").is_file()
    assert "## Slices: left-out runs by hole fraction" in (out / "metrics.md").read_text()
    assert "slices.tsv" in err
    assert printed.splitlines()[0].split("\t")[:3] == ["corrector", "measure", "filter"]
    assert "wrote" in err


def test_model_rows_per_between_group_spread(files, tmp_path, capsys):
    """One model fit per group serves every spread; a wider spread, a wider interval."""
    out = tmp_path / "spread"
    args = ["--pool-depth", "5", "--correctors", "reduced", "-m", "P@5", "--common-topics", "0"]
    args += ["--model", "uniform", "--group-sd", "0", "--group-sd", "2", "--mc-draws", "400"]
    code = main(_args(files, *args, "-o", str(out)))
    assert code == 0, capsys.readouterr().err
    estimates = pd.read_csv(out / "estimates.tsv", sep="\t")
    labels = ["model:uniform[group_sd=0]", "model:uniform[group_sd=2]"]
    assert set(estimates["corrector"]) == {"reduced", *labels}
    width = {
        label: (sub["ci_high"] - sub["ci_low"]).mean()
        for label, sub in estimates.groupby("corrector")
        if label in labels
    }
    assert width[labels[1]] > width[labels[0]]


def test_run_missing_from_groups(files, capsys):
    root, _, _, groups = files
    groups.iloc[1:].to_csv(root / "short.tsv", sep="\t", index=False)
    code = main(_args(files, "--pool-depth", "5", "-o", str(root / "x"), groups="short.tsv"))
    err = capsys.readouterr().err
    assert code == 2
    assert "short.tsv: 1 run(s) missing from the groups table" in err and groups["run"][0] in err


def test_group_with_no_pooled_run_is_left_out(files, capsys, tmp_path):
    # all of a collection's runs with its groups.tsv: a group that put no run in the pool
    # used to stop the study; its runs were never in the pool, so it is left out, with a note
    root, _, _, groups = files
    flagged = groups.copy()
    first = flagged["group"][0]
    flagged.loc[flagged["group"] == first, "pooled"] = "no"
    flagged.to_csv(root / "unpooled.tsv", sep="\t", index=False)
    out = tmp_path / "x"
    quick = ["--correctors", "reduced", "-m", "P@5", "--common-topics", "0"]
    code = main(_args(files, "--pool-depth", "5", *quick, "-o", str(out), groups="unpooled.tsv"))
    err = capsys.readouterr().err
    assert code == 0, err
    n_runs = int((flagged["group"] == first).sum())
    assert f"left 1 group(s) with no pooled run out of the study ({n_runs} run(s) never in " \
           f"the pool): {first}" in err  # fmt: skip
    estimates = pd.read_csv(out / "estimates.tsv", sep="\t")
    assert first not in set(estimates["group"])
    assert set(estimates["group"]) == set(groups["group"]) - {first}


def test_depth_larger_than_the_runs(files, capsys):
    code = main(_args(files, "--pool-depth", "31", "-o", str(files[0] / "x")))
    err = capsys.readouterr().err
    assert (
        code == 2
        and "--pool-depth: 31 is larger than the runs (the deepest pooled ranking has 30)" in err
    )


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--correctors", "reduced,magic"], "--correctors: unknown ['magic']"),
        (["-m", "P@0"], "--measure:"),
        (
            ["--common-topics", "1"],
            "--common-topics: must be 0 (off) or 2 to 7 common topics, got 1",
        ),
        (["--model", "magic"], "unknown relevance model 'magic'"),
        (["--group-sd", "-1"], "argument --group-sd: -1 is not a finite number >= 0"),
        (["--group-sd", "nan"], "argument --group-sd: nan is not a finite number >= 0"),
    ],
)
def test_bad_options(files, capsys, extra, message):
    try:  # values are checked when parsed (SystemExit), settings before the study (exit 2)
        code = main(_args(files, "--pool-depth", "5", "-o", str(files[0] / "x"), *extra))
    except SystemExit as exit:
        code = exit.code
    assert code == 2 and message in capsys.readouterr().err


def test_leave_run_where_every_group_has_one_run_is_refused(files, capsys):
    root, _, _, groups = files
    groups.assign(group=groups["run"]).to_csv(root / "single.tsv", sep="\t", index=False)
    code = main(_args(files, "--pool-depth", "5", "--leave", "run", "-o", str(root / "y"), groups="single.tsv"))
    err = capsys.readouterr().err
    assert code == 2 and "--leave: every group has one pooled run" in err and "Traceback" not in err
    assert len([line for line in err.splitlines() if "error" in line]) == 1
