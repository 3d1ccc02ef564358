"""The README's Python example gives the same answer every time it is run.

Its block runs as written on DL 2019 (skipped without the data), twice, in fresh processes;
the same calls run on a simulated campaign without data. Without ``rng=`` on ``fit_predict``
the default model's posterior draws, and so P(A beats B) and the interval, changed per run.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DL19 = ROOT.parent / "shared" / "data" / "trec-dl-2019-passage"


def readme_python() -> str:
    """The README's Python block, its last expression printed at full precision."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    (block,) = re.findall(r"```python\n(.*?)```", text, re.DOTALL)
    lines = block.rstrip("\n").splitlines()
    last = lines[-1].split("#")[0].strip()
    return "\n".join([*lines[:-1], f"print({last}.to_csv(sep='\\t', index=False))"])


def _run(code: str, folder: Path) -> str:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    done = subprocess.run([sys.executable, "-c", code], cwd=folder, env=env, capture_output=True,
                          text=True, timeout=600, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.shared_data
def test_the_readme_block_is_reproducible(tmp_path):
    if not (DL19 / "qrels.txt").is_file():
        pytest.skip(f"DL 2019 data not found at {DL19} (../shared/data is not beside the repo)")
    for name in ("qrels.txt", "runs"):
        (tmp_path / name).symlink_to(DL19 / name)
    code = readme_python()
    first = _run(code, tmp_path)
    assert "p_bert" in first and "bm25base_p" in first
    assert _run(code, tmp_path) == first


def test_the_same_calls_are_reproducible_on_a_simulated_campaign():
    from relimpute.confidence import ConfidenceEngine, predict_for
    from relimpute.relevance import load_model
    from relimpute.simulate import simulate_campaign

    simulated = simulate_campaign(n_topics=6, n_systems=4, n_docs=200, depth=30, rng=1)
    campaign = simulated.campaign.pooled(5)

    def answer():
        model = load_model().fit(campaign, rng=2007)
        estimate = predict_for(model, campaign, ["AP"])
        systems = list(campaign.systems[:2])
        frame = ConfidenceEngine().confidence(campaign, estimate, systems=systems, rng=2007)
        return frame.to_frame(rounded=True)

    first = answer()
    assert first.equals(answer())


@pytest.mark.shared_data
def test_the_readme_block_prints_what_compare_prints(tmp_path):
    """The README's Python goes through the engine's one entry as ``relimpute compare`` does:
    the same numbers as the command with the same runs and its default seed."""
    import io

    import numpy as np
    import pandas as pd

    if not (DL19 / "qrels.txt").is_file():
        pytest.skip(f"DL 2019 data not found at {DL19} (../shared/data is not beside the repo)")
    for name in ("qrels.txt", "runs"):
        (tmp_path / name).symlink_to(DL19 / name)
    python = pd.read_csv(io.StringIO(_run(readme_python(), tmp_path)), sep="\t")
    command = ("from relimpute.cli import main; main(['compare', 'qrels.txt', 'runs', "
               "'--rel-threshold', '2', '--systems', 'p_bert', 'bm25base_p', '-f', 'tsv'])")
    cli = pd.read_csv(io.StringIO(_run(command, tmp_path)), sep="\t")
    columns = ["system_a", "system_b", "e_delta_map", "sd_delta_map", "p_a_better"]
    assert python[columns].equals(cli[columns])
    for bound in ("ci_low", "ci_high"):  # the README rounds them to their Monte Carlo error
        digits = python[bound].astype(str).str.split(".").str[1].str.len().to_numpy()
        np.testing.assert_array_less(np.abs(python[bound] - cli[bound]), 0.5 * 10.0**-digits + 1e-12)
