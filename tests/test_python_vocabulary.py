"""One word per meaning in the Python API (``relimpute._vocabulary``), as test_vocabulary.py
holds the command line's flags; the old spellings warn for one minor version and give the new
spelling's result."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
import warnings
from collections import defaultdict
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import relimpute
from relimpute._vocabulary import WORDS, words
from relimpute.cli._vocabulary import spellings

ROOT = Path(__file__).resolve().parents[1]
FACADES = ("data", "errors", "io")  # modules the package itself re-exports from


def _parameters(obj) -> list[inspect.Parameter]:
    try:
        signature = inspect.signature(obj)
    except (TypeError, ValueError):
        return []
    return [p for p in signature.parameters.values() if p.name not in ("self", "cls")
            and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]  # fmt: skip


def _callables(obj, where: str):
    """``(place, callable)``: a function, or a class and its public methods (not deprecated
    aliases, which keep the old words on purpose)."""
    if getattr(obj, "__deprecated__", None):
        return
    if inspect.isclass(obj):
        yield where, obj
        for name, member in vars(obj).items():
            function = getattr(member, "__func__", member)
            if not name.startswith("_") and inspect.isfunction(function):
                yield f"{where}.{name}", function
    elif inspect.isfunction(obj):
        yield where, obj


def _exported():
    """Everything ``relimpute`` and its subpackages export, and the public top-level modules'
    public classes and functions: ``(package, place, callable)``."""
    packages = {info.name: info.ispkg for info in pkgutil.iter_modules(relimpute.__path__)
                if not info.name.startswith("_") and info.name != "cli"}  # fmt: skip
    for name in relimpute.__all__:
        for place, obj in _callables(getattr(relimpute, name), f"relimpute.{name}"):
            yield "relimpute", place, obj
    for name, is_package in packages.items():
        module = importlib.import_module(f"relimpute.{name}")
        exported = getattr(module, "__all__", None) or [
            n for n, v in vars(module).items()
            if not n.startswith("_") and getattr(v, "__module__", None) == module.__name__
        ]  # fmt: skip
        package = "relimpute" if name in FACADES else name
        for item in exported:
            for place, obj in _callables(getattr(module, item), f"relimpute.{name}.{item}"):
                yield package, place, obj


def _every_public():
    """Every public class and function of every public module: ``(place, callable)``."""
    names = [m.name for m in pkgutil.walk_packages(relimpute.__path__, "relimpute.")
             if not any(p.startswith("_") for p in m.name.split(".")) and ".cli" not in m.name]  # fmt: skip
    for module_name in names:
        module = importlib.import_module(module_name)
        for name, obj in vars(module).items():
            if not name.startswith("_") and getattr(obj, "__module__", None) == module_name:
                yield from _callables(obj, f"{module_name}.{name}")


@pytest.fixture(scope="module")
def exported() -> dict[str, dict[str, set[str]]]:
    """keyword -> package -> places."""
    found: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    for package, place, obj in _exported():
        for parameter in _parameters(obj):
            found[parameter.name][package].add(place)
    return found


@pytest.fixture(scope="module")
def every_public() -> dict[str, list[tuple[str, inspect.Parameter]]]:
    """keyword -> [(place, parameter)] over every public module."""
    found: dict[str, list] = defaultdict(list)
    for place, obj in _every_public():
        for parameter in _parameters(obj):
            found[parameter.name].append((place, parameter))
    return found


def test_every_shared_keyword_is_in_the_table(exported):
    """A keyword two subpackages' exports share has one meaning, written in the table (a
    keyword of one package alone, e.g. a model's hyper-parameter, is that package's word)."""
    table = words()
    shared = {word: places for word, places in exported.items() if len(places) >= 2}
    assert "campaign" in shared and "pool_depth" in shared  # the walk sees the API
    missing = {w: sorted(p for ps in places.values() for p in ps)[:3]
               for w, places in shared.items() if w not in table}  # fmt: skip
    assert not missing, f"shared keywords outside relimpute._vocabulary.WORDS: {missing}"


def test_no_meaning_is_spelled_two_ways(every_public):
    """No public signature uses another spelling of a word's meaning (``mc_draws`` for
    ``n_draws``, ``directory`` for ``folder``, ``random_state`` for ``rng``, ...)."""
    other = {o: row.word for row in WORDS for o in row.not_}
    found = {o: [place for place, _ in every_public[o]][:3] for o in other if o in every_public}
    assert not found, f"spelled as the table says not to (use {other}): {found}"


def test_the_table_has_one_row_per_word_and_meaning(every_public):
    table = [row.word for row in WORDS]
    assert len(table) == len(set(table))
    meanings = [row.meaning for row in WORDS]
    assert len(meanings) == len(set(meanings))
    others = [o for row in WORDS for o in row.not_]
    assert len(others) == len(set(others)) and not set(others) & set(table)
    unused = [row.word for row in WORDS if row.word not in every_public]
    assert not unused, f"rows no public signature uses: {unused}"
    options = spellings()
    unknown = [row.option for row in WORDS if row.option and row.option not in options]
    assert not unknown, f"options not in the command line's VOCABULARY: {unknown}"


def test_seed_is_an_integer_and_rng_takes_a_generator(every_public):
    """``seed`` is an integer a study records (never a Generator); ``rng`` the random source
    of a call, annotated with the Generator it may be."""
    for place, parameter in every_public["seed"]:
        assert "Generator" not in str(parameter.annotation), f"{place}: a Generator is rng="
    for place, parameter in every_public["rng"]:
        annotation = str(parameter.annotation)
        assert parameter.annotation is inspect.Parameter.empty or "Generator" in annotation, place


REGISTRIES = [
    ("relimpute.relevance", "model", "uniform"),
    ("relimpute.bias", "corrector", "reduced"),
    ("relimpute.selection", "strategy", "mtc"),
    ("relimpute.calibration", "calibration_strategy", "mtc"),
]


@pytest.mark.parametrize("module, kind, name", REGISTRIES)
def test_registries_answer_to_get_available_register(module, kind, name):
    package = importlib.import_module(module)
    plural = f"available_{kind}s" if not kind.endswith("y") else f"available_{kind[:-1]}ies"
    for function in (f"get_{kind}", plural, f"register_{kind}"):
        assert function in package.__all__, f"{module}.{function}"
    assert name in getattr(package, plural)()
    assert getattr(package, f"get_{kind}")(name) is not None


def test_measures_and_interval_methods_register_as_the_others():
    from relimpute import measures
    from relimpute.precision import intervals

    assert {"parse_measure", "available_measures", "register_measure"} <= set(measures.__all__)
    assert callable(intervals.register_interval_method) and "bca" in intervals.METHODS.names()


OLD_NAMES = [
    ("relimpute.relevance", "register", "register_model", "Uniform"),
    ("relimpute.bias", "register", "register_corrector", "ReducedPool"),
    ("relimpute.selection", "register", "register_strategy", "MTC"),
    ("relimpute.measures", "register", "register_measure", "Measure"),
]


@pytest.mark.parametrize("module, old, new, item", OLD_NAMES)
def test_old_register_names_warn_and_register(module, old, new, item):
    package = importlib.import_module(module)
    if item == "Measure":  # a registered family: registering it again changes nothing
        from relimpute.measures.ap import AP as registered
    elif item == "ReducedPool":
        from relimpute.bias.reduced import ReducedPool as registered
    else:
        registered = getattr(package, item)
    with pytest.warns(DeprecationWarning, match=rf"{old} is deprecated .*use {new}"):
        assert getattr(package, old)(registered) is registered
    assert old not in package.__all__ and new in package.__all__


def test_old_register_strategy_of_calibration_warns():
    from relimpute import calibration

    strategy = calibration.get_calibration_strategy("mtc")
    with pytest.warns(DeprecationWarning, match="use register_calibration_strategy"):
        assert calibration.register_strategy(strategy) is strategy


def _renamed() -> list[tuple[str, object]]:
    """Every public callable that still takes old keywords: ``(place, callable)``."""
    seen, found = set(), []
    for place, obj in _every_public():
        target = obj.__init__ if inspect.isclass(obj) else obj
        if getattr(target, "__renamed_kwargs__", None) and id(target) not in seen:
            seen.add(id(target))
            found.append((place, obj))
    return found


RENAMED = _renamed()


def test_the_renames_are_the_tables_words():
    places = {place.rsplit(".", 1)[-1] for place, _ in RENAMED}
    assert {"pooled", "PPSDesign", "RTCSelection", "Strategy", "to_files"} <= places
    table = words()
    for place, obj in RENAMED:
        target = obj.__init__ if inspect.isclass(obj) else obj
        names = {p.name for p in _parameters(target)}
        for old, new in target.__renamed_kwargs__.items():
            assert new in names and old not in names, place
            assert new in table, f"{place}: {new} is not in the table"


@pytest.mark.parametrize("place, obj", RENAMED, ids=[place for place, _ in RENAMED])
def test_each_old_keyword_warns_and_passes_the_value_as_the_new_one(place, obj):
    """The wrapper, with the function it wraps replaced by a spy: the old keyword warns,
    names the new one and arrives under it; both at once is an error."""
    target = obj.__init__ if inspect.isclass(obj) else obj
    cell = next(c for c in target.__closure__ if c.cell_contents is target.__wrapped__)
    calls = []
    cell.cell_contents = lambda *args, **kwargs: calls.append(kwargs)
    try:
        for old, new in target.__renamed_kwargs__.items():
            with pytest.warns(DeprecationWarning, match=rf"\({old}=\.\.\.\) is deprecated.*{new}="):
                target(**{old: 7})
            assert calls.pop() == {new: 7}
            with pytest.raises(TypeError, match=f"{old}= is {new}="):
                target(**{old: 7, new: 7})
    finally:
        cell.cell_contents = target.__wrapped__


# ----------------------------------------------------------- the same result, old and new


@pytest.fixture(scope="module")
def campaign():
    from relimpute.simulate import simulate_campaign

    return simulate_campaign(n_topics=3, n_systems=6, n_docs=60, depth=15, rng=3).campaign


@pytest.fixture(scope="module")
def groups(campaign):
    from relimpute.groups import groups_from_frame

    runs = list(campaign.systems)
    return groups_from_frame(pd.DataFrame(
        {"run": runs, "group": [f"g{i // 2}" for i in range(len(runs))], "pooled": True}
    ))  # fmt: skip


def _old_and_new(call, old: str, new: str, value):
    with pytest.warns(DeprecationWarning, match=f"{old}="):
        before = call(**{old: value})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        after = call(**{new: value})
    return before, after


def _same(a, b):
    if isinstance(a, (list, tuple)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            _same(x, y)
    elif isinstance(a, dict):
        assert list(a) == list(b)
        np.testing.assert_array_equal(list(a.values()), list(b.values()))
    elif isinstance(a, pd.DataFrame):
        pd.testing.assert_frame_equal(a, b)
    elif isinstance(a, np.ndarray):
        np.testing.assert_array_equal(a, b)
    elif isinstance(a, relimpute.Campaign):
        _same([t.judged for t in a.topics], [t.judged for t in b.topics])
    elif hasattr(a, "left_out"):  # a LeaveOutPool
        assert (a.left_out, a.kept, a.label) == (b.left_out, b.kept, b.label)
        _same(a.campaign, b.campaign)
    else:
        assert a == b


def test_pool_depth_old_keyword_gives_the_same_pools(campaign, groups):
    from relimpute import bias
    from relimpute.bias.model import would_be_pool_estimate, would_be_pooled
    from relimpute.bias.slices import hole_fractions
    from relimpute.bias.study import check_study_input, full_pool_scores
    from relimpute.relevance import Uniform
    from relimpute.selection.designs import ap_prior, pool_table

    pooled = list(campaign.systems[:4])
    rows = np.arange(2)
    estimate = Uniform(0.3).fit_predict(campaign)
    steps = [("x", campaign.systems[4:], pooled)]
    calls = [
        lambda **k: campaign.pooled(systems=pooled, **k),
        lambda **k: bias.depth_pool(campaign, pooled, **k),
        lambda **k: bias.pool_counts(campaign, pooled, **k),
        lambda **k: bias.pool_reproduction(campaign, pooled, **k),
        lambda **k: list(bias.leave_one_run_out(campaign, pooled, **k)),
        lambda **k: list(bias.leave_one_group_out(campaign, groups, **k)),
        lambda **k: bias.PoolContext.build(campaign, pooled, **k).counts,
        lambda **k: would_be_pooled(campaign, rows, **k),
        lambda **k: would_be_pool_estimate(campaign, estimate, rows, **k).p,
        lambda **k: check_study_input(campaign, groups, **k),
        lambda **k: full_pool_scores(campaign, groups, measures=["P@5"], **k),
        lambda **k: hole_fractions(campaign, steps, **k),
        lambda **k: pool_table(campaign, **k),
        lambda **k: ap_prior(np.arange(1, 6), **k),
    ]
    for call in calls:
        _same(*_old_and_new(call, "depth", "pool_depth", 5))
    reduced = bias.get_corrector("reduced")
    before, after = _old_and_new(
        lambda **k: reduced.correct(campaign.pooled(5, pooled), pooled, campaign.systems[4:],
                                    ["P@5"], **k), "depth", "pool_depth", 5)  # fmt: skip
    _same(before.table, after.table)


def test_pool_depth_old_keyword_of_the_classes(campaign, groups):
    from relimpute.bias import PoolContext
    from relimpute.bias.study import LeaveOneGroupOut
    from relimpute.selection import PPSDesign

    _same(*_old_and_new(lambda **k: PPSDesign(budget=10, **k), "depth", "pool_depth", 7))
    before, after = _old_and_new(lambda **k: LeaveOneGroupOut(campaign, groups, n_common=0, **k),
                                 "depth", "pool_depth", 5)  # fmt: skip
    assert before.identity() == after.identity()
    context = PoolContext.build(campaign, list(campaign.systems[:4]), 5)
    old, new = _old_and_new(lambda **k: PoolContext(context.campaign, context.pooled,
                                                    counts=context.counts, **k),
                            "depth", "pool_depth", 5)  # fmt: skip
    assert old.pool_depth == new.pool_depth == 5
    with pytest.warns(DeprecationWarning, match="PoolContext.depth is deprecated"):
        assert context.depth == 5


def test_monte_carlo_draws_old_keywords_give_the_same_settings():
    from relimpute.calibration import get_calibration_strategy
    from relimpute.selection import LLMSelection, PosteriorSelection, RTCSelection

    for selector in (RTCSelection, LLMSelection, PosteriorSelection):
        old, new = _old_and_new(lambda **k: selector(**k).get_params(), "mc_draws", "n_draws", 9)
        assert old == new and new["n_draws"] == 9
    strategy = get_calibration_strategy("posterior")
    rebuilt = lambda **k: type(strategy)(strategy.name, strategy.selector, strategy.model, **k)  # noqa: E731
    old, new = _old_and_new(rebuilt, "monte_carlo_draws", "n_draws", 50)
    assert old == new and new.n_draws == 50


def test_folder_old_keyword_writes_the_same_files(campaign, tmp_path):
    from relimpute.relevance.quality import split_judgments

    before, after = tmp_path / "old", tmp_path / "new"
    with pytest.warns(DeprecationWarning, match="directory="):
        campaign.to_files(directory=before)
    campaign.to_files(folder=after)
    written = sorted(p.relative_to(before) for p in before.rglob("*") if p.is_file())
    assert written == sorted(p.relative_to(after) for p in after.rglob("*") if p.is_file())
    for name in written:
        assert (before / name).read_bytes() == (after / name).read_bytes()
    old, new = _old_and_new(lambda **k: split_judgments(campaign, protocol="pool", **k),
                            "depth", "pool_depth", 3)  # fmt: skip
    _same(old, new)


def test_docs_render_the_table_beside_the_command_line():
    """docs/conventions.md has a row per word: the Python word, its option, its meaning."""
    text = (ROOT / "docs" / "conventions.md").read_text(encoding="utf-8")
    rows = {}
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("| `") and len(cells) == 3:
            rows[cells[0].strip("`")] = cells
    for row in WORDS:
        assert row.word in rows, f"docs/conventions.md: no row for {row.word}"
        option = rows[row.word][1]
        assert (f"`{row.option}`" in option) if row.option else option in ("", "—"), row.word
    assert re.search(r"relimpute\._vocabulary", text)
