"""Depth-k pools, leave-one-out pools, groups tables, and the official pools reproduced."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from conftest import SHARED_DATA, make_campaign

from relimpute.bias import (
    depth_pool,
    groups_from_frame,
    leave_one_group_out,
    leave_one_run_out,
    pool_counts,
    pool_reproduction,
)
from relimpute.data import Campaign
from relimpute.errors import InputError
from relimpute.groups import read_groups

TREC8 = SHARED_DATA / "trec-8-adhoc"
DL21 = SHARED_DATA / "trec-dl-2021-passage"


def _small() -> Campaign:
    qrels = [("1", d, g) for d, g in zip("abcdefx", [1, 0, 1, 0, 1, 0, 1])]
    runs = {
        "A1": ["a", "b", "c"],
        "A2": ["b", "a", "d"],
        "B1": ["e", "a", "f"],
        "U1": ["x", "e", "a"],  # unpooled run of group B
    }
    return make_campaign(qrels, runs, topic="1")


GROUPS = groups_from_frame(
    pd.DataFrame(
        {
            "run": ["A1", "A2", "B1", "U1"],
            "group": ["A", "A", "B", "B"],
            "pooled": ["yes", "yes", "yes", "no"],
        }
    )
)


def _docs(campaign, mask, t=0):
    return set(campaign.topics[t].doc_ids[mask[t]])


def test_depth_pool_is_the_union_of_top_k():
    c = _small()
    assert _docs(c, depth_pool(c, ["A1", "B1"], 1)) == {"a", "e"}
    assert _docs(c, depth_pool(c, ["A1", "A2"], 2)) == {"a", "b"}
    counts = pool_counts(c, ["A1", "A2", "B1"], 2)[0]
    assert dict(zip(c.topics[0].doc_ids, counts))["a"] == 3


def test_campaign_pooled_hides_judgments_outside_the_pool():
    c = _small().pooled(2, ["A1"])
    assert set(c.topics[0].doc_ids[c.topics[0].judged]) == {"a", "b"}


def test_leave_one_group_out_honours_the_pooled_column():
    c = _small()
    steps = {s.label: s for s in leave_one_group_out(c, GROUPS, 2)}
    assert steps["A"].left_out == ("A1", "A2") and steps["A"].kept == ("B1",)
    assert steps["B"].left_out == ("B1",)  # U1 is not pooled: neither left out nor contributing
    judged_without_a = set(
        steps["A"].campaign.topics[0].doc_ids[steps["A"].campaign.topics[0].judged]
    )
    assert judged_without_a == {"e", "a"}  # x (only U1's) is never in a pool


def test_leave_one_run_out():
    steps = list(leave_one_run_out(_small(), ["A1", "A2", "B1"], 1))
    assert [s.left_out for s in steps] == [("A1",), ("A2",), ("B1",)]
    assert _docs(steps[0].campaign, [t.judged for t in steps[0].campaign.topics]) == {"b", "e"}


def test_pool_reproduction_flags_exact_pools():
    c = _small().pooled(2, ["A1", "A2"])
    frame = pool_reproduction(c, ["A1", "A2"], 2).set_index("query_id")
    assert bool(frame.loc["all", "exact"])
    frame = pool_reproduction(c, ["A1"], 1).set_index("query_id")
    assert not frame.loc["all", "exact"] and frame.loc["all", "judged_outside"] == 1


def test_groups_checks():
    with pytest.raises(InputError, match="missing from the groups table: Z"):
        GROUPS.check_runs(["A1", "Z"])
    with pytest.raises(InputError, match="no pooled run among the given runs: B"):
        GROUPS.check_pooled_groups(["A1", "U1"])
    GROUPS.check_pooled_groups(["A1", "B1", "U1"])


@pytest.fixture(scope="module")
def trec8():
    if not (TREC8 / "qrels.txt").is_file():
        pytest.skip(f"TREC-8 data not found at {TREC8}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        campaign = Campaign.from_files(TREC8 / "qrels.txt", TREC8 / "runs")
    return campaign, read_groups(TREC8 / "groups.tsv")


def test_trec8_official_pool_is_the_depth_100_pool_of_its_71_pooled_runs(trec8):
    campaign, groups = trec8
    pooled = groups.pooled_runs(campaign.systems)
    assert len(pooled) == 71
    total = pool_reproduction(campaign, pooled, 100).set_index("query_id").loc["all"]
    assert total["pool"] == total["judged"] == total["pool_judged"] == 86830
    assert total["judged_outside"] == 0 and bool(total["exact"])
    # one run fewer, or one rank less, and the pool is no longer the qrels
    assert not pool_reproduction(campaign, pooled, 99).set_index("query_id").loc["all", "exact"]
    assert (
        not pool_reproduction(campaign, pooled[1:], 100).set_index("query_id").loc["all", "exact"]
    )


def test_dl2019_depth_10_pool_is_fully_judged_in_rank_order(dl19_dir):
    groups = read_groups(dl19_dir / "groups.tsv")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        by_rank = Campaign.from_files(
            dl19_dir / "qrels.txt", dl19_dir / "runs", rel_threshold=2, by_rank=True
        )
        by_score = Campaign.from_files(dl19_dir / "qrels.txt", dl19_dir / "runs", rel_threshold=2)
    total = (
        pool_reproduction(by_rank, groups.pooled_runs(by_rank.systems), 10)
        .set_index("query_id")
        .loc["all"]
    )
    assert total["pool"] == total["pool_judged"] == 2495
    # in trec_eval order (score, then docno) one run's rank-10 tie brings in one unjudged passage
    total = (
        pool_reproduction(by_score, groups.pooled_runs(by_score.systems), 10)
        .set_index("query_id")
        .loc["all"]
    )
    assert (total["pool"], total["pool_judged"]) == (2495, 2494)


def test_dl2021_depth_10_pool_is_not_fully_judged():
    """Measured: 47 of 7,225 depth-10 pool passages (rank-column order) unjudged, 27 from p_tct1."""
    if not (DL21 / "qrels.txt").is_file():
        pytest.skip(f"DL 2021 data not found at {DL21}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        campaign = Campaign.from_files(
            DL21 / "qrels.txt", DL21 / "runs", rel_threshold=2, by_rank=True
        )
    pooled = read_groups(DL21 / "groups.tsv").pooled_runs(campaign.systems)
    frame = pool_reproduction(campaign, pooled, 10).set_index("query_id")
    assert (frame.loc["all", "pool"], frame.loc["all", "pool_judged"]) == (7225, 7178)
    assert int((frame.drop("all")["pool_judged"] < frame.drop("all")["pool"]).sum()) == 21
    p_tct1 = campaign.system_index("p_tct1")
    unjudged_from_p_tct1 = sum(
        int((~t.judged[t.ranking[p_tct1[0], :10][t.ranking[p_tct1[0], :10] >= 0]]).sum())
        for t in campaign.topics
    )
    assert unjudged_from_p_tct1 == 27
    assert np.isclose(frame.loc["all", "pool_judged_share"], 7178 / 7225)
