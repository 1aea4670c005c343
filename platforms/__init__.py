"""Platform plug-ins: one subpackage per platform, looked up by name.

Each subpackage provides: ``frontend`` (source -> Program), ``backend`` (Program -> source),
``emulate`` (source -> C++ for the virtual device; used by the run driver only),
``intrinsics/`` (data files: one home per special instruction) and ``profile.toml``.

This module is the one interface through which passes and drivers reach platform knowledge
(issue 15, layers: passes import this module and ``xpiler.ir``, never an emulator or a driver):

``canonical(name)`` / ``detect(path, text)`` / ``module(platform, part)``
    Platform ids, detection from a file, the platform's ``frontend`` / ``backend`` module.
``parse(text, platform=None, path="<input>", entry=None) -> Program``
    The platform's front-end (detected from ``path``/``text`` when ``platform`` is None).
``profile(platform, name=None) -> dict``
    A device profile from ``platforms/<p>/profile.toml`` (the one profile loader).
``launch_config(platform, launch, profile) -> LaunchConfig``
    The launch a kernel entry runs with on the virtual device (case launch over profile default).
``intrinsics(platform)`` / ``intrinsic_table(platform, name)``
    The intrinsic catalogue (``platforms/<p>/intrinsics``'s ``load()``) / one raw TOML table.
``api_map() -> dict``
    The CUDA <-> HIP name map (``platforms/hip/api_map.toml``, hand-written, over
    ``platforms/hip/api_map_generated.toml``, generated from the headers), read once.
``host_runtime() -> dict``
    The CUDA / HIP runtime API as host code (``platforms/common/host_runtime.toml``), read once.
``runtime_provided(platform) -> frozenset[str]``
    Functions the virtual device's runtime headers define (with a body).
"""
from __future__ import annotations

import copy
import functools
import importlib
import re
import tomllib
from pathlib import Path

PLATFORMS = ("cuda", "hip", "bang", "vnni")
ALIASES = {"mlu": "bang", "cpp": "vnni", "c": "vnni", "cpu": "vnni", "x86": "vnni"}
EXTENSIONS = {".cu": "cuda", ".cuh": "cuda", ".hip": "hip", ".mlu": "bang", ".cpp": "vnni",
              ".cc": "vnni", ".c": "vnni", ".cxx": "vnni"}
FILE_SUFFIX = {"cuda": ".cu", "hip": ".hip", "bang": ".mlu", "vnni": ".cpp"}


def canonical(name: str) -> str:
    """Return the platform id for ``name`` (``mlu`` -> ``bang``), or raise UsageError."""
    from xpiler.ir.errors import UsageError

    key = name.strip().lower()
    key = ALIASES.get(key, key)
    if key not in PLATFORMS:
        raise UsageError(f"unknown platform '{name}' (choose from {', '.join(PLATFORMS)}; "
                         f"aliases {', '.join(f'{a}={b}' for a, b in ALIASES.items())})")
    return key


_COMMENTS = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
_HIP_MARKERS = ("hip/hip_runtime", "hipLaunchKernelGGL", "hipMalloc", "__builtin_amdgcn_")
_BANG_MARKERS = ("__mlu_global__", "__mlu_entry__", "__bang_", "cnrtMalloc", "cnrtQueue", "__nram__")


def detect(path: str | Path, text: str | None = None) -> str:
    """Guess the platform of a source file: .hip and .mlu decide; a .cu file is CUDA unless its
    code (comments ignored) uses the HIP runtime; for generic C/C++ suffixes the code decides
    between HIP, BANG and vnni."""
    p = Path(path)
    suffix = EXTENSIONS.get(p.suffix.lower())
    if suffix in ("hip", "bang"):
        return suffix
    if text is None:
        try:
            text = p.read_text(errors="replace")
        except OSError:
            text = ""
    code = _COMMENTS.sub(" ", text)
    if any(m in code for m in _HIP_MARKERS):
        return "hip"  # also hipified code that kept its .cu suffix
    if suffix == "cuda":
        return suffix
    if any(m in code for m in _BANG_MARKERS):
        return "bang"
    if suffix:
        return suffix
    if "__global__" in code:
        return "cuda"
    return "vnni"


def module(platform: str, part: str):
    """Import ``platforms.<platform>.<part>`` (e.g. ``frontend``, ``emulate``)."""
    return importlib.import_module(f"platforms.{canonical(platform)}.{part}")


def data_dir(platform: str) -> Path:
    return Path(__file__).parent / canonical(platform)


def parse(text: str, platform: str | None = None, path: str = "<input>", entry: str | None = None):
    """Parse source text into a Program with the front-end of ``platform`` (detected from
    ``path`` and ``text`` when None)."""
    plat = canonical(platform) if platform else detect(path, text)
    return module(plat, "frontend").parse(text, path=path, entry=entry)


# ------------------------------------------------------------------------------ device profiles
@functools.lru_cache(maxsize=None)
def _profile_document(platform: str) -> dict:
    with open(data_dir(platform) / "profile.toml", "rb") as f:
        return tomllib.load(f)


def profile(platform: str, name: str | None = None) -> dict:
    """A device profile of ``platforms/<platform>/profile.toml`` as a fresh plain dict.

    A file with a ``default`` key holds named profiles in a ``[profile.<name>]`` (cuda, hip) or
    ``[profiles.<name>]`` (bang) table: the result is the file's top-level values updated with
    the named entry (``name`` None: the default one) and ``"name"``; a profile with ``clusters``
    and ``cores_per_cluster`` gets ``default_launch`` = those when it names none. An unknown name
    is a UsageError. A file without ``default`` (vnni: the host CPU) is the one profile itself,
    whatever ``name`` is."""
    plat = canonical(platform)
    doc = _profile_document(plat)
    if "default" not in doc:
        return copy.deepcopy(doc)
    table = doc.get("profile") or doc.get("profiles") or {}
    key = name or doc["default"]
    if key not in table:
        from xpiler.ir.errors import UsageError

        raise UsageError(f"unknown {plat} device profile '{key}' (choose from {', '.join(sorted(table))})")
    out = {k: v for k, v in doc.items() if k not in ("profile", "profiles", "default")}
    out.update(table[key])
    out["name"] = key
    if "clusters" in out and "cores_per_cluster" in out:
        out.setdefault("default_launch", {"clusters": out["clusters"], "cores": out["cores_per_cluster"]})
    return copy.deepcopy(out)


def launch_config(platform: str, launch: dict | None, profile: dict):
    """The launch a kernel entry runs with (``platforms/common/launch.py``)."""
    from platforms.common.launch import launch_config as resolve

    return resolve(canonical(platform), launch, profile)


# ------------------------------------------------------------------------------ knowledge bases
def intrinsics(platform: str):
    """The platform's intrinsic catalogue: ``platforms.<p>.intrinsics.load()`` (bang: the list of
    expanded forms; vnni: a ``Catalog``). cuda and hip keep plain tables: ``intrinsic_table``."""
    return module(platform, "intrinsics").load()


def intrinsic_table(platform: str, name: str) -> dict:
    """One intrinsics data file as read: ``platforms/<p>/intrinsics/<name>.toml``."""
    return tomllib.loads((data_dir(platform) / "intrinsics" / f"{name}.toml").read_text())


@functools.lru_cache(maxsize=1)
def api_map() -> dict:
    """The CUDA <-> HIP name map (read once; do not mutate): ``platforms/hip/api_map.toml``, the
    hand-written tables, with the pairs ``tools/gen_hip_api_map.py`` derived from both runtimes'
    headers (``api_map_generated.toml``) under ``[names]`` and ``[cuda_only]``; a hand-written
    entry takes precedence over a generated one. ``[names]`` is one-to-one (hip -> cuda is its
    inverse), ``[cuda_only]`` is cuda -> hip only, ``[hip_only]`` hip -> cuda only."""
    table = tomllib.loads((data_dir("hip") / "api_map.toml").read_text())
    generated = data_dir("hip") / "api_map_generated.toml"
    gen = tomllib.loads(generated.read_text()) if generated.is_file() else {}
    hand = table.get("names", {})
    taken = set(hand.values())
    table["names"] = {**{c: h for c, h in gen.get("names", {}).items() if h not in taken}, **hand}
    table["cuda_only"] = {**{c: h for c, h in gen.get("cuda_only", {}).items() if c not in hand},
                          **table.get("cuda_only", {})}
    return table


@functools.lru_cache(maxsize=1)
def host_runtime() -> dict:
    """What CUDA / HIP runtime calls, types and constants mean in host code (a lift's view),
    ``platforms/common/host_runtime.toml`` (read once; do not mutate)."""
    return tomllib.loads((Path(__file__).resolve().parent / "common" / "host_runtime.toml").read_text())


_FUNCTION_CALL = re.compile(r"\b[A-Za-z_]\w*\s*\(")
_FUNCTION_DEFINITION = re.compile(r"([A-Za-z_]\w*)\s*\([^;{]*\)\s*(?:noexcept\s*)?\{")


@functools.lru_cache(maxsize=None)
def runtime_provided(platform: str) -> frozenset[str]:
    """Names of the functions the platform's virtual-device runtime defines (a name followed by
    a parameter list and a body in a ``*.h`` file directly in one of the emulator's include
    directories)."""
    dirs = [Path(d) for d in module(platform, "emulate").INCLUDE_DIRS]
    text = "".join(h.read_text(errors="replace") for d in dirs if d.is_dir() for h in sorted(d.glob("*.h")))
    out = set()
    for m in _FUNCTION_CALL.finditer(text):
        d = _FUNCTION_DEFINITION.match(text, m.start())
        if d:
            out.add(d.group(1))
    return frozenset(out)


_HOST_DEFINABLE = re.compile(r"^// xp:host-definable begin.*?$(.*?)^// xp:host-definable end", re.M | re.S)
_INLINE_DEFINITION = re.compile(r"^inline\s[^;{]*?\b([A-Za-z_]\w*)\s*\([^;{]*\)\s*\{", re.M)


@functools.lru_cache(maxsize=None)
def device_functions(platform: str) -> dict[str, str]:
    """The device functions of the platform's virtual-device runtime that a lift may define on
    the host as they are: {name: definition text}, the ``inline`` definitions between
    ``// xp:host-definable begin`` and ``end`` markers in the runtime's headers (functions of
    their arguments only). Overloaded names are left out (one definition per name)."""
    dirs = [Path(d) for d in module(platform, "emulate").INCLUDE_DIRS]
    out: dict[str, str] = {}
    seen: set[str] = set()
    for h in (h for d in dirs if d.is_dir() for h in sorted(d.glob("*.h"))):
        for section in _HOST_DEFINABLE.findall(h.read_text(errors="replace")):
            for m in _INLINE_DEFINITION.finditer(section):
                depth, k = 0, m.end() - 1
                while k < len(section):
                    depth += {"{": 1, "}": -1}.get(section[k], 0)
                    k += 1
                    if depth == 0:
                        break
                name = m.group(1)
                if name in seen:
                    out.pop(name, None)
                else:
                    out[name] = section[m.start():k]
                seen.add(name)
    return out

