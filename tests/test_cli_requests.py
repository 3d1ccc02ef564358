"""The commands' requests: the arguments read once into frozen values, and a command answered
from its request alone equals the command line's answer."""

from __future__ import annotations

import dataclasses

import pytest

from relimpute.cli import build_parser, main
from relimpute.cli._requests import CampaignInputs, CompareRequest, Estimand, RelevanceSource

QRELS = "q1 0 d1 1\nq1 0 d2 0\nq1 0 d3 1\nq2 0 e1 2\nq2 0 e2 0\n"
RUNS = {
    "alpha": "q1 Q0 d1 1 3.0 alpha\nq1 Q0 d4 2 2.0 alpha\nq2 Q0 e1 1 2.0 alpha\nq2 Q0 e3 2 1.0 alpha\n",
    "beta": "q1 Q0 d4 1 3.0 beta\nq1 Q0 d1 2 2.0 beta\nq2 Q0 e3 1 2.0 beta\nq2 Q0 e1 2 1.0 beta\n",
    "gamma": "q1 Q0 d2 1 2.0 gamma\nq1 Q0 d6 2 1.0 gamma\nq2 Q0 e2 1 1.0 gamma\n",
}


@pytest.fixture()
def files(tmp_path):
    (tmp_path / "qrels.txt").write_text(QRELS)
    runs = tmp_path / "runs"
    runs.mkdir()
    for name, text in RUNS.items():
        (runs / name).write_text(text)
    return str(tmp_path / "qrels.txt"), str(runs)


def _args(*argv):
    return build_parser([argv[0]]).parse_args(list(argv))


def test_compare_reads_every_option_into_its_request(files):
    qrels, runs = files
    args = _args("compare", qrels, runs, "--prior", "0.5", "--systems", "alpha", "beta",
                 "--estimand", "pool", "--pool-depth", "3", "-m", "P@10", "--seed", "9",
                 "--ratio", "delta", "--depth", "5", "--confidence", "0.9", "--mc-draws", "70",
                 "--matrix", "-f", "tsv", "--rel-threshold", "2", "--by-rank")  # fmt: skip
    request = CompareRequest.from_args(args, "compare")
    assert request.campaign == CampaignInputs(qrels, [runs], 2, True, "error", (), fits=True)
    assert request.relevance == RelevanceSource(None, 0.5, None, ())
    assert request.estimand == Estimand("pool", 3)
    assert (request.measure, request.systems, request.seed, request.ratio, request.depth) == (
        "P@10", ("alpha", "beta"), 9, "delta", 5)
    assert (request.confidence, request.mc_draws, request.matrix, request.format) == (
        0.9, 70, True, "tsv")
    assert not request.normal and not request.topics and request.by_design is None
    with pytest.raises(dataclasses.FrozenInstanceError):
        request.measure = "AP"


def test_a_campaign_is_sized_for_a_fit_only_when_a_model_is_fitted(files):
    """``fits`` (the memory a campaign needs) follows the command, or evaluate's options."""
    qrels, runs = files
    assert not CampaignInputs.from_args(_args("evaluate", qrels, runs), "evaluate").fits
    assert CampaignInputs.from_args(_args("evaluate", qrels, runs, "--model", "rtc"), "evaluate").fits
    assert CampaignInputs.from_args(_args("evaluate", qrels, runs, "--intervals"), "evaluate").fits
    assert CampaignInputs.from_args(_args("fit", qrels, runs, "-o", "x.tsv"), "fit").fits


def test_compare_answered_from_its_request_alone_equals_the_command(files, capsys):
    """``answer`` reads nothing but the request: built by hand, it prints what the command
    line prints."""
    from relimpute.cli.compare import answer

    qrels, runs = files
    assert main(["compare", qrels, runs, "--prior", "0.5", "-f", "tsv", "--seed", "4", "-m", "nDCG@10", "--mc-draws", "300"]) == 0
    want = capsys.readouterr()
    request = CompareRequest(
        campaign=CampaignInputs(qrels, [runs], None, False, "error", (), fits=True),
        relevance=RelevanceSource(None, 0.5, None, ()), seed=4, estimand=Estimand("complete"),
        measure="nDCG@10", systems=(), ratio="constant", depth=None, confidence=0.95, mc_draws=300,
        normal=False, topics=False, matrix=False, format="tsv", by_design=None,
    )  # fmt: skip
    assert answer(request) == 0
    got = capsys.readouterr()
    assert got.out == want.out and got.err == want.err
    assert "alpha\tbeta" in got.out


def test_a_request_checks_itself_where_it_is_built(files, tmp_path):
    """A request that asks for what cannot be answered is refused as it is built, by hand as
    from the command line, before any file is read."""
    from relimpute.cli._requests import CalibrateRequest, TopicParts
    from relimpute.errors import InputError

    qrels, runs = files
    campaign = CampaignInputs(qrels, [runs], None, False, "error", (), fits=True)
    compare = dict(campaign=campaign, relevance=RelevanceSource(None, 0.5, None, ()), seed=4,
                   estimand=Estimand("complete"), measure="AP", systems=(), ratio="constant",
                   depth=None, confidence=0.95, mc_draws=300, normal=False, topics=False,
                   matrix=False, format="tsv", by_design=None)  # fmt: skip
    refused = {
        "give one of --model, --prior": dict(relevance=RelevanceSource("rtc", 0.5, None, ())),
        "cannot be combined with --prior": dict(relevance=RelevanceSource(None, 0.5, None, ("x",))),
        "the depth of --estimand pool": dict(estimand=Estimand("complete", 5)),
        "uses no relevance model": dict(estimand=Estimand("qrels")),
        "pool has exact moments only": dict(estimand=Estimand("pool"), measure="RR"),
        "drop --topic-bootstrap": dict(parts=TopicParts(2, 1, None), topics=True),
        "give --topic-parts N too": dict(parts=TopicParts(None, 2, None)),
    }
    for message, change in refused.items():
        with pytest.raises(InputError, match=message):
            CompareRequest(**(compare | change))
    assert CompareRequest(**compare).relevance.prior == 0.5
    study = dict(campaign=campaign, strategies="mtc", settings_dir=None, one_per_group=None,
                 study={}, resume=False, overwrite=False, jobs=1, scheduler=None, quiet=True)
    with pytest.raises(InputError, match="calibrate cannot give pool"):
        CalibrateRequest(estimand="pool", output=str(tmp_path / "out"), **study)
    with pytest.raises(InputError, match="is a file, not a directory"):
        CalibrateRequest(estimand="complete", output=qrels, **study)
