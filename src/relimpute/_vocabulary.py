"""One word per meaning in the Python API, beside the command line's option (docs/conventions.md).

The rules, where the command line has one flag for several settings or the Python API had
several words for one:

- **Levels.** ``level`` is a confidence level, the coverage of an interval or bound (0.95);
  ``confidence`` the confidence a call reaches, max(P, 1 − P) of P(a beats b): what a
  selection judges until, or what a calibration study scores; ``alpha`` only a test's
  significance threshold (0.05, compared with p-values: SciPy's and statsmodels' name). The
  command line sets all three with one ``--confidence P`` (α = 1 − P).
- **Randomness.** ``rng`` is the random source of one call, a ``numpy.random.Generator`` or an
  integer seed (``numpy.random.default_rng`` takes both; SciPy's name since SPEC 7);
  ``seed`` an integer a study or a selector records so that a rerun repeats it (a study's
  manifest, a judging journal). Both are set by ``--seed``.
- **Depths.** ``depth`` cuts every ranking at rank K (trec_eval ``-M``; a simulated run's
  length); ``pool_depth`` is the depth K of a pool (the depth-K pool of the pooled runs).
- **Counts** start ``n_``: ``n_draws`` Monte Carlo draws (the command line's
  ``--mc-draws``; a model's posterior draws are its own ``n_draws`` in ``model_params``),
  ``n_topics``, ``n_systems``, ``n_resamples``.
- **Registries** answer to ``get_X``, ``available_X`` and ``register_X`` (a measure is parsed
  from its name: ``parse_measure``).

:data:`WORDS` lists every keyword that two or more subpackages of the public API share, and
the words of the rules above; ``tests/test_python_vocabulary.py`` walks the public signatures
and fails on a shared keyword outside it or on another spelling of one of its meanings. Old
spellings keep working for one minor version with a warning (:mod:`relimpute._deprecation`).
"""

from __future__ import annotations

from typing import NamedTuple


class Word(NamedTuple):
    """A keyword of the Python API, its meaning, the command line's option for it (or None),
    and spellings of that meaning the API does not use (a test fails if one appears)."""

    word: str
    meaning: str
    option: str | None = None
    not_: tuple[str, ...] = ()


#: Every keyword the public API's subpackages share, and the words of the rules above.
WORDS: tuple[Word, ...] = (
    # levels and tests
    Word("level", "a confidence level: the coverage of an interval or bound (0.95)",
         "--confidence", ("confidence_level", "coverage", "ci_level")),
    Word("confidence", "the confidence a call reaches, max(P, 1 − P): what a selection judges "
         "until (0.95), or the calls' stated confidences a calibration scores", "--confidence"),
    Word("alpha", "a test's significance threshold (0.05): p < alpha is significant",
         "--confidence", ("significance", "significance_level", "sig_level")),
    Word("cap", "the confidence cap of the capped calibration tables", "--cap"),
    Word("correct", "per call, whether it was right (calibration's outcomes)"),
    Word("test", "a paired significance test by name", "--test"),
    # randomness
    Word("rng", "the random source of one call: a Generator or an integer seed", "--seed",
         ("random_state", "generator", "random_seed")),
    Word("seed", "an integer seed a study or selector records, so that a rerun repeats it",
         "--seed"),
    # depths and counts
    Word("depth", "cut every ranking at rank K (trec_eval -M), or a simulated run's length",
         "--depth", ("cutoff_depth", "max_rank_depth")),
    Word("pool_depth", "the depth K of a pool: the depth-K pool of the pooled runs",
         "--pool-depth", ("pooldepth", "pool_k")),
    Word("n_draws", "Monte Carlo draws (of relevance, or a model's posterior draws)",
         "--mc-draws", ("mc_draws", "monte_carlo_draws", "num_draws", "n_samples")),
    Word("draws", "the draws themselves (an array, one per Monte Carlo draw)"),
    Word("n_topics", "a number of topics", "--n-topics", ("num_topics",)),
    Word("n_relevant", "R: the number of relevant documents of a topic"),
    Word("k", "a cutoff rank (P@k), or a calibration trial's number of runs (Carterette's k)",
         "--k"),
    Word("n", "a count (of documents, pairs or trials: the docstring says which)"),
    # what is evaluated
    Word("campaign", "a Campaign: runs, qrels and judgments (relimpute.Campaign)"),
    Word("runs", "runs themselves: files, a folder of them, or frames", None, ("run_files",)),
    Word("run", "one run, by name or as a frame"),
    Word("systems", "runs by name (the column ``system``)", "--systems", ("system_names",)),
    Word("qrels", "relevance judgments: a file or a frame"),
    Word("rel_threshold", "the lowest grade counted relevant", "--rel-threshold",
         ("relevance_threshold", "min_grade")),
    Word("measure", "an evaluation measure by name (\"AP\", \"nDCG@10\") or object",
         "--measure", ("metric",)),
    Word("measures", "evaluation measures by name or object", "--measure"),
    Word("estimate", "a RelevanceEstimate: probabilities of relevance aligned to the campaign",
         "--estimate"),
    Word("model", "a relevance model: registered name, settings file or instance", "--model"),
    Word("model_params", "hyper-parameters overriding a model's settings"),
    Word("params", "a measure's, model's or simulation's parameters"),
    Word("strategy", "a judgment selection strategy (name or instance)", "--strategy"),
    Word("method", "the method of an interval or estimate (by name)", "--method"),
    Word("prior", "one probability of relevance for every unjudged document", "--prior"),
    Word("groups", "the groups table of the runs (run, group, pooled)", "--groups"),
    Word("group", "one group of runs, by name"),
    Word("pooled", "the runs that built the pool (or, in a groups table, whether a run did)"),
    Word("pooled_only", "only the pooled runs"),
    Word("need_group", "whether a groups table must give a group column"),
    Word("among", "the runs to look among"),
    Word("corrector", "a pool-bias corrector (instance)"),
    Word("condensed", "remove unjudged documents from every ranking first", "--condensed"),
    Word("truth", "the complete judgments a study measures against"),
    # per topic and document
    Word("topic", "one topic: its index or its TopicData"),
    Word("t", "a topic's index"),
    Word("topics", "topics by id, or (engine) add topic sampling"),
    Word("query_id", "a topic's id"),
    Word("query_ids", "topics' ids, in order"),
    Word("doc_ids", "documents' ids, in order"),
    Word("ranking", "a run's documents in rank order (indices into the topic's documents)"),
    Word("judged", "per document, whether it is judged"),
    Word("grades", "per document, its judged grade"),
    Word("labels", "per document, its label (a grade; -1 not judged), or label sources"),
    Word("sources", "where each row came from: label sources, or the estimates' sources"),
    Word("source", "a file (or name) an input came from, for error messages"),
    Word("p", "probabilities of relevance (or a probability)"),
    Word("pairs", "(a, b) pairs of systems"),
    Word("a", "the first of a pair"),
    Word("b", "the second of a pair"),
    Word("p_a_better", "P(a beats b) per pair"),
    Word("scores", "per-system (and topic) scores"),
    Word("mean_difference", "the mean over topics of a paired difference"),
    Word("high", "an interval's upper bound"),
    Word("low", "an interval's lower bound"),
    Word("values", "the values themselves"),
    Word("x", "the first variable"),
    Word("y", "the second variable, or an outcome"),
    # names, files, frames
    Word("name", "a registered name"),
    Word("names", "names, in order"),
    Word("family", "a measure or run family's name"),
    Word("default", "the value when none is given"),
    Word("frame", "a pandas DataFrame"),
    Word("path", "a file"),
    Word("folder", "a folder to read or write (a study's output, a campaign's files)", "--output",
         ("directory", "out_dir", "output_dir", "checkpoint")),
    Word("data", "a decoded study unit's JSON data"),
    # studies and their running
    Word("study", "a study (the runner's protocol) or its result"),
    Word("unit", "one unit of a study"),
    Word("units", "a study's units"),
    Word("result", "one unit's result"),
    Word("results", "the units' results"),
    Word("jobs", "parallel workers", "--jobs", ("n_jobs", "workers", "processes")),
    Word("scheduler", "where a study's units run: a Dask client, a scheduler's address, or "
         "\"local\" (None: local processes)", "--scheduler"),
    Word("client", "a connected Dask client the units run on (the runner's lower level)"),
    Word("address", "a Dask scheduler's address"),
    Word("retries", "how many times a failed unit is run again"),
    Word("already", "units finished before"),
    Word("on_result", "called with each unit's result as it arrives"),
    Word("function", "the function run on each unit"),
    Word("shared", "data every unit reads (sent once)"),
    Word("progress", "show progress (the command line's --quiet is progress=False)", "--quiet",
         ("show_progress", "verbose")),
    Word("desc", "a progress bar's description"),
    Word("total", "how many items a progress bar counts to"),
    Word("scale", "the scale of differences or of labels", "--scale"),
)


def words() -> dict[str, Word]:
    """Each word -> its row."""
    return {row.word: row for row in WORDS}
