"""The hierarchy's held-out settings: ``held_out/<C>/bayes.json`` beside fusion's.

Run from the repository root after ``examples/calibration/held_out.py``::

    python examples/bayes_calibration/held_out.py

The hierarchy's hyperpriors are centred on the default model's settings
(``fusion``; None: ``models/fusion.json``, chosen with all three development
collections). A study scoring collection ``C`` must centre them on settings
chosen without ``C``: for each ``C`` this writes
``examples/calibration/held_out/<C>/bayes.json``, the shipped ``models/bayes.json``
with ``fusion`` set to the parameters of ``held_out/<C>/fusion.json`` (every
data-chosen setting of the default model chosen leave-one-collection-out), so
``relimpute calibrate --settings-dir examples/calibration/held_out/<C>`` scores
``bayes-mc`` and ``fusion-mc`` with the same held-out settings.
"""

from __future__ import annotations

import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HELD_OUT = ROOT / "examples" / "calibration" / "held_out"
SHIPPED = ROOT / "models" / "bayes.json"


def held_out_bayes(fusion_file: Path, shipped: dict) -> dict:
    """``shipped`` (a bayes settings file) centred on the default's settings in ``fusion_file``."""
    fusion = json.loads(fusion_file.read_text(encoding="utf-8"))
    if fusion.get("model") != "fusion":
        raise ValueError(f"{fusion_file}: not a fusion settings file")
    centre = {k: v for k, v in fusion["params"].items() if k != "n_draws"}  # bayes sets its own
    name = fusion_file.parent.name
    return {
        "model": "bayes",
        "params": {**shipped["params"], "fusion": centre},
        "provenance": {
            "data": f"the hyperpriors' centres chosen without {name}: "
            + fusion["provenance"]["data"],
            "command": "python examples/bayes_calibration/held_out.py",
            "how_chosen": f"models/bayes.json with fusion set to held_out/{name}/fusion.json's "
            "parameters (its n_draws aside): the hierarchy's spreads are centred, and its "
            "likelihood's other settings fixed, at values chosen leave-one-collection-out for "
            + name,
        },
    }


def main() -> int:
    shipped = json.loads(SHIPPED.read_text(encoding="utf-8"))
    for fusion_file in sorted(HELD_OUT.glob("*/fusion.json")):
        body = held_out_bayes(fusion_file, shipped)
        out = fusion_file.with_name("bayes.json")
        out.write_text(json.dumps(body, indent=2) + "\n", encoding="utf-8")
        print(out.relative_to(ROOT), body["params"]["fusion"]["run_effect_sd"])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
