"""numba kernels on an install whose ``__pycache__`` (and the user's cache) cannot be written."""

from __future__ import annotations

import errno
import os
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import numba
import pytest
from numba.core import caching, config

from relimpute import _jit

# Run first in a fresh interpreter: makes the numba cache directories unwritable except under
# $TMPDIR, the way a read-only install used by an account without a writable home sees them.
READ_ONLY_PRELUDE = """
import errno, os
from numba.core import caching
real = caching._CacheLocator.ensure_cache_path
def ensure_cache_path(self):
    if not self.get_cache_path().startswith(os.environ["TMPDIR"]):
        raise PermissionError(errno.EACCES, "Permission denied", self.get_cache_path())
    return real(self)
caching._CacheLocator.ensure_cache_path = ensure_cache_path
"""


def _add_one(x):
    return x + 1


@pytest.fixture
def read_only(monkeypatch, tmp_path):
    """No writable cache directory anywhere but a fresh temporary directory."""
    real = caching._CacheLocator.ensure_cache_path

    def ensure_cache_path(self):
        if not self.get_cache_path().startswith(str(tmp_path)):
            raise PermissionError(errno.EACCES, "Permission denied", self.get_cache_path())
        return real(self)

    monkeypatch.setattr(caching._CacheLocator, "ensure_cache_path", ensure_cache_path)
    monkeypatch.setattr(config, "CACHE_DIR", "")
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    return tmp_path


def test_plain_numba_cache_fails_there(read_only):
    with pytest.raises(RuntimeError, match="no locator available"):
        numba.njit(cache=True)(_add_one)


def test_falls_back_to_a_private_cache_dir(read_only):
    kernel = _jit.njit_cached()(_add_one)
    assert kernel(41) == 42
    cache = read_only / f"relimpute-numba-{os.getuid()}"
    assert stat.S_IMODE(cache.stat().st_mode) == 0o700
    assert list(cache.rglob("*_add_one*.nbi")), "the kernel was cached in the private directory"
    assert config.CACHE_DIR == ""  # numba's global setting is left as it was


def test_no_cache_when_the_fallback_dir_is_not_private(read_only):
    cache = read_only / f"relimpute-numba-{os.getuid()}"
    cache.mkdir(mode=0o777)
    cache.chmod(0o777)  # others could plant cache files, which numba loads as code
    assert _jit.private_cache_dir() is None
    kernel = _jit.njit_cached(fastmath=True)(_add_one)
    assert kernel(1.5) == 2.5
    assert not list(cache.rglob("*.nbi"))


def _read_only_cli(tmp_path, *argv):
    """Run the CLI on two small runs in a fresh interpreter that sees a read-only install;
    return ``(completed process, the fallback cache folder)``."""
    (tmp_path / "qrels").write_text("1 0 a 1\n1 0 b 0\n2 0 a 0\n2 0 c 1\n")
    for name, docs in {"A": "a b c d", "B": "d c b a"}.items():
        (tmp_path / name).write_text(
            "".join(f"{q} Q0 {d} {i + 1} {9 - i} {name}\n" for q in "12"
                    for i, d in enumerate(docs.split()))  # fmt: skip
        )
    fallback = tmp_path / "tmp"
    fallback.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env.update(TMPDIR=str(fallback), PYTHONPATH=os.pathsep.join(sys.path))
    files = [str(tmp_path / n) for n in ("qrels", "A", "B")]
    code = READ_ONLY_PRELUDE + (
        f"import sys\nfrom relimpute.cli import main\nsys.exit(main({[*argv, *files]!r}))"
    )
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                          timeout=600)  # fmt: skip
    return done, fallback


def test_compare_runs_on_a_read_only_install(tmp_path):
    done, fallback = _read_only_cli(tmp_path, "compare", "--prior", "0.5", "--normal")
    assert done.returncode == 0, done.stderr
    assert "no locator" not in done.stderr and "p_a_better" in done.stdout
    assert list(Path(fallback).rglob("*.nbi"))


def test_every_cached_kernel_goes_through_njit_cached():
    # precision/_kernels.py used njit(cache=True): bootstrap, power and plan crashed on a
    # read-only install ("no locator available") while compare ran
    package = Path(_jit.__file__).parent
    plain = [str(p.relative_to(package)) for p in package.rglob("*.py")
             if p.name != "_jit.py" and "cache=True" in p.read_text()]  # fmt: skip
    assert plain == []


def test_bootstrap_runs_on_a_read_only_install(tmp_path):
    done, fallback = _read_only_cli(tmp_path, "bootstrap", "-B", "20")
    assert done.returncode == 0, done.stderr
    assert "L-MAP" in done.stdout and list(Path(fallback).rglob("*bootstrap_ap*.nbi"))
