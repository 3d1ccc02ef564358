"""Inference for the Bayesian hierarchy: NUTS (nutpie or PyMC) and mean-field ADVI.

Each engine compiles once per model shape (topics, systems, priors) and swaps
the judged documents in as shared data; convergence is checked with
rank-normalised R-hat, bulk/tail ESS (Vehtari et al. 2021, Bayesian Analysis
16(2)) and divergent transitions after NUTS, with the ELBO's plateau after ADVI.
"""

from __future__ import annotations

import math
import threading
import time
from dataclasses import asdict, dataclass

import numpy as np
import pandas as pd

from .design import _import_arviz, _import_pymc, build_model, design_data


@dataclass(frozen=True, slots=True)
class FitDiagnostics:
    """How well inference went (Vehtari et al. 2021 for R-hat and ESS).

    ``rhat_max``, ``ess_bulk_min``, ``ess_tail_min`` and ``divergences`` are
    NaN/-1 for ADVI, which reports the final mean ``elbo`` instead (and its
    plateau check among the ``problems``). ``seconds`` is the whole inference
    (compilation included); ``compile_seconds`` the part spent compiling the
    model for nutpie (NaN with PyMC's sampler, which compiles inside
    ``pm.sample``, and with ADVI).
    """

    method: str
    n_judged: int
    n_posterior_draws: int
    rhat_max: float
    ess_bulk_min: float
    ess_tail_min: float
    divergences: int
    elbo: float
    iterations: int
    seconds: float
    problems: tuple[str, ...]
    compile_seconds: float = math.nan

    @property
    def converged(self) -> bool:
        return not self.problems

    def to_frame(self) -> pd.DataFrame:
        row = asdict(self)
        row["problems"] = "; ".join(self.problems)
        row["converged"] = self.converged
        return pd.DataFrame([row])

    def __str__(self) -> str:
        head = f"{self.method}: {self.n_judged} judged, {self.n_posterior_draws} draws, {self.seconds:.1f} s"
        if not math.isnan(self.compile_seconds):
            head += f" ({self.compile_seconds:.1f} s compiling)"
        if self.method == "nuts":
            body = (
                f"R-hat max {self.rhat_max:.3f}, ESS bulk min {self.ess_bulk_min:.0f}, "
                f"ESS tail min {self.ess_tail_min:.0f}, {self.divergences} divergences"
            )
        else:
            body = f"ELBO {self.elbo:.1f} after {self.iterations} iterations"
        status = "converged" if self.converged else "NOT converged: " + "; ".join(self.problems)
        return f"{head}; {body}; {status}"


class _NutsProgram:
    """nutpie's compiled model for one model shape, refitted on swapped judgments.

    nutpie compiles the log density and its gradient with numba (tens of
    seconds); the judged documents are shared data, so one compilation
    serves every fit of the same topics, systems and priors (``with_data``
    swaps them in) and a fit gives the same draws whether or not the program
    was compiled for it.
    """

    _cache: dict[tuple, _NutsProgram] = {}
    _cache_size = 4

    def __init__(self, model):
        import nutpie

        start = time.perf_counter()
        self.compiled = nutpie.compile_pymc_model(model, freeze_model=False)
        self.compile_seconds = time.perf_counter() - start

    @classmethod
    def for_model(cls, design, topics, systems, settings):
        """The program for this shape (compiled now if new) and the seconds spent compiling."""
        key = (len(topics), len(systems), tuple(sorted(settings.items())))
        program, seconds = cls._cache.pop(key, None), 0.0
        if program is None:
            program = cls(build_model(design, topics, systems, settings))
            seconds = program.compile_seconds
        cls._cache[key] = program  # most recently used last
        while len(cls._cache) > cls._cache_size:
            cls._cache.pop(next(iter(cls._cache)))
        return program, seconds

    def sample(self, design, topics, systems, *, draws, tune, chains, target_accept, seed, bar):
        """NUTS draws as InferenceData (this campaign's coordinates); ``bar`` counts iterations."""
        import nutpie

        compiled = self.compiled.with_data(**design_data(design))
        sampler = nutpie.sample(
            compiled,
            draws=draws,
            tune=tune,
            chains=chains,
            cores=min(chains, 2),
            seed=seed,
            save_warmup=True,  # counted by the progress bar, dropped below
            progress_bar=False,
            target_accept=target_accept,
            low_rank_modified_mass_matrix=True,
            blocking=False,
        )
        while not _finished(sampler):
            time.sleep(0.5)
            if bar is not None:
                bar.update(_iterations_done(sampler) - bar.n)
        idata = sampler.wait()
        for group in [g for g in idata.groups() if g.startswith("warmup")]:
            del idata[group]
        if bar is not None:
            bar.update(bar.total - bar.n)
        return _named(idata, topics, systems)


def _named(idata, topics, systems):
    """``idata`` with this campaign's topics and runs as coordinates (the program may have
    been compiled for another campaign of the same shape)."""
    coords = {"topic": list(topics)}
    if "system" in idata.posterior.dims:
        coords["system"] = list(systems)
    idata.posterior = idata.posterior.assign_coords(coords)
    return idata


def _finished(sampler) -> bool:
    """Whether a background nutpie sampler is done (nutpie 0.16 raises TimeoutError while not)."""
    try:
        return bool(sampler.is_finished)
    except TimeoutError:
        return False


def _iterations_done(sampler) -> int:
    """Iterations (tuning and draws, all chains) a running nutpie sampler has finished.

    Counted on nutpie's raw trace (Arrow record batches: draws and sampler
    statistics, one batch per chain), not on ``sampler.inspect()``, which
    converts the whole trace to InferenceData at every poll (most of the main
    thread's time while sampling, growing with the trace).
    """
    try:
        _, stats = sampler._sampler.inspect().get_arrow_trace()
        return sum(int(batch.num_rows) for batch in stats)
    except Exception:  # noqa: BLE001 (nothing stored yet: the count is only for display)
        return 0


def _sample_nuts_pymc(model, *, draws, tune, chains, target_accept, seed):
    """PyMC's own NUTS (compiles inside ``pm.sample``) as InferenceData."""
    from pymc.model.transform.optimization import freeze_dims_and_data

    pm = _import_pymc()
    with freeze_dims_and_data(model):
        return pm.sample(
            draws=draws,
            tune=tune,
            chains=chains,
            cores=min(chains, 2),
            target_accept=target_accept,
            random_seed=seed,
            progressbar=False,
            compute_convergence_checks=False,
        )


def _nuts_diagnostics(
    idata, *, n_judged, seconds, rhat_max, min_ess_per_chain, compile_seconds=math.nan
):
    az = _import_arviz()
    names = [v for v in idata.posterior.data_vars]
    rhat = float(max(float(az.rhat(idata, var_names=names)[v].max()) for v in names))
    ess_bulk = az.ess(idata, var_names=names, method="bulk")
    ess_tail = az.ess(idata, var_names=names, method="tail")
    bulk = float(min(float(ess_bulk[v].min()) for v in names))
    tail = float(min(float(ess_tail[v].min()) for v in names))
    divergences = int(idata.sample_stats["diverging"].sum())
    chains = idata.posterior.sizes["chain"]
    ess_min = min_ess_per_chain * chains
    problems = []
    if not rhat <= rhat_max:
        problems.append(f"R-hat {rhat:.3f} > {rhat_max}")
    if not min(bulk, tail) >= ess_min:
        problems.append(f"ESS {min(bulk, tail):.0f} < {ess_min}")
    if divergences:
        problems.append(f"{divergences} divergent transitions")
    return FitDiagnostics(
        method="nuts",
        n_judged=n_judged,
        n_posterior_draws=chains * idata.posterior.sizes["draw"],
        rhat_max=rhat,
        ess_bulk_min=bulk,
        ess_tail_min=tail,
        divergences=divergences,
        elbo=math.nan,
        iterations=int(idata.posterior.sizes["draw"]),
        seconds=seconds,
        problems=tuple(problems),
        compile_seconds=compile_seconds,
    )


class _AdviProgram:
    """Mean-field ADVI (Adam) on :func:`build_model`, compiled once and refitted on new data.

    Compiling the gradient step costs ~2 s and the 5,000 steps ~0.4 s on a
    reusability trial, so the compiled step is kept per model shape (topics,
    systems, priors) and every fit swaps in the judged documents (``pm.Data``),
    restores the variational parameters and Adam's state to their initial
    values and reseeds the step's random stream: a fit gives the same draws
    whether or not the program was compiled for it.
    """

    _cache: dict[tuple, _AdviProgram] = {}
    _cache_size = 4

    def __init__(self, model, learning_rate: float):
        pm = _import_pymc()
        from pytensor.tensor.random.type import RandomType

        self.model = model
        self.lock = threading.Lock()  # one fit at a time: the program's state is shared
        with model:
            self.inference = pm.ADVI()
            self.step = self.inference.objective.step_function(
                obj_optimizer=pm.adam(learning_rate=learning_rate), score=True
            )
        data = {id(v) for v in model.data_vars}
        shared = [v for v in self.step.get_shared() if id(v) not in data]
        self.rngs = [v for v in shared if isinstance(v.type, RandomType)]
        self.initial = [
            (v, v.get_value(borrow=False)) for v in shared if not isinstance(v.type, RandomType)
        ]

    @classmethod
    def for_model(cls, design, topics, systems, settings, learning_rate):
        key = (len(topics), len(systems), tuple(sorted(settings.items())), learning_rate)
        program = cls._cache.pop(key, None)
        if program is None:
            program = cls(build_model(design, topics, systems, settings), learning_rate)
        cls._cache[key] = program  # most recently used last
        while len(cls._cache) > cls._cache_size:
            cls._cache.pop(next(iter(cls._cache)))
        return program

    def fit(self, design, topics, systems, *, steps, draws, seed, bar=None):
        """Draws as InferenceData (coordinates of this campaign) and the loss (−ELBO) history."""
        from pymc.pytensorf import reseed_rngs

        with self.lock:
            for name, value in design_data(design).items():
                self.model.set_data(name, value)
            for variable, value in self.initial:
                variable.set_value(value.copy())
            reseed_rngs(self.rngs, seed)
            loss = np.empty(steps)
            for i in range(steps):
                loss[i] = self.step()
                if not np.isfinite(loss[i]):
                    raise FloatingPointError(f"ADVI's loss became {loss[i]} at step {i}")
                if bar is not None and (i + 1) % 100 == 0:
                    bar.update(100)
            idata = self.inference.approx.sample(draws, random_seed=seed + 1)
        return _named(idata, topics, systems), loss


def elbo_plateau(loss: np.ndarray) -> tuple[float, float]:
    """Mean ELBO over the last tenth of the iterations and its relative change from the tenth before.

    A small relative change says the optimisation has reached its plateau.
    """
    window = max(1, len(loss) // 10)
    last, before = loss[-window:], loss[-2 * window : -window]
    if not len(before):
        return float(-last.mean()), math.inf
    return float(-last.mean()), float(abs(last.mean() - before.mean()) / abs(last.mean()))
