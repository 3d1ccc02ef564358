"""The one groups-table reader (run, group, optional pooled): poolbias, calibrate and power."""

from __future__ import annotations

import pytest

from relimpute.cli import main
from relimpute.errors import InputError
from relimpute.groups import read_groups


def test_groups_table_errors_name_the_line(tmp_path):
    path = tmp_path / "groups.tsv"
    path.write_text("run\tgroup\tpooled\nA1\tA\tyes\nA2\tA\tmaybe\n")
    with pytest.raises(InputError, match=r"groups.tsv, line 3: pooled must be yes or no"):
        read_groups(path)
    path.write_text("run\tgroup\nA1\tA\nA1\tB\n")
    with pytest.raises(InputError, match="line 3: run 'A1' listed twice"):
        read_groups(path)
    path.write_text("name\tgroup\nA1\tA\n")
    with pytest.raises(InputError, match="needs columns run and group"):
        read_groups(path)
    path.write_text("run\tgroup\nA1\tA\n")
    assert read_groups(path).pooled == (True,)  # no pooled column: every run pooled


def test_names_are_kept_as_written(tmp_path):
    """A run or group named NA (or empty-looking) stays a string: pandas would make it NaN."""
    path = tmp_path / "groups.tsv"
    path.write_text("run\tgroup\nNA\tnull\nNaN\tNA\n")
    groups = read_groups(path)
    assert groups.runs == ("NA", "NaN") and groups.groups == ("null", "NA")
    assert groups.run_to_group() == {"NA": "null", "NaN": "NA"}


def test_dl19_groups(dl19_dir):
    groups = read_groups(dl19_dir / "groups.tsv")
    assert len(groups.runs) == 37 and len(set(groups.run_to_group().values())) == 12


@pytest.mark.parametrize(
    "command",
    [
        ["calibrate", "--groups"],
        ["poolbias", "--groups"],
        ["power", "--groups"],
    ],
)
def test_every_command_reports_the_readers_error(tmp_path, capsys, command):
    """The same bad table gives the same message, naming the file and line, in every command."""
    table = tmp_path / "groups.tsv"
    table.write_text("run\tgroup\tpooled\nA\tg\tyes\nA\th\tno\n")
    (tmp_path / "qrels.txt").write_text("1 0 d1 1\n")
    (tmp_path / "run.txt").write_text("1 Q0 d1 1 1.0 r\n")
    name, flag = command
    argv = [name, str(tmp_path / "qrels.txt"), str(tmp_path / "run.txt"), flag, str(table)]
    if name != "power":
        argv += ["-o", str(tmp_path / "out")] + (["--pool-depth", "1"] if name == "poolbias" else [])
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "groups.tsv, line 3: run 'A' listed twice" in err and "Traceback" not in err


def test_a_table_of_pooled_flags_needs_no_group_column_where_only_the_flags_are_read(tmp_path):
    path = tmp_path / "pooled.tsv"
    path.write_text("run\tpooled\na\tyes\nb\tno\nc\tyes\n")
    assert read_groups(path, need_group=False).pooled_runs() == ("a", "c")
    with pytest.raises(InputError, match="needs columns run and group"):
        read_groups(path)
