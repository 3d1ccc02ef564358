"""Measure names people type: trec_eval's and ir_measures', one registry, hints for near misses."""

from __future__ import annotations

import numpy as np
import pytest

from relimpute.measures import Measure, name_table, parse_measure, register_measure

ir_measures = pytest.importorskip("ir_measures")

# trec_eval name -> relimpute's canonical name (the list, and a few more)
TREC_EVAL = {
    "map": "AP",
    "P_10": "P@10",
    "ndcg_cut_10": "nDCG@10",
    "ndcg": "nDCG",
    "recip_rank": "RR",
    "map_cut_100": "AP@100",
    "Rprec": "Rprec",
    "bpref": "Bpref",
    "recall_100": "R@100",
    "success_10": "Success@10",
    "num_rel": "NumRel",
    "num_ret": "NumRet",
    "num_rel_ret": "NumRelRet",
    "infAP": "infAP",
}
IR_MEASURES = [
    "AP",
    "MAP",
    "nDCG@10",
    "NDCG@10",
    "RR",
    "MRR",
    "R@100",
    "Recall@100",
    "Success@10",
    "ERR@20",
    "P(rel=2)@10",
    "Precision@5",
    "RPrec",
    "BPref",
    "infAP",
    "NumRet",
    "NumRel",
    "AP(rel=2)@10",
]


@pytest.mark.parametrize(("name", "canonical"), TREC_EVAL.items())
def test_trec_eval_names_round_trip(name, canonical):
    measure = parse_measure(name)
    assert str(measure) == canonical
    assert measure.trec_eval_name() == name


@pytest.mark.parametrize("name", IR_MEASURES)
def test_ir_measures_names_give_ir_measures_canonical_form(name):
    """The oracle is ir_measures' own parser: same canonical name, aliases resolved."""
    assert str(parse_measure(name)) == str(ir_measures.parse_measure(name))


def test_measures_without_trec_eval_name():
    for name in ["ERR@20", "RBP(p=0.8)", "Judged@10", "RR@10", "AP(rel=2)", "P(rel=2)@10"]:
        assert parse_measure(name).trec_eval_name() is None


@pytest.mark.parametrize(
    ("name", "hint"),
    [
        ("APP", "AP"),
        ("Map", "MAP"),
        ("nDGC@10", "nDCG@10' or 'ndcg_cut_10"),
        ("ndcg_cut", "ndcg_cut_k"),
        ("recip_rnk", "recip_rank"),
        ("bperf", "bpref"),
        ("Sucess@10", "Success@10' or 'success_10"),
        # the cutoff kept, trec_eval's name first when the family is written as trec_eval's
        ("map@10", "map_cut_10' or 'MAP@10"),
        ("ndcg@5", "ndcg_cut_5' or 'nDCG@5"),
        ("recip_rnk@10", "RR@10"),
        # a cutoff written without its @
        ("P10", "P@10' or 'P_10"),
        ("ndcg10", "nDCG@10' or 'ndcg_cut_10"),
        ("map(rel=2)@10", r"MAP\(rel=2\)@10"),
        ("infap", "infAP"),
    ],
)
def test_near_misses_get_a_hint(name, hint):
    with pytest.raises(ValueError, match=rf"did you mean '{hint}'\?"):
        parse_measure(name)


def test_trec_eval_cut_names_need_a_positive_cutoff():
    with pytest.raises(ValueError):
        parse_measure("P_0")
    with pytest.raises(ValueError, match="takes no cutoff"):
        parse_measure("Rprec@5")


def test_a_name_cannot_be_registered_twice():
    class Clash(Measure):
        family = "Clash"
        aliases = ("MAP",)

    with pytest.raises(ValueError, match="'MAP' is taken by AP"):
        register_measure(Clash)
    with pytest.raises(ValueError, match="unknown measure 'Clash'"):
        parse_measure("Clash")


def test_name_table_lists_every_spelling():
    rows = {syntax: (aliases, trec) for syntax, aliases, trec in name_table()}
    assert rows["AP[@k]"] == ("MAP", "map, map_cut_k")
    assert rows["R[@k]"] == ("Recall", "recall_k")
    assert rows["ERR[@k]"] == ("", "")


def test_names_declared_at_registration_are_the_class_attributes():
    """``register_measure(cls, family=..., ...)`` sets what the parser reads; a binary measure's
    ``_kernel`` scores it at its cutoff; a keyword outside NAMES is refused."""
    from relimpute.measures._registry import (
        _FAMILY_NAMES,
        _REGISTRY,
        _TREC_EVAL_STEMS,
        BinaryMeasure,
    )

    def hits_at_k(ranking, relevant, k=None):
        return (relevant[ranking[:, :k]]).sum(axis=-1).astype(float)

    class Hits(BinaryMeasure):
        description = "relevant documents in the top k"
        _kernel = staticmethod(hits_at_k)

    with pytest.raises(TypeError, match="not \\['trec_eval_cutoff'\\]"):
        register_measure(Hits, family="HitsTest", trec_eval_cutoff="hits")
    try:
        register_measure(Hits, family="HitsTest", cutoff_rule="required", trec_eval_cut="hitstest")
        declared = (Hits.family, Hits.cutoff_rule, Hits.trec_eval_cut)
        assert declared == ("HitsTest", "required", "hitstest")
        measure = parse_measure("hitstest_2")
        assert str(measure) == "HitsTest@2"
        ranking = np.array([[0, 1, 2], [2, 1, 0]])
        scores = measure.score(ranking, np.array([1, 0, 1]))
        # by hand: doc 0 is in the first run's top 2, doc 2 in the second's
        np.testing.assert_array_equal(scores, [1.0, 1.0])
        with pytest.raises(ValueError, match="needs a cutoff"):
            parse_measure("HitsTest")
    finally:  # leave the registry as the other tests find it
        _REGISTRY._items.pop("HitsTest", None)
        _FAMILY_NAMES.pop("HitsTest", None)
        _TREC_EVAL_STEMS.pop("hitstest", None)
