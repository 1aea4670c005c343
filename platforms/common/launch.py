"""The launch a kernel entry runs with on the virtual device: the caller's launch (a case file's
``launch`` table, ``run_kernel(launch=...)``) over the device profile's default.

Pure data: the run driver copies a ``LaunchConfig`` into the runtime's ``xp_launch_t``; the lift
(``passes/lift/loop_recovery``) builds the same launch into a lifted kernel entry, so both sides
run one configuration. Fields the platform does not use stay 0, as in a zeroed ``xp_launch_t``.
"""
from __future__ import annotations

from dataclasses import dataclass

from xpiler.ir.errors import UsageError

# BANG function types -> cores per task group (cnrtFunctionType_t values)
BANG_KTYPES = {"block": 1, "union1": 4, "union2": 8, "union4": 16, "union8": 32, "union16": 64}


@dataclass(frozen=True)
class LaunchConfig:
    grid: tuple[int, int, int] = (0, 0, 0)      # cuda, hip
    block: tuple[int, int, int] = (0, 0, 0)
    shmem: int = 0
    dim: tuple[int, int, int] = (0, 0, 0)       # bang
    ktype: int = 0


def _dims(v, name: str) -> tuple[int, int, int]:
    if v is None:
        return (1, 1, 1)
    if isinstance(v, int):
        v = (v,)
    v = tuple(int(x) for x in v)
    if not 1 <= len(v) <= 3 or any(x < 1 for x in v):
        raise UsageError(f"launch {name} must be 1-3 positive integers, got {v}")
    return v + (1,) * (3 - len(v))


def launch_config(platform: str, launch: dict | None, profile: dict) -> LaunchConfig:
    """``launch`` (grid/block/shmem, or BANG clusters/cores/type/dim) completed by the profile's
    ``default_launch`` / ``default_grid`` / ``default_block``; a UsageError when malformed."""
    default = dict(profile.get("default_launch") or {})
    for key in ("grid", "block"):  # CUDA/HIP profiles: default_grid / default_block
        if f"default_{key}" in profile:
            default.setdefault(key, profile[f"default_{key}"])
    launch = {**default, **(launch or {})}
    if platform == "bang":
        clusters = int(launch.get("clusters", profile.get("clusters", 4)))
        cores = int(launch.get("cores", profile.get("cores_per_cluster", 4)))
        kind = str(launch.get("type") or ("block" if cores == 1 and clusters == 1 else f"union{clusters}")).lower()
        kind = kind.replace("cnrt_func_type_", "").replace("cnrtfunctype", "")
        if kind not in BANG_KTYPES:
            raise UsageError(f"unknown BANG function type '{launch.get('type')}' "
                             f"(choose from {', '.join(BANG_KTYPES)})")
        return LaunchConfig(dim=_dims(launch.get("dim") or (clusters * cores, 1, 1), "dim"),
                            ktype=BANG_KTYPES[kind])
    return LaunchConfig(grid=_dims(launch.get("grid"), "grid"), block=_dims(launch.get("block"), "block"),
                        shmem=int(launch.get("shmem", 0)))
