"""BANG virtual device: tasks, barriers, memory spaces, __memcpy, CNRT host code, strict rules.

Each BANG source below is compiled once (cached by content hash) through
platforms.bang.emulate.prepare() and run in a forked child (tests/platforms/_bang_harness.py).
"""
from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent))
import _bang_harness as H  # noqa: E402

from platforms.bang import emulate  # noqa: E402

P372 = emulate.load_profile("mtp_372")
P290 = emulate.load_profile("mtp_290")
UNION4, UNION2, UNION1, BLOCK = 16, 8, 4, 1

VADD = r"""
#include <bang.h>
#define N 4096
#define PER (N / 16)
__mlu_global__ void vadd(float *out, const float *a, const float *b) {
  __nram__ float x[PER];
  float __nram__ y[PER];   // qualifier after the type
  __memcpy(x, a + taskId * PER, PER * sizeof(float), GDRAM2NRAM);
  __memcpy(y, b + taskId * PER, sizeof(y), GDRAM2NRAM);
  __bang_add(x, x, y, PER);
  __memcpy(out + taskId * PER, x, PER * sizeof(float), NRAM2GDRAM);
}
"""

HOST = r"""
#include <cnrt.h>
#include <stdio.h>
__nram__ float buf[1024];     /* file-scope NRAM buffer */

__mlu_global__ void scale_kernel(float *x, float s, int n) {
  int per = n / taskDim;
  __memcpy(buf, x + taskId * per, per * sizeof(float), GDRAM2NRAM);
  __bang_mul_scalar(buf, buf, s, per);
  __memcpy(x + taskId * per, buf, per * sizeof(float), NRAM2GDRAM);
}

extern "C" void scale(float *host, float s, int n) {
  int taskId = 5;             /* host code may use built-in names as locals */
  (void)taskId;
  cnrtQueue_t q;
  CNRT_CHECK(cnrtQueueCreate(&q));
  float *d = NULL;
  CNRT_CHECK(cnrtMalloc((void **)&d, n * sizeof(float)));
  CNRT_CHECK(cnrtMemcpy(d, host, n * sizeof(float), CNRT_MEM_TRANS_DIR_HOST2DEV));
  cnrtDim3_t dim = {4, 1, 1};
  cnrtFunctionType_t kt = CNRT_FUNC_TYPE_UNION1;
  scale_kernel<<<dim, kt, q>>>(d, s, n);
  CNRT_CHECK(cnrtQueueSync(q));
  CNRT_CHECK(cnrtMemcpy(host, d, n * sizeof(float), cnrtMemcpyDevToHost));
  CNRT_CHECK(cnrtFree(d));
  CNRT_CHECK(cnrtQueueDestroy(q));
}

/* CNRT < 5 spellings, BLOCK launch of 8 tasks, queue argument omitted */
extern "C" void scale_old(float *host, float s, int n) {
  cnrtQueue_t q;
  cnrtCreateQueue(&q);
  float *d;
  cnrtMalloc((void **)&d, n * sizeof(float));
  cnrtMemcpy(d, host, n * sizeof(float), cnrtMemcpyHostToDev);
  cnrtDim3_t dim = {8, 1, 1};
  scale_kernel<<<dim, cnrtFuncTypeBlock>>>(d, s, n);
  cnrtSyncQueue(q);
  cnrtMemcpy(host, d, n * sizeof(float), CNRT_MEM_TRANS_DIR_DEV2HOST);
  cnrtFree(d);
  cnrtDestroyQueue(q);
}

extern "C" int error_string_ok() {
  return cnrtGetErrorStr(cnrtSuccess) != NULL && CNRT_RET_SUCCESS == 0 && CNRT_FUNC_TYPE_UNION4 == 16;
}
"""

SRAM_REDUCE = r"""
#include <bang.h>
#define PER 256
__mlu_shared__ float partial[4];
__mlu_device__ float cluster_sum[16];

// every core sums its chunk; the cluster's core 0 adds the 4 partials from SRAM; task 0 adds
// the clusters' sums after __sync_all.  Without the barriers the result is wrong.
__mlu_global__ void total(float *out, const float *x) {
  __nram__ float a[PER];
  __nram__ float p[4];
  __memcpy(a, x + taskId * PER, sizeof(a), GDRAM2NRAM);
  float s = 0;
  for (int i = 0; i < PER; ++i) s += a[i];
  p[0] = s;
  __memcpy(partial + coreId, p, sizeof(float), NRAM2SRAM);
  SYNC_CLUSTER;
  if (coreId == 0) {
    __memcpy(p, partial, sizeof(p), SRAM2NRAM);
    cluster_sum[clusterId] = p[0] + p[1] + p[2] + p[3];
  }
  SYNC_ALL;
  if (taskId == 0) {
    float t = 0;
    for (int c = 0; c < clusterDim; ++c) t += cluster_sum[c];
    out[0] = t;
  }
}
"""

BUILTINS = r"""
#include <bang.h>
__mlu_global__ void ids(int *out) {
  int *o = out + taskId * 12;
  o[0] = taskId; o[1] = taskIdX; o[2] = taskIdY; o[3] = taskIdZ; o[4] = taskDim; o[5] = taskDimX;
  o[6] = taskDimY; o[7] = coreId; o[8] = clusterId; o[9] = coreDim; o[10] = clusterDim; o[11] = taskDimZ;
}
// initialised on-chip variables: every core gets its own initialised copy at each launch
__nram__ float table[4] = {1.5f, 2.5f, 3.5f, 4.5f};
__mlu_global__ void inits(float *out) {
  __nram__ int bias = 10;
  __nram__ float al[8] __attribute__((aligned(256)));
  out[taskId * 2 + 0] = table[taskId % 4] + bias;
  out[taskId * 2 + 1] = ((unsigned long)al % 256 == 0) ? 1 : 0;
  for (int i = 0; i < 4; ++i) table[i] = -1;
  bias = 0;
}
"""

MEMCPY = r"""
#include <bang.h>
// 2-D: copy rows 1..4 (4 rows = segnum 3) of a 6 x 16 float matrix, columns 2..9, into NRAM
// packed, then back with a destination pitch of 12 floats.
__mlu_global__ void copy2d(float *out, const float *in) {
  __nram__ float t[64];
  __memcpy(t, in + 16 + 2, 8 * sizeof(float), GDRAM2NRAM, 8 * sizeof(float), 16 * sizeof(float), 3);
  __memcpy(out, t, 8 * sizeof(float), NRAM2GDRAM, 12 * sizeof(float), 8 * sizeof(float), 3);
}
// 3-D: 2 x 3 source segments of 4 bytes matched in linear order onto 3 x 2 destination segments
__mlu_global__ void copy3d(int *out, const int *in) {
  __nram__ int t[64];
  __bang_write_zero(t, 64);
  __memcpy(t, in, 4, GDRAM2NRAM, /*dst*/ 8, 1, 32, 2, /*src*/ 12, 2, 40, 1);
  __memcpy(out, t, sizeof(t), NRAM2GDRAM);
}
// WRAM and LDRAM round trips, NRAM2NRAM, async copies
__ldram__ float spill[64];
__mlu_global__ void spaces(float *out, const float *in) {
  __nram__ float a[64];
  __nram__ float b[64];
  __wram__ float w[64];
  __memcpy_async(a, in, sizeof(a), GDRAM2NRAM);
  __sync_io();
  __memcpy(w, a, sizeof(a), NRAM2WRAM);
  __memcpy(b, w, sizeof(b), WRAM2NRAM);
  __memcpy(spill, b, sizeof(b), NRAM2LDRAM);
  __memcpy(a, spill, sizeof(a), LDRAM2NRAM);
  __memcpy(b, a, sizeof(a), NRAM2NRAM);
  __memcpy_async(out, b, sizeof(b), NRAM2GDRAM);
  __sync();
}
"""

MPU = r"""
#include <bang.h>
__mlu_shared__ float s[64];
// the MPU (coreId == 0x80) stages data into SRAM; the 4 MLU cores read it after __sync_cluster
__mlu_global__ void staged(float *out, const float *in) {
  __nram__ float a[64];
  if (coreId == 0x80) {
    __memcpy(s, in + clusterId * 64, sizeof(s), GDRAM2SRAM);
  }
  __sync_cluster();
  if (__is_mpu()) return;
  __memcpy(a, s, sizeof(a), SRAM2NRAM);
  __bang_mul_scalar(a, a, (float)(coreId + 1), 64);
  __memcpy(out + taskId * 64, a, sizeof(a), NRAM2GDRAM);
}
// no MPU test here: this kernel runs on the 16 MLU cores only
__mlu_global__ void plain(float *out) { out[taskId] += 1; }
"""

REMOTE = r"""
#include <bang.h>
__mlu_shared__ float rs[32];
// UNION2: cluster 0 writes into cluster 1's SRAM with id_dst_cluster; split barrier orders it
__mlu_global__ void remote(float *out, const float *in) {
  __nram__ float a[32];
  if (clusterId == 0 && coreId == 0) {
    __memcpy(a, in, sizeof(a), GDRAM2NRAM);
    __memcpy(rs, a, sizeof(a), NRAM2SRAM);
    __memcpy(rs, rs, sizeof(a), SRAM2SRAM, 1);
    __sync_all_arrive(7, 2);
    __sync_all_arrive(7, 2);
  }
  if (clusterId == 1 && coreId == 3) {
    __sync_all_wait(7, 2);
    __memcpy(a, rs, sizeof(a), SRAM2NRAM);
    __memcpy(out, a, sizeof(a), NRAM2GDRAM);
  }
}
"""

REDUCE_SUM = r"""
#include <bang.h>
__mlu_global__ void rsum(float *out, const float *in) {
  __nram__ float a[64];
  __memcpy(a, in, sizeof(a), GDRAM2NRAM);
  __bang_reduce_sum(a, a, 64);
  __memcpy(out, a, sizeof(a), NRAM2GDRAM);
}
"""

VIOLATIONS = r"""
#include <bang.h>
__mlu_global__ void too_big(float *out) {
  __nram__ float big[200000];   // 800000 bytes > 786432 (mtp_372 NRAM)
  big[0] = 1;
  __memcpy(out, big, 4, NRAM2GDRAM);
}
__mlu_global__ void odd_size(float *out, const float *in) {
  __nram__ float a[64];
  __memcpy(a, in, 40 * sizeof(float), GDRAM2NRAM);
  __bang_add(a, a, a, 40);      // 160 bytes: not a multiple of 128 on (m)tp_2xx
  __memcpy(out, a, 40 * sizeof(float), NRAM2GDRAM);
}
__mlu_global__ void wrong_dir(float *out, const float *in) {
  __nram__ float a[64];
  __nram__ float b[64];
  __memcpy(a, in, sizeof(a), GDRAM2NRAM);
  __memcpy(b, a, sizeof(a), GDRAM2NRAM);   // both ends are NRAM
  __memcpy(out, b, sizeof(b), NRAM2GDRAM);
}
__mlu_global__ void oob_write(float *out, const float *in) {
  __nram__ float a[64];
  __memcpy(a, in, sizeof(a), GDRAM2NRAM);
  __memcpy(out + 60, a, sizeof(a), NRAM2GDRAM);   // out has 64 floats: writes 60 past the end
}
__mlu_global__ void nram_overrun(float *out) {
  __nram__ float a[64];
  __bang_write_zero(a + 196600, 64);   // beyond the 768 KiB NRAM of the core
  __memcpy(out, a, 4, NRAM2GDRAM);
}
__mlu_global__ void nram_array_overrun(float *out, const float *in) {
  __nram__ float a[64];
  __nram__ float b[64];
  __memcpy(a, in, 2 * sizeof(a), GDRAM2NRAM);   // 128 floats into a[64]: runs into b
  __memcpy(out, a, sizeof(a), NRAM2GDRAM);
  __memcpy(out, b, sizeof(b), NRAM2GDRAM);
}
__mlu_global__ void uninit(float *out) {
  __nram__ float a[64];
  __memcpy(out, a, sizeof(a), NRAM2GDRAM);   // never written
}
__mlu_global__ void deadlock(float *out) {
  if (coreId == 0) __sync_cluster(); else __sync_all();
  out[taskId] = 1;
}
__mlu_global__ void early_return(float *out) {
  if (taskId == 3) return;
  __sync_all();
  out[taskId] = 1;
}
"""


SYNCED = SRAM_REDUCE.replace("SYNC_CLUSTER", "__sync_cluster()").replace("SYNC_ALL", "__sync_all()")
UNSYNCED = SRAM_REDUCE.replace("SYNC_CLUSTER", "").replace("SYNC_ALL", "")


@pytest.fixture(scope="module")
def libs():
    # few translation units (compiles dominate a cold run): one for the default profile, one
    # without barriers, one for mtp_290 (2xx rules)
    main = "\n".join([VADD, HOST, SYNCED, BUILTINS, MEMCPY, MPU, REMOTE, REDUCE_SUM, VIOLATIONS, GEMM])
    so_main, so_nosync = H.build_many([(main, "emulator_tests.mlu"), (UNSYNCED, "nosync.mlu")])
    so290 = H.build("\n".join([REDUCE_SUM, VIOLATIONS]), "emulator_tests_290.mlu", profile=P290)
    d = {k: so_main for k in ("vadd", "host", "sram", "ids", "memcpy", "mpu", "remote", "rsum", "bad", "gemm")}
    d.update(nosync=so_nosync, rsum290=so290, bad290=so290)
    return d


def rnd(n, dt=np.float32):
    return np.random.default_rng(n).uniform(-1, 1, n).astype(dt)


# ------------------------------------------------------------------------------ basics
@pytest.mark.parametrize("strict", [False, True])
def test_vector_add_16_tasks(libs, strict):
    a, b = rnd(4096), rnd(4096) * 2
    out = np.zeros(4096, np.float32)
    r = H.run(libs["vadd"], [H.Kernel("vadd", [out, a, b], dim=(16, 1, 1), ktype=UNION4)], strict=strict).ok()
    np.testing.assert_array_equal(r.outputs[0][0], a + b)
    assert not r.warnings


def test_prepare_rewrites_and_stubs():
    unit = emulate.prepare(VADD, "vadd.mlu", strict=True, profile=P372)
    assert '#line 1 "vadd.mlu"' in unit
    assert "xpb::site(XPB_NRAM, sizeof(float[PER])" in unit
    assert "__xp_kernel_vadd(const xp_launch_t *cfg, void **args)" in unit
    assert "#define __BANG_ARCH__ 372" in unit and "#define XPB_ARCH_GROUP 3" in unit
    # line numbers of the user's code are unchanged
    body = unit.split('#line 1 "vadd.mlu"\n', 1)[1]
    lines, orig = body.splitlines(), VADD.splitlines()
    k = next(i for i, l in enumerate(orig) if "__bang_add" in l)
    assert lines[k] == orig[k] and lines[k + 2] == orig[k + 2]
    host = emulate.prepare(HOST, "host.mlu", strict=False, profile=P372)
    assert 'xpb::make_launch(scale_kernel, "scale_kernel", dim, kt, q)(d, s, n)' in host
    assert emulate.kernel_names(HOST) == ["scale_kernel"]


def test_compile_errors_point_at_the_user_file(tmp_path):
    src = "#include <bang.h>\n__mlu_global__ void k(float *x) {\n  undefined_thing(x);\n}\n"
    unit = emulate.prepare(src, "user_kernel.mlu", strict=False, profile=P372)
    f = tmp_path / "u.cpp"
    f.write_text(unit)
    r = subprocess.run(["g++", "-std=c++17", "-fsyntax-only", *(f"-I{d}" for d in emulate.INCLUDE_DIRS), str(f)],
                       capture_output=True, text=True)
    assert r.returncode != 0 and "user_kernel.mlu:3" in r.stderr


def test_load_profile_defaults():
    p = emulate.load_profile()
    assert p["name"] == "mtp_372" and p["nram_bytes"] == 768 * 1024 and p["wram_bytes"] == 1024 * 1024
    assert p["sram_bytes"] == 4096 * 1024 and p["clusters"] == 4 and p["cores_per_cluster"] == 4
    assert p["default_launch"] == {"clusters": 4, "cores": 4} and p["default_dim"] == [16, 1, 1]
    assert emulate.load_profile("mtp_290")["arch_group"] == "2xx"


def test_cnrt_host_wrapper(libs):
    x = rnd(1024)
    r = H.run(libs["host"], [H.Host("scale", [x.copy(), 2.5, 1024]), H.Host("scale_old", [x.copy(), -1.0, 1024]),
                             H.Host("error_string_ok", [])], strict=True).ok()
    np.testing.assert_array_equal(r.outputs[0][0], x * np.float32(2.5))
    np.testing.assert_array_equal(r.outputs[1][0], -x)
    assert r.returns[2] == 1


def test_sync_cluster_and_sync_all_reduce_through_sram(libs):
    x = rnd(16 * 256)
    out = np.zeros(1, np.float32)
    r = H.run(libs["sram"], [H.Kernel("total", [out, x], dim=(16, 1, 1), ktype=UNION4)], strict=True).ok()
    assert abs(r.outputs[0][0][0] - x.astype(np.float64).sum()) < 1e-3


def test_missing_barriers_give_a_wrong_result(libs):
    x = np.ones(16 * 256, np.float32)
    out = np.zeros(1, np.float32)
    r = H.run(libs["nosync"], [H.Kernel("total", [out, x], dim=(16, 1, 1), ktype=UNION4)]).ok()
    assert r.outputs[0][0][0] != 4096.0


@pytest.mark.parametrize("dim,ktype", [((8, 1, 1), BLOCK), ((16, 1, 1), UNION1), ((16, 1, 1), UNION2),
                                       ((8, 2, 1), UNION2), ((4, 2, 2), UNION1)])
def test_builtin_variables(libs, dim, ktype):
    n = dim[0] * dim[1] * dim[2]
    out = np.zeros(n * 12, np.int32)
    r = H.run(libs["ids"], [H.Kernel("ids", [out], dim=dim, ktype=ktype)]).ok()
    o = r.outputs[0][0].reshape(n, 12)
    for t in range(n):
        x, y, z = t % dim[0], t // dim[0] % dim[1], t // (dim[0] * dim[1])
        if ktype == BLOCK:
            core, cluster, cdim, cldim = 0, 0, 1, 0
        else:
            ncl = ktype // 4
            core, cluster, cdim, cldim = t % 4, t // 4 % ncl, 4, ncl
        assert list(o[t]) == [t, x, y, z, n, dim[0], dim[1], core, cluster, cdim, cldim, dim[2]], t


@pytest.mark.parametrize("strict", [False, True])
def test_initialised_and_aligned_on_chip_variables(libs, strict):
    out = np.zeros(8, np.float32)
    calls = [H.Kernel("inits", [out], dim=(4, 1, 1), ktype=UNION1)] * 2  # twice: re-initialised per launch
    r = H.run(libs["ids"], calls, strict=strict).ok()
    for o in r.outputs:
        np.testing.assert_array_equal(o[0].reshape(4, 2)[:, 0], [11.5, 12.5, 13.5, 14.5])
        assert (o[0].reshape(4, 2)[:, 1] == 1).all()


# ------------------------------------------------------------------------------ memcpy
def test_memcpy_2d_segnum_plus_one_segments(libs):
    m = np.arange(6 * 16, dtype=np.float32)
    out = np.full(4 * 12, -1, np.float32)
    r = H.run(libs["memcpy"], [H.Kernel("copy2d", [out, m], dim=(1, 1, 1), ktype=BLOCK)], strict=True).ok()
    got = r.outputs[0][0]
    want = np.full(4 * 12, -1, np.float32)
    for s in range(4):  # segnum 3 -> 4 segments
        want[s * 12: s * 12 + 8] = m.reshape(6, 16)[1 + s, 2:10]
    want[3 * 12 + 8:] = -1
    np.testing.assert_array_equal(got, want)


def test_memcpy_3d_linear_segment_matching(libs):
    src = np.arange(64, dtype=np.int32)
    out = np.zeros(64, np.int32)
    r = H.run(libs["memcpy"], [H.Kernel("copy3d", [out, src], dim=(1, 1, 1), ktype=BLOCK)], strict=True).ok()
    got = r.outputs[0][0]
    want = np.zeros(64, np.int32)
    t = 0
    for i2 in range(2):          # src: segnum2 = 1, stride1 = 40 B; segnum1 = 2, stride0 = 12 B
        for i1 in range(3):
            j2, j1 = t // 2, t % 2   # dst: segnum1 = 1, stride0 = 8 B; stride1 = 32 B
            want[(j2 * 32 + j1 * 8) // 4] = src[(i2 * 40 + i1 * 12) // 4]
            t += 1
    np.testing.assert_array_equal(got, want)


def test_wram_ldram_nram2nram_and_async_copies(libs):
    x = rnd(64)
    out = np.zeros(64, np.float32)
    r = H.run(libs["memcpy"], [H.Kernel("spaces", [out, x], dim=(4, 1, 1), ktype=UNION1)], strict=True).ok()
    np.testing.assert_array_equal(r.outputs[0][0], x)


def test_mpu_stages_sram_for_its_cluster(libs):
    x = rnd(4 * 64)
    out = np.zeros(16 * 64, np.float32)
    r = H.run(libs["mpu"], [H.Kernel("staged", [out, x], dim=(16, 1, 1), ktype=UNION4)], strict=True).ok()
    o = r.outputs[0][0].reshape(16, 64)
    for t in range(16):
        np.testing.assert_array_equal(o[t], x.reshape(4, 64)[t // 4] * np.float32(t % 4 + 1))


def test_mpu_only_for_kernels_that_test_for_it(libs):
    assert emulate.mpu_kernels(MPU) == ["staged"]
    out = np.zeros(16, np.float32)
    r = H.run(libs["mpu"], [H.Kernel("plain", [out], dim=(16, 1, 1), ktype=UNION4)], strict=True).ok()
    np.testing.assert_array_equal(r.outputs[0][0], np.ones(16, np.float32))


def test_sram2sram_to_another_cluster_and_split_barrier(libs):
    x = rnd(32)
    out = np.zeros(32, np.float32)
    r = H.run(libs["remote"], [H.Kernel("remote", [out, x], dim=(8, 1, 1), ktype=UNION2)], strict=True).ok()
    np.testing.assert_array_equal(r.outputs[0][0], x)


def test_reduce_sum_per_chunk_3xx_keeps_other_slots(libs):
    x = rnd(64)
    out = np.zeros(64, np.float32)
    r = H.run(libs["rsum"], [H.Kernel("rsum", [out, x], dim=(1, 1, 1), ktype=BLOCK)], strict=True).ok()
    got = r.outputs[0][0]
    want = x.copy()
    want[0], want[32] = x[:32].sum(dtype=np.float32), x[32:].sum(dtype=np.float32)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


def test_reduce_sum_per_chunk_2xx_zeroes_other_slots(libs):
    x = rnd(64)
    out = np.ones(64, np.float32)
    r = H.run(libs["rsum290"], [H.Kernel("rsum", [out, x], dim=(1, 1, 1), ktype=BLOCK)], strict=True, profile=P290).ok()
    want = np.zeros(64, np.float32)
    want[0], want[32] = x[:32].sum(dtype=np.float32), x[32:].sum(dtype=np.float32)
    np.testing.assert_allclose(r.outputs[0][0], want, rtol=1e-6, atol=1e-6)


# ------------------------------------------------------------------------------ strict rules and errors
def _k(name, *args, dim=(1, 1, 1), ktype=BLOCK):
    return H.Kernel(name, list(args), dim=dim, ktype=ktype)


def test_nram_over_capacity(libs):
    out = np.zeros(4, np.float32)
    r = H.run(libs["bad"], [_k("too_big", out)], strict=True)
    assert r.returncode == 42 and r.error["kind"] == "strict" and "NRAM over capacity" in r.error["message"]
    lenient = H.run(libs["bad"], [_k("too_big", out)]).ok()
    assert any("NRAM over capacity" in w for w in lenient.warnings)


def test_misaligned_size_strict_on_2xx_only(libs):
    x, out = rnd(64), np.zeros(64, np.float32)
    r = H.run(libs["bad290"], [_k("odd_size", out, x)], strict=True, profile=P290)
    assert r.returncode == 42 and "multiple of 128" in r.error["message"] and "__bang_add" in r.error["message"]
    H.run(libs["bad"], [_k("odd_size", out, x)], strict=True).ok()  # 3xx: no such rule
    lenient = H.run(libs["bad290"], [_k("odd_size", out, x)], profile=P290).ok()
    np.testing.assert_array_equal(lenient.outputs[0][0][:40], x[:40] * 2)
    assert lenient.warnings


def test_wrong_memcpy_direction(libs):
    x, out = rnd(64), np.zeros(64, np.float32)
    r = H.run(libs["bad"], [_k("wrong_dir", out, x)], strict=True)
    assert r.returncode == 42 and "GDRAM2NRAM" in r.error["message"] and "source in NRAM" in r.error["message"]
    lenient = H.run(libs["bad"], [_k("wrong_dir", out, x)]).ok()
    np.testing.assert_array_equal(lenient.outputs[0][0], x)
    assert any("direction" in w for w in lenient.warnings)


def test_out_of_bounds_gdram_write(libs):
    x, out = rnd(64), np.zeros(64, np.float32)
    r = H.run(libs["bad"], [_k("oob_write", out, x)])
    assert r.returncode == 41 and r.error["kind"] == "oob", r.stderr[-2000:]


def test_nram_arena_overrun_is_oob(libs):
    r = H.run(libs["bad"], [_k("nram_overrun", np.zeros(4, np.float32))])
    assert r.returncode == 41 and "NRAM" in r.error["message"]


def test_operand_past_the_end_of_its_nram_array_is_oob(libs):
    # inside the core's NRAM, but past the declared array it starts in (C: the pointer leaves
    # its array); a source doing this reads or clobbers its neighbour
    r = H.run(libs["bad"], [_k("nram_array_overrun", np.zeros(64, np.float32), rnd(128))])
    assert r.returncode == 41 and "past the end of the 256-byte NRAM array" in r.error["message"], r.error


def test_uninitialised_nram_is_poisoned_in_strict_mode(libs):
    r = H.run(libs["bad"], [_k("uninit", np.zeros(64, np.float32))], strict=True).ok()
    assert np.isnan(r.outputs[0][0]).all()


def test_union_dim_must_be_a_multiple(libs):
    x, out = rnd(4096), np.zeros(4096, np.float32)
    r = H.run(libs["vadd"], [H.Kernel("vadd", [out, x, x], dim=(6, 1, 1), ktype=UNION1)], strict=True)
    assert r.returncode == 42 and "multiple of 4" in r.error["message"]


def test_deadlock_is_reported(libs):
    r = H.run(libs["bad"], [_k("deadlock", np.zeros(16, np.float32), dim=(4, 1, 1), ktype=UNION1)])
    assert r.returncode == 40 and "deadlock" in r.error["message"]


def test_early_return_before_sync_all(libs):
    out = np.zeros(16, np.float32)
    r = H.run(libs["bad"], [_k("early_return", out, dim=(4, 1, 1), ktype=UNION1)], strict=True)
    assert r.returncode == 42 and "returned before" in r.error["message"]
    lenient = H.run(libs["bad"], [_k("early_return", out, dim=(4, 1, 1), ktype=UNION1)]).ok()
    assert list(lenient.outputs[0][0][:4]) == [1, 1, 1, 0]


# ------------------------------------------------------------------------------ performance
GEMM = r"""
#include <bang.h>
#define GM 512
#define GK 512
#define GN 512
#define ROWS (GM / 16)
// C = A x B, half inputs, float output; B is given column-major (N rows of K) in GDRAM.
__mlu_global__ void gemm(float *C, const half *A, const half *B) {
  __nram__ half a[ROWS * GK];
  __wram__ half b[GK * GN];
  __nram__ float c[ROWS * GN];
  __memcpy(a, A + taskId * ROWS * GK, sizeof(a), GDRAM2NRAM);
  __memcpy(b, B, sizeof(b), GDRAM2WRAM);
  __bang_matmul(c, a, b, ROWS, GK, GN);
  __memcpy(C + taskId * ROWS * GN, c, sizeof(c), NRAM2GDRAM);
}
"""


def test_gemm_512_across_16_tasks(libs):
    so = libs["gemm"]
    rng = np.random.default_rng(0)
    A = rng.uniform(-1, 1, (512, 512)).astype(np.float16)
    B = rng.uniform(-1, 1, (512, 512)).astype(np.float16)
    C = np.zeros((512, 512), np.float32)
    t0 = time.perf_counter()
    r = H.run(so, [H.Kernel("gemm", [C, A, np.ascontiguousarray(B.T)], dim=(16, 1, 1), ktype=UNION4)], strict=True).ok()
    seconds = time.perf_counter() - t0
    want = A.astype(np.float64) @ B.astype(np.float64)
    np.testing.assert_allclose(r.outputs[0][0], want, rtol=1e-4, atol=1e-3)
    print(f"\n512x512x512 __bang_matmul gemm over 16 tasks: launch {r.seconds[0]:.3f} s, {seconds:.3f} s with fork/copies")
    assert seconds < 30
