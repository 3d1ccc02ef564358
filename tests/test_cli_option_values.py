"""Out-of-range option values stop in argparse (exit 2, the option named), not in a traceback."""

from __future__ import annotations

import pytest

from relimpute.cli import main


@pytest.mark.parametrize(
    "argv, message",
    [
        (["demo", "--seed", "-1"], "argument --seed: -1 is not an integer >= 0"),
        (["demo", "--n-systems", "0"], "argument --n-systems: 0 is not a positive integer"),
        (["demo", "--n-topics", "-3"], "argument --n-topics: -3 is not a positive integer"),
        (["demo", "--run-length", "0"], "argument --run-length: 0 is not a positive integer"),
        (["demo", "--pool-depth", "x"], "argument --pool-depth: 'x' is not an integer"),
        (["compare", "q", "r", "--seed", "-1"], "argument --seed: -1 is not an integer >= 0"),
        (["fit", "q", "r", "-o", "o", "--seed", "-1"], "argument --seed: -1 is not an integer >= 0"),
    ],
)
def test_bad_values_are_argument_errors(argv, message, capsys):
    # these used to reach numpy or the simulator and end in a ValueError traceback
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 2
    assert message in capsys.readouterr().err
