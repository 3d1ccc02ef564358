"""compare's printed bounds are stable to their printed digits across seeds (issue 26, item 7).

On DL 2019 the default model's 95% bounds of p_bert vs bm25base_p rest on the few posterior
draws in the tail: at four decimals the lower bound read 0.032-0.040 over seeds 1-5. Each
bound is now printed to the decimals its Monte Carlo standard error allows.
"""

from __future__ import annotations

import pytest

from relimpute.cli import main


def _bounds(dl19_dir, seed, capsys) -> tuple[str, str]:
    argv = ["compare", str(dl19_dir / "qrels.txt"), str(dl19_dir / "runs"), "--rel-threshold", "2",
            "--systems", "p_bert", "bm25base_p", "--seed", str(seed)]  # fmt: skip
    assert main(argv) == 0
    out, err = capsys.readouterr()
    assert "rounded at the decimal of their Monte Carlo standard error" in err
    estimand, header, row = out.splitlines()
    assert estimand.startswith("estimand: complete")
    cells = dict(zip(header.split(), row.split()))
    return cells["ci_low"], cells["ci_high"]


def _decimals(text: str) -> int:
    return len(text.partition(".")[2])


@pytest.mark.shared_data
def test_two_seeds_print_the_same_bounds_to_the_printed_digits(dl19_dir, capsys):
    first, second = _bounds(dl19_dir, 1, capsys), _bounds(dl19_dir, 2, capsys)
    for a, b in zip(first, second):
        digits = min(_decimals(a), _decimals(b))
        assert 1 <= digits <= 4
        # equal at the coarser of the two printings, up to the rounding of its last digit
        assert abs(float(a) - float(b)) <= 10.0**-digits + 1e-12, (first, second)
    assert 0.0 <= float(first[0]) < float(first[1])  # p_bert is better: the interval says so


@pytest.mark.parametrize(
    "value, se, decimals",
    [
        (0.0321, 0.008, 2),  # the decimal of its standard error
        (0.0042, 0.004, 3),  # would read 0.00 beside P = 0.998: one more decimal
        (-0.0042, 0.004, 3),
        (0.00004, 0.004, 4),  # never beyond four
        (0.0, 0.004, 2),  # a bound that is 0 stays 0
        (0.51, 0.2, 1),
        (0.51, 0.0, 4),  # no Monte Carlo error: four decimals
    ],
)
def test_a_bound_never_reads_zero_when_it_is_not(value, se, decimals):
    from relimpute.confidence.bounds import bound_decimals

    assert bound_decimals(value, se) == decimals
    if value != 0 and decimals < 4:
        assert round(value, decimals) != 0
