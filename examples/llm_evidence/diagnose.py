"""Where fusion-llm's remaining MAP bias and τ shortfall (goals: 0.01, 0.95) come from.

Run from the repository root::

    python examples/llm_evidence/diagnose.py [--collections dl19,dl21] [--out DIR]

In each headline design of ``study.py`` (pool 3, random 10; UMBRELA GPT-4o), for the default
model, fusion-llm and fusion-llm with λ learned (``runs_weight_sd`` 1, whose fitted λ and its sd
are reported), every document of a topic is one of

- ``human``: a kept human (NIST) judgment: the model keeps it;
- ``labelled``: judged by NIST but not kept, so it has the LLM's label: the *label model* decides it;
- ``unlabelled``: never judged by NIST, so no label and relevant in the truth's eyes never
  (trec_eval's convention): only the *runs' model* decides it.

E[MAP] of each run is computed exactly from the point estimate (``ConfidenceEngine.evaluate``) as
fitted, with the labelled documents set to their true relevance (what is left is the unlabelled
documents' share), with the unlabelled documents set to 0 (what is left is the labelled
documents' share), and with every document at its truth (the floor no probability can remove:
relevant documents no run retrieves count in the truth's R, in E[R] only when judged or named by
a label source; the default model, fitted without labels, still has it). Per run the
bias (and the unlabelled documents' share of it) is set against how many unlabelled documents the
run ranks in its top 100 (Spearman's ρ). Per label value, the mean probability the model gives the labelled documents is set
against the share NIST judged relevant (the label model's calibration); per topic the same sums
(per-topic pooling). Two bounds (``diagnosis_bounds.csv``): the default model given *every* NIST
judgment (what the runs' model says of the documents NIST never judged, which the truth counts
non-relevant), and fusion-llm's estimate with each labelled document's probability replaced by
the true share relevant of its label value (per collection, or per topic): the best any
calibration of these labels by label value could do. And whether the label's error transports
(``diagnosis_transport.csv``): P(label | relevant) and P(label | not relevant) inside the depth-3
pool, where the human labels are, and below it, where they are applied. Writes ``diagnosis.csv``
(per collection, design and model), ``diagnosis_runs.csv.gz``, ``diagnosis_labels.csv``,
``diagnosis_bounds.csv`` and ``diagnosis_transport.csv``.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import kendalltau, spearmanr

sys.path.insert(0, str(Path(__file__).parent))
from study import EARLIER, kept_judgments, load, per_topic_ap  # noqa: E402

from relimpute.confidence import ConfidenceEngine  # noqa: E402
from relimpute.relevance import FusionLLM, load_model  # noqa: E402

SOURCE = "umbrela-gpt-4o"
DESIGNS = (("pool", 3), ("random", 10))
TOP = 100


def e_map(campaign, estimate, p) -> np.ndarray:
    return ConfidenceEngine().confidence(
        campaign, replace(estimate, p=tuple(p), draws=None), pairs=[], method="normal"
    ).scores.e_map


def diagnose(collection: str, full, design: str, size: int, seed: int, models):
    kept = kept_judgments(full, design, size, np.random.default_rng(seed))
    truth = per_topic_ap(full).mean(axis=0)
    rel = full.relevant()
    labelled = [f.judged & ~k.judged for f, k in zip(full.topics, kept.topics)]
    unlabelled = [~f.judged for f in full.topics]
    codes = next(s for s in full.labels if s.name == SOURCE).align(full)
    # unlabelled documents each run ranks in its top TOP, per topic on average
    n_unlabelled = np.mean([[np.sum(u[r[:TOP][r[:TOP] >= 0]]) for r in t.ranking]
                            for t, u in zip(full.topics, unlabelled)], axis=0)  # fmt: skip
    rows, runs, labels = [], [], []
    for name, model, campaign in models(kept):
        estimate = model.fit_predict(campaign, rng=seed)
        p = [np.asarray(x, float) for x in estimate.p]
        fitted = e_map(campaign, estimate, p)
        labels_true = e_map(campaign, estimate, [np.where(m, r, x) for x, m, r in zip(p, labelled, rel)])
        unlabelled_zero = e_map(campaign, estimate, [np.where(u, 0.0, x) for x, u in zip(p, unlabelled)])
        both = e_map(campaign, estimate, [np.where(m, r, np.where(u, 0.0, x))
                                          for x, m, u, r in zip(p, labelled, unlabelled, rel)])  # fmt: skip
        bias = fitted - truth
        # every document at its truth: what no p can remove (relevant documents no run retrieves
        # count in the truth's R, in E[R] only when judged or labelled)
        floor = e_map(campaign, estimate, [r.astype(float) for r in rel]) - truth
        setting = {"collection": collection, "design": design, "size": size, "model": name}
        rows.append({
            **setting, "runs_weight_change": estimate.params.get("runs_weight_change", np.nan),
            "runs_weight_change_sd": float(np.sqrt(model.covariance_[-1, -1])) if name != "fusion" else np.nan,
            "mean_abs_bias": np.abs(bias).mean(), "mean_bias": bias.mean(),
            "bias_unlabelled_share": (labels_true - truth).mean(),
            "abs_bias_unlabelled_share": np.abs(labels_true - truth).mean(),
            "bias_labelled_share": (unlabelled_zero - truth).mean(),
            "abs_bias_labelled_share": np.abs(unlabelled_zero - truth).mean(),
            "abs_bias_both_fixed": np.abs(both - truth).mean(),
            "abs_bias_floor": np.abs(floor).mean(), "bias_floor": floor.mean(),
            "relevant_unretrieved": float(np.mean([(r & ~t.retrieved()).sum() for r, t in zip(rel, full.topics)])),
            "expected_rel_labelled": float(np.mean([x[m].sum() for x, m in zip(p, labelled)])),
            "true_rel_labelled": float(np.mean([r[m].sum() for r, m in zip(rel, labelled)])),
            "expected_rel_unlabelled": float(np.mean([x[u].sum() for x, u in zip(p, unlabelled)])),
            "topic_rel_error_sd": float(np.std([x[m].sum() - r[m].sum() for x, m, r in zip(p, labelled, rel)])),
            "rho_bias_unlabelled_docs": spearmanr(bias, n_unlabelled).statistic,
            "rho_unlabelled_share_docs": spearmanr(labels_true - truth, n_unlabelled).statistic,
        })  # fmt: skip
        runs += [{**setting, "system": s, "truth": t, "bias": b, "bias_unlabelled_share": bu - t,
                  "bias_labelled_share": bl - t, "unlabelled_top100": n}
                 for s, t, b, bu, bl, n in zip(full.systems, truth, bias, labels_true, unlabelled_zero, n_unlabelled)]  # fmt: skip
        # calibration per label value on the labelled documents
        x = np.concatenate([x[m] for x, m in zip(p, labelled)])
        y = np.concatenate([r[m] for r, m in zip(rel, labelled)])
        v = np.concatenate([c[m] for c, m in zip(codes, labelled)])
        labels += [{**setting, "label": int(k), "n": int((v == k).sum()), "mean_p": x[v == k].mean(),
                    "share_relevant": y[v == k].mean()} for k in np.unique(v)]  # fmt: skip
        print(f"{collection} {design} {size} {name}: " + ", ".join(
            f"{k} {val:.3f}" for k, val in rows[-1].items() if isinstance(val, float)), file=sys.stderr)  # fmt: skip
    return rows, runs, labels


def bounds(collection: str, full, seed: int) -> list[dict]:
    """The two bounds of the module docstring, as mean |bias| of MAP and τ."""
    truth = per_topic_ap(full).mean(axis=0)
    rel = full.relevant()

    def row(design, size, what, campaign, estimate, p):
        e = e_map(campaign, estimate, p)
        return {"collection": collection, "design": design, "size": size, "what": what,
                "mean_abs_bias": np.abs(e - truth).mean(), "mean_bias": (e - truth).mean(),
                "tau": kendalltau(e, truth).statistic}  # fmt: skip

    bare = replace(full, labels=())
    complete = load_model("fusion").fit_predict(bare, rng=seed)
    out = [row("all", 0, "fusion, every NIST judgment", bare, complete, complete.p)]
    codes = next(s for s in full.labels if s.name == SOURCE).align(full)
    for design, size in DESIGNS:
        kept = kept_judgments(full, design, size, np.random.default_rng(seed))
        estimate = FusionLLM(**EARLIER).fit_predict(replace(kept, labels=tuple(s for s in kept.labels if s.name == SOURCE)), rng=seed)
        labelled = [f.judged & ~k.judged for f, k in zip(full.topics, kept.topics)]
        v = np.concatenate([c[m] for c, m in zip(codes, labelled)])
        x = np.concatenate([r[m] for r, m in zip(rel, labelled)])
        shares = np.array([x[v == k].mean() if (v == k).any() else 0.0 for k in range(codes[0].max(initial=0) + 1)])
        for what, per_topic in (("labels calibrated by the truth, per collection", False),
                                ("labels calibrated by the truth, per topic", True)):  # fmt: skip
            p = []
            for c, m, r, q in zip(codes, labelled, rel, estimate.p):
                share = shares.copy()
                if per_topic:
                    share = np.array([r[m & (c == k)].mean() if (m & (c == k)).any() else shares[k]
                                      for k in range(len(shares))])  # fmt: skip
                p.append(np.where(m, share[np.maximum(c, 0)], q))
            out.append(row(design, size, what, kept, estimate, p))
    for r in out:
        print(f"{collection} bound: {r}", file=sys.stderr)
    return out


def transport(collection: str, full) -> list[dict]:
    """P(label = v | relevance) in the depth-3 pool and among the judged documents below it."""
    kept = full.pooled(3)
    codes = next(s for s in full.labels if s.name == SOURCE).align(full)
    out = []
    for where, masks in (("pool 3", [k.judged for k in kept.topics]),
                         ("below pool 3", [f.judged & ~k.judged for f, k in zip(full.topics, kept.topics)])):  # fmt: skip
        v = np.concatenate([c[m] for c, m in zip(codes, masks)])
        x = np.concatenate([r[m] for r, m in zip(full.relevant(), masks)])
        for relevant in (True, False):
            share = np.bincount(v[x == relevant], minlength=v.max() + 1) / max((x == relevant).sum(), 1)
            out.append({"collection": collection, "where": where, "relevant": relevant,
                        "n": int((x == relevant).sum()), **{f"P(label={k})": q for k, q in enumerate(share)}})  # fmt: skip
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--collections", default="dl19,dl21")
    parser.add_argument("--seed", type=int, default=2007)
    parser.add_argument("--out", default=str(Path(__file__).parent / "results"))
    args = parser.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)

    def models(kept):
        yield "fusion", load_model("fusion"), replace(kept, labels=())
        one = replace(kept, labels=tuple(s for s in kept.labels if s.name == SOURCE))
        yield "fusion-llm", FusionLLM(**EARLIER), one
        yield "fusion-llm + λ", FusionLLM(runs_weight_sd=1.0, **EARLIER), one

    rows, runs, labels, limits, moved = [], [], [], [], []
    for collection in args.collections.split(","):
        full = load(collection, [SOURCE])
        moved += transport(collection, full)
        limits += bounds(collection, full, args.seed)
        for design, size in DESIGNS:
            r, s, lab = diagnose(collection, full, design, size, args.seed, models)
            rows += r
            runs += s
            labels += lab
    pd.DataFrame(rows).to_csv(out / "diagnosis.csv", index=False, float_format="%.4f")
    pd.DataFrame(runs).to_csv(
        out / "diagnosis_runs.csv.gz", index=False, float_format="%.4f", compression={"method": "gzip", "mtime": 0}
    )
    pd.DataFrame(labels).to_csv(out / "diagnosis_labels.csv", index=False, float_format="%.4f")
    pd.DataFrame(limits).to_csv(out / "diagnosis_bounds.csv", index=False, float_format="%.4f")
    pd.DataFrame(moved).to_csv(out / "diagnosis_transport.csv", index=False, float_format="%.4f")
    return 0


if __name__ == "__main__":
    sys.exit(main())
