"""A second human assessor as a label source, against the LLM on the same pairs (DL 2019).

Run from the repository root::

    python examples/llm_evidence/second_human.py [--source umbrela-gpt-4o] [--out examples/llm_evidence/results]

DL 2019 had 4,511 of its NIST-judged pairs judged again by other people
(``llm/reannotations``; the first file's assessor of each pair is the "second human", as in
``agreement.py``). Both the second human's labels and the LLM's are cut to those pairs and
used the study's way (``study.py``: the depth-3 pool and 10 random human labels per topic
kept, the rest labelled): substitution (trec_eval on the kept NIST labels plus the
source's) and ``fusion-llm`` with the source as evidence, scored against the official
qrels. Writes ``second_human.csv``.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from study import (  # noqa: E402
    DATA, EARLIER, kept_judgments, llm_grades, load, metrics, model_answer, per_topic_ap, substituted,
)  # fmt: skip

from relimpute.io import read_qrels  # noqa: E402
from relimpute.labels import check_labels, read_labels  # noqa: E402
from relimpute.relevance import FusionLLM  # noqa: E402

DESIGNS = (("pool", 3), ("random", 10))


def second_human() -> pd.DataFrame:
    humans = sorted((DATA / "trec-dl-2019-passage" / "llm" / "reannotations").glob("*.txt"))
    both = pd.concat([read_qrels(h).assign(who=i) for i, h in enumerate(humans)]).sort_values("who")
    return both.drop_duplicates(["query_id", "doc_id"], keep="first")[["query_id", "doc_id", "relevance"]]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", default="umbrela-gpt-4o")
    parser.add_argument("--seed", type=int, default=2007)
    parser.add_argument("--out", default=str(Path(__file__).parent / "results"))
    args = parser.parse_args(argv)
    full = load("dl19", [args.source])
    human = second_human()
    pairs = human[["query_id", "doc_id"]]
    llm = full.labels[0]
    sources = {
        "second human": read_labels(human, name="second-human"),
        args.source: replace(llm, frame=llm.frame.merge(pairs, on=["query_id", "doc_id"])),
    }
    truth = per_topic_ap(full).mean(axis=0)
    rows = []
    for design, size in DESIGNS:
        kept = kept_judgments(full, design, size, np.random.default_rng(args.seed))
        for name, source in sources.items():
            source = check_labels(full, source)
            one = replace(kept, labels=(source,))
            sub = per_topic_ap(substituted(full, kept, llm_grades(full, source))).mean(axis=0)
            for method, result in (("substitution", metrics(truth, sub)),
                                   ("fusion-llm", model_answer(FusionLLM(**EARLIER), one, truth, args.seed))):  # fmt: skip
                result.pop("per_run", None)
                row = {"design": design, "size": size, "source": name, "labels": len(source.frame),
                       "method": method, **result}  # fmt: skip
                print("  " + ", ".join(f"{k} {v:.3f}" if isinstance(v, float) else f"{k} {v}"
                                       for k, v in row.items()), file=sys.stderr)  # fmt: skip
                rows.append(row)
                pd.DataFrame(rows).to_csv(Path(args.out) / "second_human.csv", index=False, float_format="%.4f")
    return 0


if __name__ == "__main__":
    sys.exit(main())
