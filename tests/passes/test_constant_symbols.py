"""passes/cleanup/constant_symbols.py: __constant__ arrays filled by copy-to-symbol become kernel
parameters (golden, verified on the virtual device, refusals; cuda and hip -> bang)."""
from __future__ import annotations

import numpy as np
import pytest

import platforms
from passes.base import PassRefused, run_pass
from xpiler import translate as tr
from xpiler.argspec import parse_arg_specs
from xpiler.parse import parse_source
from xpiler.run import run_kernel

tr.load_passes()          # registers the passes the plans name

KERNEL = """#include <cuda_runtime.h>
#define R 2
#define TAPS (2 * R + 1)
__constant__ float c_w[TAPS];
__device__ float tap(int k) { return c_w[k]; }
__global__ void conv(float* __restrict__ y, const float* __restrict__ x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float s = 0;
  for (int k = 0; k < TAPS; k++) s += x[i + k] * tap(k);
  y[i] = s;
}
"""

ENTRY = """
extern "C" void conv1d(const float* x, const float* w, float* y, int n) {{
  float *d_x, *d_y;
  cudaMalloc((void**)&d_x, (n + TAPS - 1) * sizeof(float));
  cudaMalloc((void**)&d_y, n * sizeof(float));
  cudaMemcpy(d_x, x, (n + TAPS - 1) * sizeof(float), cudaMemcpyHostToDevice);
  {before}
  {copy}
  conv<<<(n + 63) / 64, 64>>>(d_y, d_x, n);
  cudaMemcpy(y, d_y, n * sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(d_x);
  cudaFree(d_y);
}}
"""
WHOLE = "cudaMemcpyToSymbol(c_w, w, TAPS * sizeof(float));"


def _src(copy=WHOLE, before="", kernel=KERNEL):
    return kernel + ENTRY.format(copy=copy, before=before)


def _lift(src, platform="cuda"):
    prog = parse_source(src, platform, "k.cu" if platform == "cuda" else "k.hip")
    return prog, run_pass("devcopy", run_pass("loop_recovery", prog))


@pytest.mark.slow          # two builds for the virtual device (4-8 s)
def test_symbol_becomes_a_leading_parameter_and_verifies(tmp_path):
    src = _src()
    prog, lifted = _lift(src)
    out = run_pass("constant_symbols", lifted, extents=True)
    text = platforms.module("vnni", "backend").emit(out)
    assert "float c_w[" not in text                          # no global state left
    assert "xp_memcpy" not in text[text.rfind('extern "C"'):]
    assert "tap(const float *c_w, int k)" in text             # device helper gets it too
    assert "tap(c_w, k)" in text
    assert "conv(const float *c_w," in text
    assert "conv(w, " in text                                # the entry passes the source
    assert "#pragma xpiler extent(w, 20)" in text
    n = 100
    rng = np.random.default_rng(1)
    args = [rng.standard_normal(n + 4).astype(np.float32), rng.standard_normal(5).astype(np.float32),
            np.zeros(n, np.float32), n]
    sp, tp = tmp_path / "k.cu", tmp_path / "k.cpp"
    sp.write_text(src)
    tp.write_text(text)
    want = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    run_kernel(sp, args=want, program=prog)
    got = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    run_kernel(tp, args=got, source=text, strict=True)
    np.testing.assert_array_equal(got[2], want[2])
    assert np.any(want[2] != 0)


def test_hip_symbol_form_is_the_same_copy():
    src = _src(copy="hipMemcpyToSymbol(HIP_SYMBOL(c_w), w, sizeof(c_w));") \
        .replace("cuda_runtime.h", "hip/hip_runtime.h").replace("cudaM", "hipM") \
        .replace("cudaFree", "hipFree")
    _, lifted = _lift(src, "hip")
    text = platforms.module("vnni", "backend").emit(run_pass("constant_symbols", lifted))
    assert "conv(w, " in text and "float c_w[" not in text


def _codes(src):
    _, lifted = _lift(src)
    with pytest.raises(PassRefused) as exc:
        run_pass("constant_symbols", lifted)
    return [d.code for d in exc.value.diagnostics]


_VARIANTS = {
    # partial, repeated and read-back copies: the symbol becomes a static array of the entry
    "offset": ("", "cudaMemcpyToSymbol(c_w, w, 4 * sizeof(float), sizeof(float));"),
    "short": ("", "cudaMemcpyToSymbol(c_w, w, 4 * sizeof(float));"),
    "twice": (WHOLE, WHOLE),
    "readback": ("", WHOLE + " float tmp[TAPS]; cudaMemcpyFromSymbol(tmp, c_w, sizeof(tmp));"),
    "local_reused": ("", "float h[TAPS]; for (int k = 0; k < TAPS; k++) h[k] = w[k]; "
                         "cudaMemcpyToSymbol(c_w, h, TAPS * sizeof(float)); h[0] = 0;"),
    "expression": ("", "cudaMemcpyToSymbol(c_w, w + 1, 4 * sizeof(float));"),
    # refused
    "offset_runtime": ("", "cudaMemcpyToSymbol(c_w, w, 4 * sizeof(float), (n % 2) * sizeof(float));"),
    "offset_unaligned": ("", "cudaMemcpyToSymbol(c_w, w, 4 * sizeof(float), 2);"),
    "launch_first": ("conv<<<(n + 63) / 64, 64>>>(d_y, d_x, n);", WHOLE),
    "never_filled": ("", "float tmp[TAPS]; cudaMemcpyFromSymbol(tmp, c_w, sizeof(tmp));"),
}


@pytest.mark.parametrize("variant", ["offset", "short", "twice", "readback", "local_reused",
                                     "expression"])
def test_partial_or_repeated_copies_make_a_static_array_of_the_entry(variant):
    before, copy = _VARIANTS[variant]
    _, lifted = _lift(_src(copy=copy, before=before))
    text = platforms.module("vnni", "backend").emit(run_pass("constant_symbols", lifted))
    entry = text[text.rfind('extern "C"'):]
    assert "static float c_w[TAPS];" in entry and "conv(c_w, " in entry
    assert "\nfloat c_w[" not in text                 # no file-scope symbol left
    if variant in ("offset", "short", "twice", "expression"):
        assert "xp_memcpy" not in entry          # copies from typed sources are element loops
    if variant == "offset":
        assert "c_w[1 + " in entry


@pytest.mark.parametrize("variant, code", [
    ("offset_runtime", "XP-CONSTSYM-003"),   # offset not a constant
    ("offset_unaligned", "XP-CONSTSYM-003"),  # offset inside an element
    ("device_write", "XP-CONSTSYM-003"),     # the kernel writes the symbol
    ("device_sizeof", "XP-CONSTSYM-003"),    # sizeof(S) would change meaning
    ("never_filled", "XP-CONSTSYM-003"),     # only copied back
    ("launch_first", "XP-CONSTSYM-004"),     # read before it is filled
    ("scalar_expression", "XP-CONSTSYM-005"),  # a scalar symbol from no variable
])
def test_refusals(variant, code):
    kernel = KERNEL
    before, copy = _VARIANTS.get(variant, ("", WHOLE))
    if variant == "device_write":
        # (a __device__ array would be the realistic case; the lift keeps __device__ on file-scope
        # variables, which the canonical C front-end rejects, so the write is tested on the
        # __constant__ array itself)
        kernel = KERNEL.replace("y[i] = s;", "y[i] = s; c_w[0] = s;")
    elif variant == "device_sizeof":
        kernel = KERNEL.replace("k < TAPS;", "k < (int) (sizeof(c_w) / sizeof(c_w[0]));")
    elif variant == "scalar_expression":
        kernel = KERNEL.replace("__constant__ float c_w[TAPS];",
                                "__constant__ float c_w[TAPS];\n__constant__ float c_s;") \
            .replace("y[i] = s;", "y[i] = s * c_s;")
        copy = WHOLE + " cudaMemcpyToSymbol(c_s, w + 1, sizeof(float));"
    codes = _codes(_src(copy=copy, before=before, kernel=kernel))
    assert code in codes, codes


def test_nothing_to_do_without_a_copy_to_symbol():
    from passes.base import apply_pass

    _, lifted = _lift(_src(copy="", kernel=KERNEL.replace("tap(k)", "1.0f")))
    out = apply_pass("constant_symbols", lifted)       # not applicable: the input, unchanged
    assert not out.changed and out.program is lifted and out.reason.code == "XP-CONSTSYM-002"


PARTS = KERNEL + """
extern "C" void conv_parts(const float* x, const float* w, float* y, float* w_back, int n) {
  float *d_x, *d_y;
  cudaMalloc((void**)&d_x, (n + TAPS - 1) * sizeof(float));
  cudaMalloc((void**)&d_y, n * sizeof(float));
  cudaMemcpy(d_x, x, (n + TAPS - 1) * sizeof(float), cudaMemcpyHostToDevice);
  cudaMemcpyToSymbol(c_w, w, 2 * sizeof(float));
  cudaMemcpyToSymbol(c_w, w + 2, (TAPS - 2) * sizeof(float), 2 * sizeof(float));
  conv<<<(n + 63) / 64, 64>>>(d_y, d_x, n);
  cudaMemcpyFromSymbol(w_back, c_w, sizeof(c_w));
  cudaMemcpy(y, d_y, n * sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(d_x);
  cudaFree(d_y);
}
"""


@pytest.mark.slow          # two builds for the virtual device (4-8 s)
def test_partial_copies_and_copy_back_verify(tmp_path):
    prog, lifted = _lift(PARTS)
    text = platforms.module("vnni", "backend").emit(run_pass("constant_symbols", lifted))
    n = 150
    rng = np.random.default_rng(3)
    args = [rng.standard_normal(n + 4).astype(np.float32), rng.standard_normal(5).astype(np.float32),
            np.zeros(n, np.float32), np.zeros(5, np.float32), n]
    sp, tp = tmp_path / "k.cu", tmp_path / "k.cpp"
    sp.write_text(PARTS)
    tp.write_text(text)
    want = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    run_kernel(sp, args=want, program=prog)
    got = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    run_kernel(tp, args=got, source=text, strict=True)
    np.testing.assert_array_equal(got[2], want[2])
    np.testing.assert_array_equal(got[3], want[3])
    np.testing.assert_array_equal(want[3], args[1])     # the copy back reads the whole filter


CONV = """// 1-D valid correlation, filter in __constant__ memory
#include <cuda_runtime.h>
#define KLEN 5
__constant__ float c_k[KLEN];
__global__ void conv1d_k(float* y, const float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float s = 0.0f;
    for (int k = 0; k < KLEN; ++k) s += x[i + k] * c_k[k];
    y[i] = s;
  }
}
extern "C" void conv1d(const float* x, const float* w, float* y, int n) {
  float *d_x, *d_y;
  cudaMalloc((void**)&d_x, (n + KLEN - 1) * sizeof(float));
  cudaMalloc((void**)&d_y, n * sizeof(float));
  cudaMemcpy(d_x, x, (n + KLEN - 1) * sizeof(float), cudaMemcpyHostToDevice);
  cudaMemcpyToSymbol(c_k, w, KLEN * sizeof(float));
  conv1d_k<<<(n + 127) / 128, 128>>>(d_y, d_x, n);
  cudaMemcpy(y, d_y, n * sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(d_x);
  cudaFree(d_y);
}
"""


HIP_CONV = CONV.replace("cuda_runtime.h", "hip/hip_runtime.h").replace("cudaM", "hipM") \
    .replace("cudaFree", "hipFree").replace("hipMemcpyToSymbol(c_k,", "hipMemcpyToSymbol(HIP_SYMBOL(c_k),") \
    .replace("conv1d_k<<<(n + 127) / 128, 128>>>(d_y, d_x, n);",
             "hipLaunchKernelGGL(conv1d_k, dim3((n + 127) / 128), dim3(128), 0, 0, d_y, d_x, n);")


TABLE = CONV.replace("__constant__ float c_k[KLEN];",
                     "__constant__ float c_k[KLEN] = {0.1f, 0.2f, 0.4f, 0.2f, 0.1f};") \
    .replace("  cudaMemcpyToSymbol(c_k, w, KLEN * sizeof(float));\n", "")


@pytest.mark.slow
@pytest.mark.parametrize("case", ["conv1d", "values", "parts", "hip", "table"])
def test_constant_symbols_to_bang_are_verified(case, tmp_path):
    # conv1d: a 1-D convolution whose filter is a __constant__ array filled from a parameter;
    # values: a filter computed on the host in a local array, plus scalar and struct symbols;
    # parts: the filter filled by two partial copies and copied back (a static array);
    # hip: conv1d in HIP, hipMemcpyToSymbol(HIP_SYMBOL(c_k), ...);
    # table: an initialised __constant__ table, never copied to (localize after inline)
    src = tmp_path / (f"{case}.hip" if case == "hip" else f"{case}.cu")
    out = tmp_path / f"{case}.mlu"
    src.write_text({"conv1d": CONV, "values": VALUES, "parts": PARTS, "hip": HIP_CONV,
                    "table": TABLE}[case])
    specs = {"conv1d": ["x=random:260", "w=random:5", "y=zeros:256", "n=256"],
             "hip": ["x=random:260", "w=random:5", "y=zeros:256", "n=256"],
             "table": ["x=random:260", "w=random:5", "y=zeros:256", "n=256"],
             "values": ["x=random:260", "y=zeros:256", "scale=1.5", "n=256"],
             "parts": ["x=random:260", "w=random:5", "y=zeros:256", "w_back=zeros:5",
                       "n=256"]}[case]
    rep = tr.translate(str(src), "bang", str(out), arg_specs=parse_arg_specs(specs))
    assert rep.status == "verified", (rep.message, [(s.name, s.status, s.message[:200])
                                                    for s in rep.steps])
    steps = {s.name: s.status for s in rep.steps}
    assert steps["constant_symbols"] == ("unchanged" if case == "table" else "verified")
    assert steps["task_bind"] == "verified"
    if case == "table":
        assert steps["localize"] == "verified"
    text = out.read_text()
    assert "__mlu_global__" in text and "taskDim" in text
    if case not in ("parts", "table"):     # no symbol left: parameters on the device
        assert "c_k[" not in text and "c_w[" not in text


VALUES = """#include <cuda_runtime.h>
#define TAPS 5
struct Affine { float a; float b; };
__constant__ float c_w[TAPS];
__constant__ float c_scale;
__constant__ int c_off;
__constant__ Affine c_aff;
__global__ void smooth_k(float* y, const float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float s = 0.0f;
    for (int t = 0; t < TAPS; ++t) s += x[i + t] * c_w[t];
    y[i] = c_aff.a * (c_scale * s + c_off) + c_aff.b;
  }
}
extern "C" void smooth(const float* x, float* y, float scale, int n) {
  float h[TAPS];
  for (int t = 0; t < TAPS; ++t) h[t] = (1.0f + t * (TAPS - 1 - t)) * 0.0625f;
  const int off = 3;
  Affine aff;
  aff.a = 0.5f;
  aff.b = -1.0f;
  float *d_x, *d_y;
  cudaMalloc((void**)&d_x, (n + TAPS - 1) * sizeof(float));
  cudaMalloc((void**)&d_y, n * sizeof(float));
  cudaMemcpy(d_x, x, (n + TAPS - 1) * sizeof(float), cudaMemcpyHostToDevice);
  cudaMemcpyToSymbol(c_w, h, sizeof(h));
  cudaMemcpyToSymbol(c_scale, &scale, sizeof(float));
  cudaMemcpyToSymbol(c_off, &off, sizeof(c_off));
  cudaMemcpyToSymbol(c_aff, &aff, sizeof(Affine));
  smooth_k<<<(n + 127) / 128, 128>>>(d_y, d_x, n);
  cudaMemcpy(y, d_y, n * sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(d_x);
  cudaFree(d_y);
}
"""


@pytest.mark.slow          # two builds for the virtual device (4-8 s)
def test_local_array_scalar_and_struct_symbols_verify(tmp_path):
    prog, lifted = _lift(VALUES)
    out = run_pass("constant_symbols", lifted)
    text = platforms.module("vnni", "backend").emit(out)
    for gone in ("float c_w[", "float c_scale;", "int c_off;", "Affine c_aff;"):
        assert gone not in text, text
    assert "const float c_scale" in text and "const Affine c_aff" in text
    assert "smooth_k(aff, off, scale, h, y, x, n," in text      # values by value, h decays
    n = 200
    rng = np.random.default_rng(2)
    args = [rng.standard_normal(n + 4).astype(np.float32), np.zeros(n, np.float32), 1.5, n]
    sp, tp = tmp_path / "k.cu", tmp_path / "k.cpp"
    sp.write_text(VALUES)
    tp.write_text(text)
    want = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    run_kernel(sp, args=want, program=prog)
    got = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    run_kernel(tp, args=got, source=text, strict=True)
    np.testing.assert_array_equal(got[1], want[1])
    assert np.any(want[1] != 0)


def test_two_dimensional_symbol_is_a_pointer_to_rows():
    src = """#include <cuda_runtime.h>
__constant__ float c_m[3][4];
__global__ void k(float* y, const float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) { float s = 0; for (int r = 0; r < 3; ++r) for (int c = 0; c < 4; ++c)
    s += c_m[r][c] * x[i * 12 + r * 4 + c]; y[i] = s; }
}
extern "C" void mv(const float* x, const float* w, float* y, int n) {
  float *d_x, *d_y;
  cudaMalloc((void**)&d_x, n * 12 * sizeof(float));
  cudaMalloc((void**)&d_y, n * sizeof(float));
  cudaMemcpy(d_x, x, n * 12 * sizeof(float), cudaMemcpyHostToDevice);
  cudaMemcpyToSymbol(c_m, w, sizeof(c_m));
  k<<<(n + 63) / 64, 64>>>(d_y, d_x, n);
  cudaMemcpy(y, d_y, n * sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(d_x); cudaFree(d_y);
}
"""
    _, lifted = _lift(src)
    text = platforms.module("vnni", "backend").emit(run_pass("constant_symbols", lifted))
    assert "k(const float (*c_m)[4], " in text and "c_m[r][c]" in text
    assert "k((const float (*)[4]) w, " in text
