"""task_recovery: BANG -> vnni golden cases, refusals with codes, and the corpus sweep.

Each golden case is lifted (detensorize, task_recovery), printed by the vnni back-end, compiled
natively and run on the same inputs as the BANG emulator run of the source: outputs must match
exactly (same float operations in the same order; the lifted file disables FP contraction as the
emulator does).
"""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from passes.base import PassRefused, run_pass
import passes.lift.detensorize  # noqa: F401
import passes.lift.task_recovery  # noqa: F401
import platforms
from xpiler.parse import parse_source
from xpiler.run import run_kernel

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "xpiler" / "corpus" / "bang"


def lift(src: str, tmp_path, name: str, **options):
    prog = parse_source(src, "bang", str(tmp_path / f"{name}.mlu"))
    out = run_pass("task_recovery", run_pass("detensorize", prog), **options)
    assert out.platform == "vnni"
    return prog, platforms.module("vnni", "backend").emit(out)


def check_lift(src: str, tmp_path, name: str, args: list, **options) -> str:
    prog, text = lift(src, tmp_path, name, **options)
    want = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    run_kernel(tmp_path / f"{name}.mlu", args=want, source=src, program=prog)
    got = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    path = tmp_path / f"{name}.cpp"
    path.write_text(text)
    run_kernel(path, args=got, source=text, program=parse_source(text, "vnni", str(path)))
    for w, g in zip(want, got):
        if isinstance(w, np.ndarray):
            np.testing.assert_array_equal(g, w)
    assert "__bang_" not in text and "__memcpy" not in text and "cnrt" not in text
    return text


VADD = """#include <bang.h>
#define PER 64
__nram__ float xa[PER];
__nram__ float ya[PER];
__mlu_global__ void vadd(float *x, float *y, float *out) {
  int base = taskId * PER;
  __memcpy(xa, x + base, PER * sizeof(float), GDRAM2NRAM);
  __memcpy(ya, y + base, PER * sizeof(float), GDRAM2NRAM);
  __bang_add(xa, xa, ya, PER);
  __bang_add_scalar(xa, xa, (float)(coreId + 10 * clusterId + 100 * taskDim + 1000 * coreDim), PER);
  __memcpy(out + base, xa, PER * sizeof(float), NRAM2GDRAM);
}
"""


def test_vector_add_over_16_tasks(tmp_path):
    r = np.random.default_rng(0)
    x, y = r.standard_normal(16 * 64).astype(np.float32), r.standard_normal(16 * 64).astype(np.float32)
    text = check_lift(VADD, tmp_path, "vadd", [x, y, np.zeros(16 * 64, np.float32)])
    assert 'extern "C" void vadd(float *x, float *y, float *out)' in text
    assert "vadd__launch(16, 1, 1, 16, x, y, out);" in text      # default launch: 4 clusters x 4 cores
    assert "#pragma omp parallel for" in text and "#pragma omp simd" in text
    assert "typedef _Float16 half;" in text


def test_sequential_option_and_native_compile(tmp_path):
    _, text = lift(VADD, tmp_path, "vadd_seq", omp=False)
    assert "omp parallel" not in text
    gxx = shutil.which("g++")
    if gxx is None:
        pytest.skip("g++ not installed")
    _, text = lift(VADD, tmp_path, "vadd_omp")
    src = tmp_path / "vadd_omp.cpp"
    src.write_text(text)
    res = subprocess.run([gxx, "-std=c++17", "-O2", "-march=native", "-fopenmp", "-Wall", "-Werror=return-type",
                          "-c", str(src), "-o", str(tmp_path / "vadd.o")], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr


SRAM_SUM = """#include <bang.h>
#define PER 64
__nram__ float buf[PER];
__mlu_shared__ float part[4];
__mlu_global__ void sram_sum(float *x, float *out) {
  int base = taskId * PER;
  __memcpy(buf, x + base, PER * sizeof(float), GDRAM2NRAM);
  float acc = 0.0f;
  for (int i = 0; i < PER; ++i) acc += buf[i];
  buf[0] = acc;
  __memcpy(part + coreId, buf, sizeof(float), NRAM2SRAM);
  __sync_all();
  if (coreId != 0) return;
  __memcpy(buf, part, 4 * sizeof(float), SRAM2NRAM);
  out[clusterId] = buf[0] + buf[1] + buf[2] + buf[3];
  out[4 + clusterId] = (float)base;
}
"""


def test_sram_reduction_with_sync_all_is_split_into_phases(tmp_path):
    r = np.random.default_rng(1)
    text = check_lift(SRAM_SUM, tmp_path, "sram_sum", [r.standard_normal(16 * 64).astype(np.float32),
                                                       np.zeros(8, np.float32)])
    assert "sram_sum__phase0" in text and "sram_sum__phase1" in text
    assert "xp_live_sram_sum_base[xp_core_slot]" in text          # live across the barrier
    assert "xp_sram_part[xp_cluster_slot]" in text                # SRAM per cluster
    assert "xp_live_sram_sum_acc" not in text                     # phase-local stays local
    assert text.count("#pragma omp parallel for") == 2


HOST = """#include <bang.h>
#include <cnrt.h>
__nram__ float t[32];
__mlu_global__ void scale(float *x, float *y, int n) {
  int i0 = taskId * 32;
  if (i0 >= n) return;
  __memcpy(t, x + i0, 32 * sizeof(float), GDRAM2NRAM);
  __bang_mul_scalar(t, t, 2.0f, 32);
  __bang_add_scalar(t, t, (float)(coreId + 10 * clusterId + 100 * coreDim + 1000 * clusterDim), 32);
  __memcpy(y + i0, t, 32 * sizeof(float), NRAM2GDRAM);
}
extern "C" void scale_host(float *x, float *y, float *z, int n) {
  cnrtQueue_t q;
  CNRT_CHECK(cnrtQueueCreate(&q));
  float *dx, *dy, *dz;
  cnrtMalloc((void **)&dx, n * sizeof(float));
  cnrtMalloc((void **)&dy, n * sizeof(float));
  cnrtMalloc((void **)&dz, n * sizeof(float));
  cnrtMemcpy(dx, x, n * sizeof(float), CNRT_MEM_TRANS_DIR_HOST2DEV);
  cnrtMemcpy(dy, y, n * sizeof(float), CNRT_MEM_TRANS_DIR_HOST2DEV);
  cnrtMemcpy(dz, z, n * sizeof(float), CNRT_MEM_TRANS_DIR_HOST2DEV);
  cnrtDim3_t dim = {8, 1, 1};
  scale<<<dim, CNRT_FUNC_TYPE_UNION1, q>>>(dx, dy, n);
  dim.x = 5;
  cnrtFunctionType_t kt = CNRT_FUNC_TYPE_BLOCK;
  scale<<<dim, kt, q>>>(dx, dz, n);
  cnrtQueueSync(q);
  cnrtMemcpy(y, dy, n * sizeof(float), CNRT_MEM_TRANS_DIR_DEV2HOST);
  cnrtMemcpy(z, dz, n * sizeof(float), CNRT_MEM_TRANS_DIR_DEV2HOST);
  cnrtFree(dx);
  cnrtFree(dy);
  cnrtFree(dz);
  cnrtQueueDestroy(q);
}
"""


def test_cnrt_host_wrapper_union1_groups_and_block(tmp_path):
    r = np.random.default_rng(2)
    n = 256
    text = check_lift(HOST, tmp_path, "host", [r.standard_normal(n).astype(np.float32), np.zeros(n, np.float32),
                                              np.zeros(n, np.float32), n])
    assert "dx = (float *) malloc(n * sizeof(float));" in text
    assert "scale__launch(dim.x, dim.y, dim.z, 4, dx, dy, n);" in text
    assert "int kt = 1;" in text and "xp_dim3_t dim = {8, 1, 1};" in text
    assert "free(dx);" in text and "memcpy(y, dy, n * sizeof(float));" in text


MPU = """#include <bang.h>
__nram__ float w[64];
__nram__ float v[64];
__mlu_shared__ float ws[64];
__mlu_global__ void stage(float *x, float *wg, float *out) {
  if (__is_mpu()) {
    __memcpy(ws, wg, 64 * sizeof(float), GDRAM2SRAM);
  }
  __sync_cluster();
  if (__is_mpu()) return;
  __memcpy(w, ws, 64 * sizeof(float), SRAM2NRAM);
  __memcpy(v, x + taskId * 64, 64 * sizeof(float), GDRAM2NRAM);
  __bang_mul(v, v, w, 64);
  __memcpy(out + taskId * 64, v, 64 * sizeof(float), NRAM2GDRAM);
}
"""


def test_mpu_participant_stages_sram(tmp_path):
    r = np.random.default_rng(3)
    text = check_lift(MPU, tmp_path, "mpu", [r.standard_normal(16 * 64).astype(np.float32),
                                            r.standard_normal(64).astype(np.float32), np.zeros(16 * 64, np.float32)])
    assert "coreId == 0x80" in text and "xp_nmpu = xp_block ? 0" in text


IPU_SYNC = """#include <bang.h>
#define PER 64
__nram__ float buf[PER];
__mlu_shared__ float part[4 * PER];
__mlu_global__ void ipu(float *x, float *out) {
  %s
  __memcpy(part + coreId * PER, x + taskId * PER, PER * sizeof(float), GDRAM2SRAM);
  %s
  __memcpy(buf, part + ((coreId + 1) %% 4) * PER, PER * sizeof(float), SRAM2NRAM);
  __bang_add_scalar(buf, buf, (float) taskId, PER);
  __memcpy(out + taskId * PER, buf, PER * sizeof(float), NRAM2GDRAM);
}
"""


@pytest.mark.parametrize("exit_", ["", "if (__is_mpu()) return;"])
@pytest.mark.parametrize("sync", ["__sync_all_ipu();", "__sync_all_ipu_within_cluster();"])
def test_compute_core_barriers_without_a_memory_core_participant(tmp_path, exit_, sync):
    # no MPU participant (none tested, or the leading exit idiom): the compute-core barriers
    # are the full ones (issue 17; XP-TASK-003 before)
    x = np.arange(16 * 64, dtype=np.float32)
    text = check_lift(IPU_SYNC % (exit_, sync), tmp_path, "ipu", [x, np.zeros(16 * 64, np.float32)])
    assert "int xp_nmpu = 0;" in text and "__is_mpu" not in text and "__sync_all_ipu" not in text


def test_compute_core_barrier_with_a_memory_core_participant_is_refused():
    src = IPU_SYNC % ("if (__is_mpu()) { out[0] = 0.0f; }", "__sync_all_ipu();")
    assert _code(src) == "XP-TASK-003"


# ------------------------------------------------------------------------------ refusals
def _code(src: str, detensorize: bool = True) -> str:
    prog = parse_source(src, "bang", "r.mlu")
    if detensorize:
        prog = run_pass("detensorize", prog)
    with pytest.raises(PassRefused) as exc:
        run_pass("task_recovery", prog)
    return exc.value.diagnostics[0].code


def test_refuses_barrier_under_task_dependent_condition():
    assert _code("__mlu_global__ void k(float *x) { int t = taskId; if (t < 8) __sync_all(); x[0] = 1; }") \
        == "XP-TASK-001"


def test_refuses_barrier_inside_uniform_loop():
    assert _code("__mlu_global__ void k(float *x, int n) { for (int i = 0; i < n; ++i) { x[i] = 1; __sync_all(); } }") \
        == "XP-TASK-002"


def test_refuses_split_barriers():
    assert _code("__mlu_global__ void k(float *x) { __sync_all_arrive(1, 2); x[0] = 1; }") == "XP-TASK-003"


def test_refuses_bfloat16():
    assert _code("__mlu_global__ void k(bfloat16_t *x) { x[0] = x[1]; }") == "XP-TASK-005"


def test_refuses_programs_not_detensorized():
    assert _code("__nram__ float a[32];\n__mlu_global__ void k(float *x) { __bang_add(a, a, a, 32); }",
                 detensorize=False) == "XP-TASK-006"


def test_refuses_shadowed_builtin():
    assert _code("__mlu_global__ void k(float *x) { int coreId = 3; x[coreId] = 1; }") == "XP-TASK-007"


def test_input_program_is_not_mutated(tmp_path):
    prog = run_pass("detensorize", parse_source(VADD, "bang", "v.mlu"))
    before = platforms.module("bang", "backend").emit(prog)
    run_pass("task_recovery", prog)
    assert platforms.module("bang", "backend").emit(prog) == before


# ------------------------------------------------------------------------------ corpus sweep
ALL = sorted(p.stem for p in CORPUS.glob("*.mlu") if p.with_suffix(".json").exists())
SMALL = ["add_18_128", "gemm_64_256_128", "layernorm_512_64", "relu_7_300"]


def _translate(name: str, tmp_path):
    from xpiler.translate import translate

    rep = translate(str(CORPUS / f"{name}.mlu"), "vnni", str(tmp_path / f"{name}.cpp"))
    steps = {s.name: (s.status, s.message) for s in rep.steps}
    assert rep.status == "verified", steps
    assert [s.status for s in rep.steps][:2] == ["verified", "verified"], steps
    assert rep.pipeline == "detensorize,task_recovery,host_heap"


@pytest.mark.parametrize("name", SMALL)
def test_corpus_subset_bang_to_vnni(name, tmp_path):
    _translate(name, tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("name", [n for n in ALL if n not in SMALL])
def test_corpus_sweep_bang_to_vnni(name, tmp_path):
    _translate(name, tmp_path)


MISC = """#include <bang.h>
__mlu_device__ float gscale[1];
__nram__ float lut[4] = {1.0f, 2.0f, 3.0f, 4.0f};
__mlu_func__ float pick(int i) { return lut[(i + coreId) % 4]; }
__mlu_global__ void misc(float *x, float *out) {
  __nram__ float tmp[32];
  __memcpy(tmp, x + taskId * 32, 32 * sizeof(float), GDRAM2NRAM);
  for (int i = 0; i < 32; ++i) tmp[i] = tmp[i] * pick(i) + (float)clusterId;
  __memcpy(out + taskId * 32, tmp, 32 * sizeof(float), NRAM2GDRAM);
}
"""


def test_device_function_initialised_and_local_nram(tmp_path):
    x = np.random.default_rng(4).standard_normal(512).astype(np.float32)
    text = check_lift(MISC, tmp_path, "misc", [x, np.zeros(512, np.float32)])
    assert "static const float xp_init_lut[4]" in text              # copied into every slot per launch
    assert "xp_nram_misc_tmp[xp_core_slot]" in text                 # function-local NRAM hoisted per slot
    assert "pick(i, taskIdX" in text                                # device function receives the context


HELPER_SHADOWS = """#include <bang.h>
__mlu_func__ void twice(float *nram_dst, float *nram_src, int n) {
  __bang_add(nram_dst, nram_src, nram_src, n);
}
__mlu_global__ void k(float *x, float *out) {
  __nram__ float nram_src[64];
  __nram__ float nram_dst[64];
  __memcpy(nram_src, x + taskId * 64, 64 * sizeof(float), GDRAM2NRAM);
  twice(nram_dst, nram_src, 64);
  __memcpy(out + taskId * 64, nram_dst, 64 * sizeof(float), NRAM2GDRAM);
}
"""


def test_helper_parameters_named_like_a_kernels_buffers_are_renamed(tmp_path):
    """mmcv's helpers take ``T *nram_dst``; the kernel declares ``__nram__ nram_dst[..]``: the
    parameters are renamed instead of refusing the program (XP-TASK-007 before)."""
    x = np.random.default_rng(4).standard_normal(64 * 16).astype(np.float32)
    text = check_lift(HELPER_SHADOWS, tmp_path, "shadow", [x, np.zeros(64 * 16, np.float32)])
    assert "nram_dst__h" in text
