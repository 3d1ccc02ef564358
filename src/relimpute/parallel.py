"""Where a study's units run: moved to :mod:`relimpute.studies.parallel` (0.3.0); these names stay here."""

from .studies.parallel import LOCAL, LOCAL_CLUSTER_CONFIG, RETRIES, cluster, map_units

__all__ = ["LOCAL", "LOCAL_CLUSTER_CONFIG", "RETRIES", "cluster", "map_units"]
