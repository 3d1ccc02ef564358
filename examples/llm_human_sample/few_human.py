"""LLM labels on every judged pair plus 10 human labels per topic drawn with known inclusion
probabilities: model-assisted MAP beside substitution, PPI/PPI++ and fusion-llm.

Run from the repository root (PPI needs ``ppi_py`` on the path)::

    python examples/llm_human_sample/few_human.py [--collections dl19,dl21] [--draws 100]
        [--designs uniform,guided] [--pairs 40] [--fusion-draws 5] [--out DIR]

On TREC DL 2019 and 2021 passage the universe of a topic is the pairs NIST judged (unjudged
documents are nonrelevant, as in the official MAP, relevant = grade >= 2); UMBRELA GPT-4o
labels every one of them. Each seeded draw asks a human (the NIST grade) about 10 of them:

uniform
    10 of the topic's N judged pairs at random without replacement (π = 10 / N).
guided
    two strata, the documents the label calls relevant (grade >= 2) and the others, 10 drawn
    in all with Neyman's allocation n_h ∝ N_h · sd_h (sd_h = √(q_h (1 − q_h)), q_h the mean
    calibrated P(relevant) of the stratum: π follows the label's uncertainty), at least 2 per
    stratum (all of a smaller one).

Estimates of every run's MAP and of ΔMAP for ``--pairs`` pairs of runs drawn once (seeded),
all from ``relimpute.confidence.survey.estimate`` on the draw's sampled qrels (stratified, π
known), 95% intervals, the jackknife variance:

model-assisted, label
    the difference (GREG) estimator with the label as the prediction (p = 1 at grade >= 2).
model-assisted, calibrated / ppi++, calibrated
    the prediction is P(NIST grade >= 2 | UMBRELA grade), the share read on the *other*
    collection's official qrels (held out: never on the scored sample or collection); PPI++
    tunes λ per topic, cross-fitted over topics.

Beside them: substitution (trec_eval on the 10 human grades and the labels elsewhere: a point
estimate), PPI and PPI++ of ``ppi_py`` (``llm_evidence/study.py``: the same human budget spent on whole random
topics, per-topic AP the outcome) and ``fusion-llm`` (``FusionLLM()`` at its defaults, fitted
with the draw's 10 humans as judgments; its first ``--fusion-draws`` draws only, every pair).

Scored against the official MAP: mean |bias| (|mean over draws − truth|, averaged over runs),
mean |error| of one draw, coverage and width of the 95% intervals (MAP, ΔMAP), Kendall's τ of a
draw's MAPs against the official ones (mean over draws). Writes ``few_human_<collection>.csv`` into ``--out`` after every design.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import replace
from itertools import combinations
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent


def _llm_evidence_study():
    """``examples/llm_evidence/study.py`` (loading, substitution, PPI) under its own module
    name: another example's ``study`` must not be shadowed by it in ``sys.modules``."""
    import importlib.util

    name = "llm_evidence_study"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, HERE.parent / "llm_evidence" / "study.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # before running it: its dataclasses look their module up
        spec.loader.exec_module(module)
    return sys.modules[name]


_study = _llm_evidence_study()
DATA, COLLECTIONS, kendall_tau, llm_grades, load, model_answer = (
    _study.DATA, _study.COLLECTIONS, _study.kendall_tau, _study.llm_grades, _study.load, _study.model_answer)
per_topic_ap, ppi_answers, substituted = _study.per_topic_ap, _study.ppi_answers, _study.substituted

SOURCE = "umbrela-gpt-4o"
HUMANS, FLOOR, THRESHOLD = 10, 2, 2
DESIGNS = ("uniform", "guided")
ESTIMATES = ("model-assisted:label", "model-assisted:calibrated", "ppi++:calibrated")


class Universe:
    """Per topic the NIST-judged documents (the universe), their human and LLM grades, and
    the campaign index of each (to build the campaign a draw keeps)."""

    def __init__(self, full, source=SOURCE):
        labels = next(s for s in full.labels if s.name == source)
        self.full, self.llm = full, llm_grades(full, labels)
        self.index = [np.flatnonzero(t.judged) for t in full.topics]
        self.doc_ids = [t.doc_ids[i].astype(str) for t, i in zip(full.topics, self.index)]
        self.human = [t.grades[i].astype(int) for t, i in zip(full.topics, self.index)]
        self.label = [g[i] for g, i in zip(self.llm, self.index)]


def calibration(universe: Universe) -> dict[int, float]:
    """P(human grade >= 2 | LLM grade) over a collection's judged pairs (apply it to the other)."""
    label, human = np.concatenate(universe.label), np.concatenate(universe.human)
    return {int(g): float((human[label == g] >= THRESHOLD).mean()) for g in np.unique(label)}


def allocate(sizes, spreads, n: int, floor: int = FLOOR) -> np.ndarray:
    """Neyman's allocation of ``n`` draws, n_h ∝ N_h · sd_h, at least ``floor`` in every stratum
    (all of a smaller one) and at most N_h; whole numbers by the largest remainder."""
    sizes = np.asarray(sizes, dtype=int)
    base = np.minimum(sizes, floor)
    if base.sum() >= n or sizes.sum() <= n:
        return np.minimum(sizes, base if base.sum() >= n else sizes)
    out = base.copy()
    while out.sum() < n:
        share = np.asarray(sizes * np.asarray(spreads, dtype=float), dtype=float) + 1e-9
        room = out < sizes
        want = np.where(room, share / share[room].sum() * n - out, -np.inf)
        out[int(np.argmax(want))] += 1
    return out


def draw(universe: Universe, design: str, calibrated: dict, rng) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per topic (drawn mask, stratum) over the universe's documents."""
    out = []
    for label in universe.label:
        stratum = (label >= THRESHOLD).astype(int) if design == "guided" else np.zeros(len(label), int)
        sizes = np.bincount(stratum, minlength=2)
        q = np.array([np.mean([calibrated.get(int(g), 0.0) for g in label[stratum == h]]) if sizes[h] else 0.0
                      for h in range(2)])  # fmt: skip
        counts = allocate(sizes, np.sqrt(q * (1 - q)), HUMANS) if design == "guided" else \
            np.array([min(HUMANS, len(label)), 0])
        drawn = np.zeros(len(label), bool)
        for h, m in enumerate(counts):
            drawn[rng.choice(np.flatnonzero(stratum == h), size=int(m), replace=False)] = True
        out.append((drawn, stratum))
    return out


def sampled_qrels(universe: Universe, drawn) -> pd.DataFrame:
    """The draw's sampled qrels: every universe document, its grade where drawn (−1 elsewhere),
    its stratum (π = n_h / N_h: ``docs/survey.md``)."""
    return pd.concat([pd.DataFrame({"query_id": t.query_id, "doc_id": d,
                                    "relevance": np.where(m, g, -1), "stratum": s})
                      for t, d, g, (m, s) in zip(universe.full.topics, universe.doc_ids,
                                                 universe.human, drawn)], ignore_index=True)


def kept_campaign(universe: Universe, drawn):
    """The campaign judged only where the draw asked a human."""
    masks = []
    for t, i, (m, _) in zip(universe.full.topics, universe.index, drawn):
        mask = np.zeros(t.n_docs, bool)
        mask[i[m]] = True
        masks.append(mask)
    return universe.full.with_judged(masks)


def controls(universe: Universe, calibrated: dict, folder: Path) -> dict[str, pd.DataFrame]:
    """The predictions: the label (``label_predictions``) and its calibrated probability."""
    from relimpute.confidence.survey.control import label_predictions

    table = pd.concat([pd.DataFrame({"query_id": t.query_id, "doc_id": d,
                                     "p": [calibrated.get(int(g), 0.0) for g in lab]})
                       for t, d, lab in zip(universe.full.topics, universe.doc_ids, universe.label)])
    return {"label": label_predictions(folder / "llm" / f"{SOURCE}.txt", rel_threshold=THRESHOLD),
            "calibrated": table}


def survey_answer(sample, runs, control, estimator, pairs) -> dict:
    """Every run's MAP and the pairs' ΔMAP with 95% intervals (package estimator)."""
    from relimpute.confidence.survey import estimate

    table = estimate(sample, runs, control=control, estimator=estimator, pairs=pairs,
                     rel_threshold=THRESHOLD)
    table = table[table["query_id"] == "all"]
    one = table[table["run_b"] == ""].set_index("run").loc[list(runs)]
    two = table[table["run_b"] != ""].set_index(["run", "run_b"]).loc[pairs]
    return {"map": one[["estimate", "low", "high"]].to_numpy().T,
            "delta": two[["estimate", "low", "high"]].to_numpy().T}


def scores(truth, true_delta, maps, deltas=None) -> dict:
    """The numbers of one method over its draws (module docstring)."""
    est = np.array([m[0] for m in maps])
    out = {"draws": len(maps), "mean_abs_bias": float(np.abs(est.mean(0) - truth).mean()),
           "bias_mc_se": float((est.std(0, ddof=1) / np.sqrt(len(est))).mean()) if len(est) > 1 else np.nan,
           "mean_abs_error": float(np.abs(est - truth).mean()),
           "tau": float(np.mean([kendall_tau(e, truth) for e in est]))}
    if len(maps[0]) == 3:
        lo, hi = np.array([m[1] for m in maps]), np.array([m[2] for m in maps])
        out |= {"map_coverage": float(((lo <= truth) & (truth <= hi)).mean()),
                "map_width": float((hi - lo).mean())}
    if deltas:
        d, lo, hi = (np.array([x[i] for x in deltas]) for i in range(3))
        out |= {"delta_coverage": float(((lo <= true_delta) & (true_delta <= hi)).mean()),
                "delta_width": float((hi - lo).mean())}
    return out


def run_collection(name: str, other: str, args) -> list[dict]:
    full = load(name, [SOURCE])
    universe = Universe(full)
    calibrated = calibration(Universe(load(other, [SOURCE])))
    folder = DATA / COLLECTIONS[name]
    predictions = controls(universe, calibrated, folder)
    runs = {s: full.run_frame(s) for s in full.systems}
    truth_ap = per_topic_ap(full)
    truth = truth_ap.mean(axis=0)
    every = list(combinations(full.systems, 2))
    chosen = np.random.default_rng(args.seed).choice(len(every), min(args.pairs, len(every)), replace=False)
    pairs = [every[i] for i in sorted(chosen)]
    where = {s: i for i, s in enumerate(full.systems)}
    true_delta = np.array([truth[where[a]] - truth[where[b]] for a, b in pairs])
    source = next(s for s in full.labels if s.name == SOURCE)
    print(f"{name}: {full}; calibration from {other}: {calibrated}", file=sys.stderr)
    rows = []
    for design in args.designs:
        found = {key: ([], []) for key in args.estimates}
        found |= {"substitution": ([], []), "fusion-llm": ([], [])}
        fusion = []
        for k in range(args.draws):
            started = time.perf_counter()
            rng = np.random.default_rng([args.seed, k])
            drawn = draw(universe, design, calibrated, rng)
            sample = sampled_qrels(universe, drawn)
            for key in args.estimates:
                estimator, control = key.split(":")
                answer = survey_answer(sample, runs, predictions[control], estimator, pairs)
                found[key][0].append(answer["map"])
                found[key][1].append(answer["delta"])
            kept = kept_campaign(universe, drawn)
            found["substitution"][0].append([per_topic_ap(substituted(full, kept, universe.llm)).mean(axis=0)])
            if k < args.fusion_draws:
                from relimpute.relevance import FusionLLM

                result = model_answer(FusionLLM(), replace(kept, labels=(source,)), truth, args.seed + k)
                found["fusion-llm"][0].append([result.pop("per_run")])
                fusion.append(result)
            print(f"  {name} {design} draw {k}: {time.perf_counter() - started:.1f}s", file=sys.stderr)
        setting = {"collection": name, "design": design, "humans_per_topic": HUMANS,
                   "pairs": len(pairs)}
        for key, (maps, deltas) in found.items():
            if not maps:
                continue
            row = {**setting, "method": key.replace(":", ", "), **scores(truth, true_delta, maps, deltas)}
            if key == "fusion-llm":  # its intervals come from its own posterior, over every pair
                mean = pd.DataFrame(fusion).mean(numeric_only=True)
                row |= {c: float(mean[c]) for c in ("map_coverage", "map_width", "delta_coverage",
                                                    "delta_width")}
                row["pairs"] = len(every)
            rows.append(row)
        pd.DataFrame(rows).to_csv(Path(args.out) / f"few_human_{name}.csv", index=False, float_format="%.4f")
    nothing = full.with_judged([np.zeros(t.n_docs, bool) for t in full.topics])
    only_llm = per_topic_ap(substituted(full, nothing, universe.llm))
    judged = np.mean([len(i) for i in universe.index])
    for method, result in ppi_answers(truth_ap, only_llm, HUMANS * full.n_topics, judged,
                                      args.draws, args.seed).items():
        rows.append({"collection": name, "design": "whole topics", "humans_per_topic": HUMANS,
                     "pairs": len(every), "method": f"{method} (ppi_py)", "draws": args.draws,
                     "mean_abs_error": result["mean_abs_bias"], "tau": result["tau"],
                     **{c: result[c] for c in ("map_coverage", "map_width", "delta_coverage",
                                               "delta_width")}})
    pd.DataFrame(rows).to_csv(Path(args.out) / f"few_human_{name}.csv", index=False, float_format="%.4f")
    return rows


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--collections", default="dl19,dl21")
    parser.add_argument("--draws", type=int, default=100, help="seeded draws of the human sample")
    parser.add_argument("--designs", default=",".join(DESIGNS), type=lambda s: s.split(","))
    parser.add_argument("--estimates", default=",".join(ESTIMATES), type=lambda s: s.split(","),
                        metavar="ESTIMATOR:CONTROL,...", help="package estimates (control: label, calibrated)")
    parser.add_argument("--pairs", type=int, default=40, help="pairs of runs whose ΔMAP is scored")
    parser.add_argument("--fusion-draws", type=int, default=5)
    parser.add_argument("--seed", type=int, default=2007)
    parser.add_argument("--out", default=str(HERE / "results"))
    args = parser.parse_args(argv)
    Path(args.out).mkdir(parents=True, exist_ok=True)
    rows = []
    for name in args.collections.split(","):
        other = "dl21" if name == "dl19" else "dl19"
        rows += run_collection(name, other, args)
    table = pd.DataFrame(rows)
    print(table.to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
