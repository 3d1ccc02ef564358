"""What every benchmark records beside its figures: the machine and the time of the run."""

from __future__ import annotations

import os
import platform
import time


def machine() -> dict:
    """Python version, platform, CPUs and the 1-minute load average at the start."""
    return {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "load_average_1min": round(os.getloadavg()[0], 2),
    }


def utc_now() -> str:
    """The current time, as the results files print it."""
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())
