"""A campaign too large for memory is refused before reading, with the size it would need."""

import pytest

from relimpute.io.memory import (
    FIT_BYTES_PER_INPUT_BYTE,
    READ_BYTES_PER_INPUT_BYTE,
    available_bytes,
    check_fits,
    parse_size,
)
from relimpute.cli import main
from relimpute.errors import InputError
from relimpute.simulate import simulate_campaign, write_simulated


@pytest.fixture(scope="module")
def campaign(tmp_path_factory):
    folder = tmp_path_factory.mktemp("mem") / "c"
    write_simulated(folder, n_topics=4, n_systems=4, n_docs=200, depth=20, rng=3)
    return folder


def _size(folder):
    return sum(p.stat().st_size for p in [folder / "qrels.txt", *(folder / "runs").iterdir()])


@pytest.mark.parametrize(
    "text, value",
    [("8G", 8 * 2**30), ("500M", 500 * 2**20), ("1.5T", int(1.5 * 2**40)), ("2GiB", 2 * 2**30),
     ("1024", 1024), ("64kb", 64 * 2**10)],
)  # fmt: skip
def test_sizes_parse(text, value):
    assert parse_size(text) == value


@pytest.mark.parametrize("text", ["lots", "-1G", "0"])
def test_bad_sizes_are_refused(text):
    with pytest.raises(InputError, match="RELIMPUTE_MEMORY_LIMIT"):
        parse_size(text)


def test_the_limit_variable_sets_what_is_available(monkeypatch):
    monkeypatch.setenv("RELIMPUTE_MEMORY_LIMIT", "3M")
    assert available_bytes() == 3 * 2**20
    monkeypatch.delenv("RELIMPUTE_MEMORY_LIMIT")
    assert available_bytes() is None or available_bytes() > 0


def test_check_fits_compares_need_with_what_is_free(campaign, monkeypatch):
    files = [campaign / "qrels.txt", *(campaign / "runs").iterdir()]
    size = _size(campaign)
    monkeypatch.setenv("RELIMPUTE_MEMORY_LIMIT", str(int(size * READ_BYTES_PER_INPUT_BYTE) + 1))
    check_fits(files)  # reading fits
    with pytest.raises(InputError, match=r"these 5 files \(.*\) need about .* of memory"):
        check_fits(files, FIT_BYTES_PER_INPUT_BYTE, source="here")


def test_the_cli_refuses_a_fit_that_would_not_fit_and_writes_nothing(
    campaign, tmp_path, monkeypatch, capsys
):
    size = _size(campaign)
    between = int(size * (READ_BYTES_PER_INPUT_BYTE + FIT_BYTES_PER_INPUT_BYTE) / 2)
    monkeypatch.setenv("RELIMPUTE_MEMORY_LIMIT", str(between))
    qrels, runs, out = str(campaign / "qrels.txt"), str(campaign / "runs"), tmp_path / "e.tsv"
    assert main(["fit", qrels, runs, "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert f"{qrels} and {runs}" in err and "RELIMPUTE_MEMORY_LIMIT allows" in err
    assert not out.exists()
    # scoring reads the same files and fits in the same memory
    assert main(["evaluate", qrels, runs, "-m", "map"]) == 0
    assert main(["evaluate", qrels, runs, "-m", "map", "--intervals"]) == 2


def test_a_fit_whose_dense_step_would_not_fit_is_refused_before_it_starts(monkeypatch):
    from relimpute.relevance.fusion import Fusion

    campaign = simulate_campaign(n_topics=200, n_systems=4, n_docs=60, depth=10, rng=1)
    pooled = campaign.campaign.pooled(3)
    monkeypatch.setenv("RELIMPUTE_MEMORY_LIMIT", "1M")  # 10 copies of ~205 x 205 floats: 3.2 MB
    refused = r"Fusion model.s fit over 200 topics needs \(10 dense .*\) about 3\.\d MB"
    with pytest.raises(InputError, match=refused):
        Fusion().fit(pooled)
    monkeypatch.setenv("RELIMPUTE_MEMORY_LIMIT", "64M")
    Fusion().fit(pooled)  # fits when the memory is there


def test_the_structured_fit_forms_nothing_dense_and_its_covariance_is_checked_when_read(monkeypatch):
    """Beyond DENSE_LIMIT parameters (here set to 100) the fit over 200 topics runs under a
    500 KB limit, where the dense fit's 10 copies (3.3 MB) are refused; the dense
    covariance, when read, is checked first."""
    from relimpute.relevance.fusion import Fusion

    campaign = simulate_campaign(n_topics=200, n_systems=4, n_docs=60, depth=10, rng=1)
    pooled = campaign.campaign.pooled(3)
    monkeypatch.setattr("relimpute.relevance.arrowhead.DENSE_LIMIT", 100)
    monkeypatch.setenv("RELIMPUTE_MEMORY_LIMIT", "500K")  # 3 copies of 208 x 208 floats: 1014 KB
    model = Fusion(n_draws=0).fit(pooled)
    refused = r"dense 208 x 208 Laplace covariance needs \(3 dense .*\) about 1014\.0 KB"
    with pytest.raises(InputError, match=refused):
        model.covariance_  # noqa: B018
    monkeypatch.setenv("RELIMPUTE_MEMORY_LIMIT", "64M")
    assert model.covariance_.shape == (208, 208)  # formed when the memory is there


def test_fusion_llm_refuses_its_dense_label_shifts_before_any_fit(monkeypatch):
    """fusion-llm's label shifts keep a dense (g (1 + T) + 1)² covariance: 4 label values over
    200 topics, 6 copies of 805 x 805 floats (29.7 MB), refused before the default model's fit."""
    import pandas as pd

    from relimpute.labels import read_labels, with_labels
    from relimpute.relevance import FusionLLM

    truth = simulate_campaign(n_topics=200, n_systems=3, n_docs=20, depth=5, rng=2).campaign
    rows = [pd.DataFrame({"query_id": t.query_id, "doc_id": t.doc_ids[:4], "relevance": [0, 1, 2, 3]})
            for t in truth.topics]  # fmt: skip
    labelled = with_labels(truth.pooled(2), [read_labels(pd.concat(rows, ignore_index=True), name="sim")])
    monkeypatch.setenv("RELIMPUTE_MEMORY_LIMIT", "20M")
    fitted = []
    monkeypatch.setattr(FusionLLM, "_build_fusion", lambda self: fitted.append(1))
    with pytest.raises(InputError, match=r"FusionLLM model's label shifts over 200 topics needs \(6 dense 805 x 805"):
        FusionLLM().fit(labelled)
    assert not fitted
