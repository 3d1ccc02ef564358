"""Out-of-range option values stop in argparse (exit 2, the option named), not in a traceback."""

from __future__ import annotations

import pytest

from relimpute.cli import main


@pytest.mark.parametrize(
    "argv, message",
    [
        (["demo", "--seed", "-1"], "argument --seed: -1 is not an integer >= 0"),
        (["demo", "--n-systems", "0"], "argument --n-systems: 0 is not an integer >= 2"),
        (["demo", "--n-systems", "1"], "argument --n-systems: 1 is not an integer >= 2"),
        (["demo", "--n-topics", "-3"], "argument --n-topics: -3 is not a positive integer"),
        (["demo", "--run-length", "0"], "argument --run-length: 0 is not a positive integer"),
        (["demo", "--pool-depth", "x"], "argument --pool-depth: 'x' is not an integer"),
        (["compare", "q", "r", "--seed", "-1"], "argument --seed: -1 is not an integer >= 0"),
        (["fit", "q", "r", "-o", "o", "--seed", "-1"], "argument --seed: -1 is not an integer >= 0"),
        (["calibrate", "q", "r", "--depth", "-1"], "argument --depth: -1 is not an integer >= 0"),
        (["compare", "q", "r", "--depth", "0"], "argument --depth: 0 is not a positive integer"),
        (["compare", "q", "r", "--ratio", "x"], "argument --ratio: invalid choice: 'x'"),
        (["evaluate", "q", "r", "--gain", "log"], "argument --gain: invalid choice: 'log'"),
    ],
)
def test_bad_values_are_argument_errors(argv, message, capsys):
    # these used to reach numpy or the simulator and end in a ValueError traceback
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 2
    assert message in capsys.readouterr().err


def test_a_pair_of_one_run_is_refused(tmp_path, capsys):
    # A minus A used to end in "no topic has a positive standard error" (a traceback)
    (tmp_path / "qrels.txt").write_text("1 0 a 1\n1 0 b 0\n")
    (tmp_path / "r1").write_text("1 Q0 a 1 2.0 r1\n1 Q0 b 2 1.0 r1\n")
    (tmp_path / "r2").write_text("1 Q0 b 1 2.0 r2\n1 Q0 a 2 1.0 r2\n")
    argv = ["bootstrap", str(tmp_path / "qrels.txt"), str(tmp_path / "r1"), str(tmp_path / "r2")]
    assert main([*argv, "--pair", "r1", "r1"]) == 2
    err = capsys.readouterr().err
    assert "error: --pair: names run r1 twice" in err and "Traceback" not in err


def test_shared_option_helpers_keep_each_command_s_default():
    """``add_choice_argument`` defaults to the first choice unless told; ``add_depth_argument``
    with a default rank takes 0 (full depth), without one only positive ranks."""
    import argparse

    from relimpute.cli._vocabulary import add_choice_argument, add_depth_argument

    parser = argparse.ArgumentParser()
    add_choice_argument(parser, "--scale", ("logit", "ap"), "scale")
    add_choice_argument(parser, "--method", ("bca", "logit"), "method", default="logit")
    add_depth_argument(parser, default=100, why="the paper's setup")
    args = parser.parse_args([])
    assert (args.scale, args.method, args.depth) == ("logit", "logit", 100)
    assert parser.parse_args(["--depth", "0"]).depth == 0
    helps = {a.dest: a.help for a in parser._actions}
    assert helps["scale"] == "scale (default: %(default)s)"
    said = "truncate every run at rank K (default 100, the paper's setup; 0 = full depth)"
    assert helps["depth"] == said
    plain = argparse.ArgumentParser()
    add_depth_argument(plain)
    assert plain.parse_args([]).depth is None
