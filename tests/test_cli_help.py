"""`relimpute --help` and every subcommand's help are complete."""

import pytest

from relimpute.cli import _subcommand_modules, build_parser, main

COMMANDS = sorted(m.COMMAND for m in _subcommand_modules())


def test_the_documented_subcommands_exist():
    assert {"evaluate", "compare", "fit", "judge", "demo"} <= set(COMMANDS)


def test_top_level_help_lists_every_subcommand(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["--help"])
    assert exit_info.value.code == 0
    text = capsys.readouterr().out
    for command in COMMANDS:
        assert command in text


def test_no_subcommand_prints_help_and_fails(capsys):
    assert main([]) == 2
    assert "usage: relimpute" in capsys.readouterr().out


@pytest.mark.parametrize("command", COMMANDS)
def test_subcommand_help_documents_every_option(command, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main([command, "--help"])
    assert exit_info.value.code == 0
    text = capsys.readouterr().out
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command").choices[command]
    for action in sub._actions:
        assert action.help, f"{command}: {action.option_strings or action.dest} has no help text"
        for flag in action.option_strings:
            assert flag in text
