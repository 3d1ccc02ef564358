"""Per topic, where one left-out group's nDCG@10 and P@10 corrections miss (README here,
"A left-out group's split"): for the group's first run, each topic's expected score and sd over
the correction's draws (without the split term), the full-pool score and the reduced one, and
the judged relevant and grade-3 passages of the topic in the others' pool.

    nice -n 10 python examples/poolbias/topic_errors.py ../shared/data/trec-dl-2019-passage IDST [group_sd]
"""
import sys, warnings, numpy as np
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parent))
from run import held_out_settings
from relimpute.bias import read_groups
from relimpute.bias.base import PoolContext
from relimpute.bias.model import ModelBased, group_shifted, would_be_pooled
from relimpute.bias.pools import group_leave_outs
from relimpute.bias.study import topic_scores
from relimpute.data import Campaign
from relimpute.measures import parse_measure
root = Path(sys.argv[1])
groups = read_groups(root / "groups.tsv")
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    campaign = Campaign.from_files(root / "qrels.txt", root / "runs", rel_threshold=2)
pooled = groups.pooled_runs(campaign.systems)
campaign = campaign.subset(list(pooled))
full = campaign.pooled(10, pooled)
for label, left, kept in group_leave_outs(full, groups, runs=pooled):
    if label != sys.argv[2]:
        continue
    judged = full.pooled(10, kept)
    ctx = PoolContext.build(judged.subset(list(kept) + list(left)), kept, 10)
    c = ModelBased(model=held_out_settings("fusion", root), seed=0)
    rows = ctx.campaign.system_index(list(left))
    runs, est = c._restricted(ctx, rows)
    unknown = would_be_pooled(runs, np.arange(len(left)), 10)
    est = group_shifted(est, unknown, float(sys.argv[3]) if len(sys.argv) > 3 else 0.5, 0)
    parsed = [parse_measure("nDCG@10"), parse_measure("P@10")]
    truth = topic_scores(full, parsed, full.system_index(list(left)))  # (M, S, T)
    red = topic_scores(judged, parsed, judged.system_index(list(left)))
    rng = np.random.default_rng(0)
    out = []
    for t, topic in enumerate(runs.topics):
        post = est.draws[t]
        possible = post.max(axis=0) + est.grades.below[t][:, 0]
        unc = np.flatnonzero(~topic.judged & (possible > 0))
        base = np.where(topic.judged, topic.grades, 0).astype(np.int64)
        idx = np.arange(1000) % post.shape[0]
        u = rng.random((1000, len(unc)))
        labels = np.repeat(base[None], 1000, axis=0)
        labels[:, unc] = est.grades.draw(t, u, post[idx][:, unc], unc, idx)
        ti = full.query_ids.index(runs.query_ids[t])
        for k, m in enumerate(parsed):
            s = m.score(topic.ranking, labels, rel_threshold=2)  # (B, S)
            nrel = int((topic.grades[topic.judged] >= 2).sum()); n3 = int((topic.grades[topic.judged] == 3).sum())
            out.append((str(m), runs.query_ids[t], len(unc), nrel, n3, s.mean(0)[0], s.std(0)[0], truth[k, 0, ti], red[k, 0, ti]))
    import pandas as pd
    f = pd.DataFrame(out, columns=["m","q","n_unc","judged_rel","judged_g3","E","sd","truth","reduced"])
    f["err"] = f.E - f.truth
    pd.set_option("display.width", 200)
    for m, g in f.groupby("m"):
        print(m, "mean err", g.err.mean().round(4), "sd of mean (indep)", (np.sqrt((g.sd**2).sum())/len(g)).round(4))
        print(g[g.err.abs() > 1e-3].sort_values("err").round(3).to_string(index=False))
