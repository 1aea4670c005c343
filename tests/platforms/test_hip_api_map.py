"""The CUDA <-> HIP name map generated from both runtimes' headers (tools/gen_hip_api_map.py,
issue 17): the committed data (platforms/hip/api_map_generated.toml, api_headers.json,
docs/cuda-hip-api-coverage.md) is checked always; regenerating it from the headers only where
the HIP headers (Debian's libamdhip64-dev) and the CUDA toolkit are installed. A HIP source using
newly mapped names (hipStreamDefault, ...) translates to CUDA that verifies and builds with nvcc;
the larger map renames API identifiers only (not the program's own names, members or strings)."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import platforms
from passes.base import run_pass
from passes.map import api_map  # noqa: F401  (registers the pass)
from passes.map.api_map import _names
from xpiler.parse import parse_source

ROOT = Path(__file__).resolve().parents[2]
HIP = ROOT / "platforms" / "hip"
TOOL = ROOT / "tools" / "gen_hip_api_map.py"
HAND = tomllib.loads((HIP / "api_map.toml").read_text())
GEN = tomllib.loads((HIP / "api_map_generated.toml").read_text())
INVENTORY = json.loads((HIP / "api_headers.json").read_text())


def _inventory_names(side: str) -> dict[str, str]:
    return {n: kind for header in INVENTORY[side].values() for kind, ns in header.items() for n in ns}


# ------------------------------------------------------------------ committed data
def test_hand_written_entries_take_precedence():
    merged = platforms.api_map()
    for c, h in HAND["names"].items():
        assert merged["names"][c] == h
    for c, h in HAND.get("cuda_only", {}).items():
        assert merged["cuda_only"][c] == h
    assert not set(GEN["names"]) & set(HAND["names"]), "generated pairs repeat hand-written ones"


def test_names_stay_one_to_one_and_directions_agree():
    merged = platforms.api_map()
    targets = list(merged["names"].values())
    assert len(targets) == len(set(targets)), "a HIP name with two CUDA sources in [names]"
    assert not set(merged["cuda_only"]) & set(merged["names"])
    to_hip, _, _ = _names("hip")
    to_cuda, _, _ = _names("cuda")
    for c, h in merged["names"].items():
        assert to_hip[c] == h
        if h not in merged.get("hip_only", {}):
            assert to_cuda[h] == c
    for c, h in merged["cuda_only"].items():
        assert to_hip[c] == h and to_cuda.get(h) != c


def test_generated_pairs_name_header_names_of_the_same_kind():
    cuda, hip = _inventory_names("cuda"), _inventory_names("hip")
    for section in ("names", "cuda_only"):
        for c, h in GEN[section].items():
            assert c in cuda, c
            assert h in hip, f"{c} -> {h}: not in the HIP headers"
            assert cuda[c] == hip[h], f"{c} ({cuda[c]}) -> {h} ({hip[h]})"


def test_known_misses_are_mapped():
    to_cuda, _, _ = _names("cuda")
    to_hip, _, _ = _names("hip")
    assert to_cuda["hipStreamDefault"] == "cudaStreamDefault"
    assert to_cuda["hipEventDisableTiming"] == "cudaEventDisableTiming"
    assert to_cuda["hipDeviceScheduleBlockingSync"] == "cudaDeviceScheduleBlockingSync"
    assert to_hip["cudaGetDeviceCount"] == "hipGetDeviceCount"
    assert to_hip["cuLaunchKernel"] == "hipModuleLaunchKernel"          # hand-written driver name
    assert to_hip["CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK"] == "hipDeviceAttributeMaxThreadsPerBlock"
    assert to_hip["cudaHostAlloc"] == "hipHostMalloc" and to_cuda["hipHostMalloc"] == "cudaMallocHost"


def test_coverage_doc_is_current():
    proc = subprocess.run([sys.executable, str(TOOL), "--doc-only", "--check"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_coverage_doc_states_the_runtime_percentage():
    text = (ROOT / "docs" / "cuda-hip-api-coverage.md").read_text()
    assert "do not edit" in text.splitlines()[2]
    assert "**Runtime API names**" in text and "**HIP device builtins**" in text
    assert "`__bitextract_u32`" in text.split("## HIP device builtins")[1].split("not defined")[0]


def test_generated_data_is_current_with_the_headers():
    if not Path("/usr/include/hip/hip_runtime_api.h").is_file():
        pytest.skip("no HIP headers (apt-get install libamdhip64-dev)")
    sys.path.insert(0, str(ROOT / "tools"))
    import gen_hip_api_map as gen

    try:
        include = gen.rc.find_cuda_include()
    except SystemExit:
        pytest.skip("no CUDA toolkit (the CUDA names come from the headers next to nvcc)")
    made_with = (INVENTORY["cuda_version"], INVENTORY["hip_version"])
    here = (gen.rc.cuda_version(include), gen.hip_version(Path("/usr/include/hip")))
    if made_with != here:
        pytest.skip(f"the committed map was generated from CUDA {made_with[0]} / HIP {made_with[1]}, "
                    f"not CUDA {here[0]} / HIP {here[1]}")
    proc = subprocess.run([sys.executable, str(TOOL), "--check"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


# ------------------------------------------------------------------ renames stay on API names
OWN = r"""
#include <hip/hip_runtime.h>
#define CHECK(x) do { if ((x) != hipSuccess) printf("hipMalloc failed\n"); } while (0)
struct Opts { int hipStreamDefault; };
static int hipGetDeviceCount(int *n) { *n = 1; return 0; }
__global__ void k(float *y, Opts o) { y[threadIdx.x] = (float)o.hipStreamDefault; }
extern "C" void entry(float *y) {
  float *d; hipStream_t s; int n;
  hipStreamCreateWithFlags(&s, hipStreamDefault);
  hipGetDeviceCount(&n);
  CHECK(hipMalloc(&d, 32 * sizeof(float)));
  Opts o; o.hipStreamDefault = n;
  hipLaunchKernelGGL(k, dim3(1), dim3(32), 0, s, d, o);
  hipMemcpy(y, d, 32 * sizeof(float), hipMemcpyDeviceToHost);
  hipStreamDestroy(s); hipFree(d);
}
"""


def test_renames_only_api_identifiers():
    out = run_pass("api_map", parse_source(OWN, "hip", "own.hip"), to="cuda")
    text = platforms.module("cuda", "backend").emit(out)
    assert "cudaStreamCreateWithFlags(&s, cudaStreamDefault)" in text
    assert "o.hipStreamDefault" in text and "int hipStreamDefault;" in text      # a member
    assert "hipGetDeviceCount(&n)" in text and "cudaGetDeviceCount" not in text  # the program's own
    assert '"hipMalloc failed\\n"' in text and "!= cudaSuccess" in text           # a string literal


# ------------------------------------------------------------------ newly mapped names build
STREAMS = r"""
#include <hip/hip_runtime.h>
__global__ void scale(float *x, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= a;
}
extern "C" void run(float *h, int n) {
  int count = 0;
  if (hipGetDeviceCount(&count) != hipSuccess || count < 1) return;
  hipDeviceSetCacheConfig(hipFuncCachePreferShared);
  hipStream_t s;
  hipStreamCreateWithFlags(&s, hipStreamDefault);
  hipEvent_t e;
  hipEventCreateWithFlags(&e, hipEventDisableTiming);
  float *d;
  if (hipMalloc(&d, n * sizeof(float)) == hipErrorInvalidValue) return;
  hipMemcpyAsync(d, h, n * sizeof(float), hipMemcpyHostToDevice, s);
  hipLaunchKernelGGL(scale, dim3((n + 63) / 64), dim3(64), 0, s, d, 2.0f, n);
  hipEventRecord(e, s);
  hipEventSynchronize(e);
  hipMemcpy(h, d, n * sizeof(float), hipMemcpyDeviceToHost);
  hipEventDestroy(e);
  hipStreamDestroy(s);
  hipFree(d);
}
"""


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not installed")
def test_hip_stream_default_translates_to_cuda_that_nvcc_builds(tmp_path):
    from xpiler.translate import translate

    src = tmp_path / "streams.hip"
    src.write_text(STREAMS)
    out = tmp_path / "streams.cu"
    rep = translate(str(src), "cuda", str(out))
    assert rep.status == "verified", rep.message
    text = out.read_text()
    for name in ("cudaStreamDefault", "cudaEventCreateWithFlags", "cudaEventDisableTiming",
                 "cudaDeviceSetCacheConfig", "cudaFuncCachePreferShared", "cudaGetDeviceCount",
                 "cudaErrorInvalidValue"):
        assert name in text, name
    assert "hip" not in text.replace("streams.hip", "")
    proc = subprocess.run(["nvcc", "-c", "-std=c++17", "-o", str(tmp_path / "streams.o"), str(out)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, (proc.stderr or proc.stdout)[-2000:]
