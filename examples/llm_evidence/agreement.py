"""How good is each label source, against NIST and against a second human assessor?

Run from the repository root::

    python examples/llm_evidence/agreement.py [--out examples/llm_evidence/results]

For every LLM label file of DL 2019 and DL 2021 (``../shared/data/*/llm``), and for the
second and third human assessors of DL 2019 (``llm/reannotations``, 4,511 pairs), the
agreement with the NIST qrels at the study's threshold (relevant: grade >= 2; a binary
label 1 counts as relevant): Cohen's κ, the share of labels called relevant against
NIST's, and P(NIST grade >= 2 | label v) per label value. The LLM rows are given on
all judged pairs and, for DL 2019, on the 4,511 re-judged pairs (the humans' yardstick).
Writes ``agreement.csv``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd

from relimpute.io import read_qrels

DATA = Path(__file__).resolve().parents[3] / "shared" / "data"
COLLECTIONS = {"dl19": "trec-dl-2019-passage", "dl21": "trec-dl-2021-passage"}


def kappa(a: np.ndarray, b: np.ndarray) -> float:
    """Cohen's κ of two binary labellings."""
    observed = float((a == b).mean())
    chance = float(a.mean() * b.mean() + (1 - a.mean()) * (1 - b.mean()))
    return (observed - chance) / (1 - chance)


def relevant(labels: pd.Series) -> np.ndarray:
    binary = set(labels.unique()) <= {0, 1}
    return (labels >= (1 if binary else 2)).to_numpy()


def row(collection, source, pairs, merged) -> dict:
    nist = (merged["nist"] >= 2).to_numpy()
    rel = relevant(merged["label"])
    out = {"collection": collection, "source": source, "pairs": pairs, "n": len(merged),
           "kappa": kappa(rel, nist), "called_relevant": rel.mean(), "nist_relevant": nist.mean()}  # fmt: skip
    for value, group in merged.groupby("label"):
        out[f"p_rel_given_{value}"] = float((group["nist"] >= 2).mean())
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "results")
    args = parser.parse_args(argv)
    rows = []
    for collection, folder in COLLECTIONS.items():
        nist = read_qrels(DATA / folder / "qrels.txt").rename(columns={"relevance": "nist"})
        humans = sorted((DATA / folder / "llm" / "reannotations").glob("*.txt"))
        second = third = None
        if humans:  # each re-judged pair by two of the assessors: the first file's is "second"
            frames = [read_qrels(h).assign(who=i) for i, h in enumerate(humans)]
            both = pd.concat(frames).sort_values("who")
            second = both.drop_duplicates(["query_id", "doc_id"], keep="first")
            third = both[both.duplicated(["query_id", "doc_id"], keep="first")]
        for path in sorted((DATA / folder / "llm").glob("*.txt")):
            labels = read_qrels(path).rename(columns={"relevance": "label"})
            merged = labels.merge(nist, on=["query_id", "doc_id"])
            rows.append(row(collection, path.stem, "all judged", merged))
            if second is not None:
                on = merged.merge(second[["query_id", "doc_id"]], on=["query_id", "doc_id"])
                rows.append(row(collection, path.stem, "re-judged", on))
        for name, human in (("second human", second), ("third human", third)):
            if human is not None:
                merged = human.rename(columns={"relevance": "label"}).merge(nist, on=["query_id", "doc_id"])
                rows.append(row(collection, name, "re-judged", merged))
    args.out.mkdir(parents=True, exist_ok=True)
    frame = pd.DataFrame(rows)
    frame.to_csv(args.out / "agreement.csv", index=False, float_format="%.3f")
    print(frame.to_string(index=False, float_format=lambda x: f"{x:.3f}"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
