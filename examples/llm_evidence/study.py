"""LLM relevance labels as evidence: substitution, PPI/PPI++, the default model, fusion-llm.

Run from the repository root::

    python examples/llm_evidence/study.py [--collections dl19,dl21] [--pool 3] [--random 10]
        [--sources umbrela-gpt-4o,...] [--methods fusion,fusion-llm] [--merge]
        [--out examples/llm_evidence/results]

On TREC DL 2019 and 2021 passage (``../shared/data``; research use only, never copied
here), keep the human (NIST) judgments only for (a) the depth-k pool of the runs or
(b) a random m judged documents per topic, and take an LLM's label for the rest of
the judged pairs (the labels exist only there). The truth is the official qrels
(relevant: grade >= 2). Methods:

substitution
    trec_eval on the human labels kept plus the LLM's labels (grade >= 2; a binary 1
    counts as relevant): a point estimate.
ppi, ppi++
    prediction-powered inference (Angelopoulos et al. 2023; PPI++ with the power-tuned
    λ, ``ppi_py``) with per-topic AP as the outcome, at the same human budget spent as
    complete judgments of a random set of topics (Oosterhuis et al. 2024's setting):
    the LLM's AP on every topic, the human AP on those; repeated over ``--ppi-reps``
    random topic sets.
fusion
    the default model on the human labels kept, without labels.
fusion-llm:SOURCE
    the default model plus the labels of SOURCE, their error learned from the human
    labels kept (``relimpute.relevance.FusionLLM`` at :data:`EARLIER`, the defaults when
    the study was run: ``label_sd`` and ``label_topic_sd`` chosen leave-one-collection-out,
    ``unlabelled="runs"``, ``runs_weight=1``); with ``--runs-weight-sd`` also with λ, the runs' weight
    on a labelled document, learned (``runs_weight_sd``); with ``--variant`` also at other
    settings (``unlabelled``, ``runs_weight``: ``decompose.py``).

Per method: mean |bias| of MAP, coverage and mean width of 95% intervals for every
run's MAP and every pair's ΔMAP, the bookmaker W and the accuracy of the pairs stated
at >= 0.95 of P(ΔMAP < 0) (Carterette 2007), the log loss of that stated probability (the
criterion of ``choose_settings.py``), and Kendall's τ of the estimated MAP against the
true. Writes ``summary.csv`` (one row per collection, design and method) and ``runs.csv.gz``
(per run) to ``--out``; ``--methods`` runs only some methods, and ``--merge`` keeps the rows of
``--out``'s ``summary.csv`` this run does not redo (``runs.csv.gz`` holds this run's only).
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import norm

from relimpute.calibration.metrics import bookmaker_w, kendall_tau, orient
from relimpute.confidence import ConfidenceEngine
from relimpute.data import Campaign
from relimpute.labels import read_labels, with_labels
from relimpute.measures import evaluate
from relimpute.relevance import FusionLLM, load_model

DATA = Path(__file__).resolve().parents[3] / "shared" / "data"
COLLECTIONS = {"dl19": "trec-dl-2019-passage", "dl21": "trec-dl-2021-passage"}
SOURCES = ("umbrela-gpt-4o", "umbrela-gpt-4", "binary-gpt-4o", "binary-gpt-4", "binary-llama3.2")
LEVEL = 0.95
MC_DRAWS = 2000
METHODS = ("fusion", "substitution", "ppi", "fusion-llm")
#: the fusion-llm settings this study was measured with, the defaults until default_check.py
#: chose the labels' pool and runs_weight 0.5: its fusion-llm rows, and the base of every --variant
EARLIER = {"unlabelled": "runs", "runs_weight": 1.0}


def load(collection: str, sources) -> Campaign:
    folder = DATA / COLLECTIONS[collection]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        full = Campaign.from_files(folder / "qrels.txt", folder / "runs", rel_threshold=2)
    return with_labels(full, [read_labels(folder / "llm" / f"{s}.txt") for s in sources])


def kept_judgments(full: Campaign, design: str, size: int, rng: np.random.Generator) -> Campaign:
    """The campaign knowing only the human labels a design keeps."""
    if design == "pool":
        return full.pooled(size)
    masks = []
    for topic in full.topics:
        judged = np.flatnonzero(topic.judged)
        mask = np.zeros(topic.n_docs, bool)
        mask[rng.choice(judged, size=min(size, len(judged)), replace=False)] = True
        masks.append(mask)
    return full.with_judged(masks)


def llm_grades(full: Campaign, source) -> list[np.ndarray]:
    """Per topic the LLM's grade of every NIST-judged document (a binary 1 as 2; no label: 0)."""
    values = np.array([2 * int(c) if source.scale == "binary" else int(c) for c in source.categories])
    return [np.where(c >= 0, values[np.maximum(c, 0)], 0) for c in source.align(full)]


def substituted(full: Campaign, kept: Campaign, grades) -> Campaign:
    """Human grades where kept, the LLM's on the other judged documents."""
    topics = tuple(
        replace(t, grades=np.where(k.judged, t.grades, np.where(t.judged, g, t.grades)).astype(t.grades.dtype))
        for t, k, g in zip(full.topics, kept.topics, grades)
    )
    return replace(full, topics=topics)


def per_topic_ap(campaign: Campaign) -> np.ndarray:
    """``(T, S)`` AP per topic and run (0 where a run retrieves nothing)."""
    frame = evaluate(campaign, ["AP"], per_topic=True, missing="zero")
    table = frame.pivot(index="query_id", columns="system", values="value")
    return table.reindex(index=list(campaign.query_ids), columns=list(campaign.systems)).fillna(0).to_numpy()


def pair_index(n: int) -> tuple[np.ndarray, np.ndarray]:
    return np.triu_indices(n, k=1)


def metrics(truth, e_map, lo=None, hi=None, d_lo=None, d_hi=None, p_a_better=None) -> dict:
    """The study's numbers for one method (module docstring)."""
    a, b = pair_index(len(truth))
    true_delta = truth[a] - truth[b]
    out = {
        "mean_abs_bias": float(np.abs(e_map - truth).mean()),
        "mean_bias": float((e_map - truth).mean()),
        "tau": kendall_tau(e_map, truth),
    }
    if lo is not None:
        out |= {
            "map_coverage": float(((lo <= truth) & (truth <= hi)).mean()),
            "map_width": float((hi - lo).mean()),
            "delta_coverage": float(((d_lo <= true_delta) & (true_delta <= d_hi)).mean()),
            "delta_width": float((d_hi - d_lo).mean()),
        }
    if p_a_better is not None:
        decided = true_delta != 0
        confidence, correct = orient(p_a_better[decided], true_delta[decided] > 0)
        sure = confidence >= LEVEL
        stated = np.clip(np.where(correct, confidence, 1 - confidence), 1e-6, 1)
        out |= {
            "log_loss": float(-np.log(stated).mean()),
            "W": bookmaker_w(confidence, correct),
            "share_sure": float(sure.mean()),
            "accuracy_sure": float(correct[sure].mean()) if sure.any() else np.nan,
        }
    return out


def model_answer(model, kept: Campaign, truth, seed: int, keep_pairs: bool = False) -> dict:
    """The study's numbers for a model; ``keep_pairs`` adds every pair's P(ΔMAP > 0) (``p_a_better``)."""
    started = time.perf_counter()
    estimate = model.fit_predict(kept, rng=seed)
    fitted = time.perf_counter() - started
    comparison = ConfidenceEngine().confidence(
        kept, estimate, n_draws=MC_DRAWS, rng=seed, method="monte carlo"
    )
    scores = comparison.scores.to_frame(LEVEL).set_index("system").reindex(kept.systems)
    delta = comparison.to_frame(LEVEL)
    index = {s: i for i, s in enumerate(kept.systems)}
    a, b = pair_index(len(truth))
    # the comparison lists the pairs as (a, b) of the campaign order: align, flipping if needed
    keyed = {(index[x], index[y]): (lo, hi, p) for x, y, lo, hi, p in
             delta[["system_a", "system_b", "ci_low", "ci_high", "p_a_better"]].itertuples(index=False)}  # fmt: skip
    d_lo, d_hi, p = np.empty(len(a)), np.empty(len(a)), np.empty(len(a))
    for i, (x, y) in enumerate(zip(a, b)):
        if (x, y) in keyed:
            d_lo[i], d_hi[i], p[i] = keyed[(x, y)]
        else:
            lo, hi, q = keyed[(y, x)]
            d_lo[i], d_hi[i], p[i] = -hi, -lo, 1 - q
    out = metrics(truth, scores["e_map"].to_numpy(), scores["ci_low"].to_numpy(),
                  scores["ci_high"].to_numpy(), d_lo, d_hi, p)  # fmt: skip
    out["fit_seconds"] = fitted
    out["per_run"] = scores["e_map"].to_numpy()
    if keep_pairs:
        out["p_a_better"] = p
    return out


def ppi_answers(truth_ap, llm_ap, budget: int, judged_per_topic: float, reps: int, seed: int) -> dict:
    """PPI and PPI++ (per-topic AP as the outcome) at the same human budget, as complete
    judgments of random topics; each number averaged over ``reps`` topic sets."""
    from ppi_py import ppi_mean_ci

    n_topics, n_runs = truth_ap.shape
    n = int(np.clip(round(budget / judged_per_topic), 3, n_topics - 1))
    truth = truth_ap.mean(axis=0)
    a, b = pair_index(n_runs)
    rng = np.random.default_rng(seed)
    results = {"ppi": [], "ppi++": []}
    for _ in range(reps):
        labelled = np.zeros(n_topics, bool)
        labelled[rng.choice(n_topics, n, replace=False)] = True
        y, yhat, yu = truth_ap[labelled], llm_ap[labelled], llm_ap[~labelled]
        # runs and pairs as coordinates of one mean: λ tuned per coordinate for PPI++
        outcome = np.hstack([y, y[:, a] - y[:, b]])
        predicted = np.hstack([yhat, yhat[:, a] - yhat[:, b]])
        unlabelled = np.hstack([yu, yu[:, a] - yu[:, b]])
        for name, lam in (("ppi", 1.0), ("ppi++", None)):
            lo, hi = _ppi_ci(ppi_mean_ci, outcome, predicted, unlabelled, lam)
            est = (lo + hi) / 2  # the normal interval is centred on the estimate
            sd = np.maximum((hi - lo) / (2 * norm.ppf(0.5 + LEVEL / 2)), 1e-12)
            s = n_runs
            p = norm.cdf(est[s:] / sd[s:])  # P(ΔMAP > 0), normal as PPI's interval
            results[name].append(metrics(truth, est[:s], lo[:s], hi[:s], lo[s:], hi[s:], p))
    out = {}
    for name, rows in results.items():
        frame = pd.DataFrame(rows)
        out[name] = {**frame.mean().to_dict(), "human_topics": n}
    return out


def _ppi_ci(func, y, yhat, yu, lam):
    """Bounds of every coordinate at once; for PPI++ (``lam=None``) the power-tuned λ of each
    coordinate alone (ppi_py's ``lam_optim_mode="element"``, computed here without its d × d
    covariance)."""
    if lam is None:
        lam = element_lambda(y, yhat, yu)
    lo, hi = func(y, yhat, yu, alpha=1 - LEVEL, lam=lam)
    return np.asarray(lo).ravel(), np.asarray(hi).ravel()


def element_lambda(y, yhat, yu) -> np.ndarray:
    """PPI++'s λ per coordinate for a mean (Angelopoulos, Duchi & Zrnic 2023, clipped to [0, 1])."""
    n, big_n = len(y), len(yu)
    cov = 2.0 / n * ((y - y.mean(axis=0)) * (yhat - yhat.mean(axis=0))).sum(axis=0)
    var = np.var(np.concatenate([yhat, yu]), axis=0, ddof=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        lam = cov / (2 * (1 + n / big_n) * var)
    return np.clip(np.nan_to_num(lam), 0.0, 1.0)


def run_setting(collection, full, design, size, sources, args) -> tuple[list[dict], list[dict]]:
    rng = np.random.default_rng(args.seed)
    kept = kept_judgments(full, design, size, rng)
    truth_ap = per_topic_ap(full)
    truth = truth_ap.mean(axis=0)
    budget = sum(int(t.judged.sum()) for t in kept.topics)
    per_topic_judged = np.mean([t.judged.sum() for t in full.topics])
    setting = {"collection": collection, "design": design, "size": size,
               "human_per_topic": budget / full.n_topics}  # fmt: skip
    rows, runs = [], []

    def add(method, result, source=""):
        per_run = result.pop("per_run", None)
        rows.append({**setting, "method": method, "source": source, **result})
        if per_run is not None:
            runs.extend({**setting, "method": method, "source": source, "system": s, "estimate": e,
                         "truth": t} for s, e, t in zip(full.systems, per_run, truth))  # fmt: skip
        print(f"  {design} {size} {method} {source}: " + ", ".join(
            f"{k} {v:.3f}" for k, v in result.items() if isinstance(v, float)), file=sys.stderr)  # fmt: skip

    if "fusion" in args.methods:
        add("fusion", model_answer(load_model("fusion"), replace(kept, labels=()), truth, args.seed))
    for name in sources:
        source = next(s for s in full.labels if s.name == name)
        grades = llm_grades(full, source)
        if "substitution" in args.methods:
            sub_ap = per_topic_ap(substituted(full, kept, grades))
            add("substitution", {**metrics(truth, sub_ap.mean(axis=0)), "per_run": sub_ap.mean(axis=0)}, name)
        if "ppi" in args.methods:
            nothing_kept = full.with_judged([np.zeros(t.n_docs, bool) for t in full.topics])
            only_llm = per_topic_ap(substituted(full, nothing_kept, grades))
            for method, result in ppi_answers(truth_ap, only_llm, budget, per_topic_judged, args.ppi_reps,
                                              args.seed).items():  # fmt: skip
                add(method, result, name)
        if "fusion-llm" not in args.methods:
            continue
        one = replace(kept, labels=(source,))
        for sd in args.runs_weight_sd:
            method = "fusion-llm" if sd == 0 else f"fusion-llm, runs weight sd {sd:g}"
            add(method, model_answer(FusionLLM(runs_weight_sd=sd, **EARLIER), one, truth, args.seed), name)
        for label, settings in args.variant:
            add(f"fusion-llm, {label}", model_answer(FusionLLM(**{**EARLIER, **settings}), one, truth, args.seed), name)
    return rows, runs


def variant(text: str) -> tuple[str, dict]:
    """``NAME:key=value,...`` → (NAME, FusionLLM settings); a value is a number where it reads as one."""
    name, _, items = text.partition(":")
    settings = {}
    for item in filter(None, items.split(",")):
        key, sep, value = item.partition("=")
        if not sep:
            raise argparse.ArgumentTypeError(f"--variant {text!r}: {item!r} is not KEY=VALUE")
        try:
            settings[key] = float(value)
        except ValueError:
            settings[key] = value
    return name, settings


def methods(text: str) -> set[str]:
    """``--methods``: a comma-separated subset of :data:`METHODS`."""
    chosen = {m for m in text.split(",") if m}
    unknown = chosen - set(METHODS)
    if unknown or not chosen:
        raise argparse.ArgumentTypeError(f"--methods {text!r}: choose among {', '.join(METHODS)}")
    return chosen


def merged(old: pd.DataFrame | None, rows: list[dict]) -> pd.DataFrame:
    """``rows`` in place of the rows of ``old`` (a summary.csv) with the same collection, design,
    size, method and source; the other old rows kept, new ones appended after their design's."""
    new = pd.DataFrame(rows)
    if old is None or old.empty:
        return new
    keys = ["collection", "design", "size", "method", "source"]
    old = old.assign(source=old["source"].fillna(""), order=np.arange(len(old), dtype=float))
    new = new.assign(source=new["source"].fillna(""))
    position = old.set_index(keys)["order"]
    design_end = old.groupby(keys[:3])["order"].max()
    new["order"] = [position.get(tuple(k), design_end.get(tuple(k[:3]), len(old)) + 0.5 + i / 1e4)
                    for i, k in enumerate(new[keys].itertuples(index=False))]  # fmt: skip
    redone = old.set_index(keys).index.isin(new.set_index(keys).index)
    table = pd.concat([old[~redone], new], ignore_index=True).sort_values("order", kind="stable")
    return table.drop(columns="order").reset_index(drop=True)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--collections", default="dl19,dl21")
    parser.add_argument("--pool", default="3", help="pool depths k, comma-separated")
    parser.add_argument("--random", default="10", help="human labels per topic m, comma-separated")
    parser.add_argument("--sources", default=",".join(SOURCES))
    parser.add_argument("--ppi-reps", type=int, default=50)
    parser.add_argument("--runs-weight-sd", default="0", type=lambda text: [float(x) for x in text.split(",")],
                        help="FusionLLM runs_weight_sd values, comma-separated (0: the class default)")
    parser.add_argument("--variant", action="append", default=[], type=variant, metavar="NAME:KEY=VALUE,...",
                        help="also fusion-llm with these FusionLLM settings, as method 'fusion-llm, NAME' (repeatable)")
    parser.add_argument("--methods", default=",".join(METHODS), type=methods, metavar="METHOD,...",
                        help=f"methods to run, comma-separated, of {', '.join(METHODS)} (fusion-llm: with every "
                        "--runs-weight-sd and --variant; ppi: PPI and PPI++)")
    parser.add_argument("--merge", action="store_true",
                        help="keep --out's summary.csv rows this run does not redo (same collection, design, size, "
                        "method, source), replacing those it does")
    parser.add_argument("--seed", type=int, default=2007)
    parser.add_argument("--out", default=str(Path(__file__).parent / "results"))
    args = parser.parse_args(argv)
    sources = [s for s in args.sources.split(",") if s]
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    previous = out / "summary.csv"
    old = pd.read_csv(previous) if args.merge and previous.exists() else None
    rows, runs = [], []
    designs = [("pool", int(k)) for k in args.pool.split(",") if k] + [
        ("random", int(m)) for m in args.random.split(",") if m
    ]
    for collection in args.collections.split(","):
        full = load(collection, sources)
        print(f"{collection}: {full}", file=sys.stderr)
        for design, size in designs:
            r, s = run_setting(collection, full, design, size, sources, args)
            rows += r
            runs += s
            table = merged(old, rows) if args.merge else pd.DataFrame(rows)
            table.to_csv(out / "summary.csv", index=False, float_format="%.4f")
            pd.DataFrame(runs).to_csv(out / "runs.csv.gz", index=False, float_format="%.5f")
    return 0


if __name__ == "__main__":
    sys.exit(main())
