"""What the scripts of this study share: the collections and the protocol of run.sh."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: name -> (data folder, relevance threshold)
COLLECTIONS = {
    "dl19": ("trec-dl-2019-passage", 2),
    "dl21": ("trec-dl-2021-passage", 2),
    "trec8": ("trec-8-adhoc", 1),
}
SEED, K, C, DEPTH = 2007, 10, 2, 100


def load(name: str):
    """``(campaign, groups)``: the collection's runs with its full qrels, and run -> group."""
    from relimpute import Campaign
    from relimpute.groups import read_groups

    folder, threshold = COLLECTIONS[name]
    data = ROOT.parent / "shared" / "data" / folder
    campaign = Campaign.from_files(data / "qrels.txt", data / "runs", rel_threshold=threshold)
    return campaign, read_groups(data / "groups.tsv").run_to_group()


def held_out(name: str) -> Path:
    """The default model's settings chosen without the collection."""
    return ROOT / "examples" / "calibration" / "held_out" / name
