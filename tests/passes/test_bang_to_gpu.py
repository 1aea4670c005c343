"""BANG -> CUDA / HIP: task_recovery{form=flat} and the bang->cuda/hip plans.

The flat form turns a BANG launch into one sequential loop over the tasks with task-private
on-chip buffers; loop_bind then binds that loop to GPU threads. Unit tests check the flat form
on small sources (run on the virtual device against the BANG emulator) and its refusals; the
translation tests run the whole plan on corpus kernels (add, softmax, gemm) and require a
verified CUDA / HIP program.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from passes.base import PassRefused, run_pass
import passes.lift.detensorize  # noqa: F401
import passes.cleanup.guard_continue  # noqa: F401
import passes.lift.task_recovery  # noqa: F401
import platforms
from xpiler.parse import parse_source
from xpiler.run import run_kernel
from xpiler.translate import translate

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "xpiler" / "corpus" / "bang"


def flat(src: str, tmp_path, name: str, typed: bool = False):
    prog = parse_source(src, "bang", str(tmp_path / f"{name}.mlu"))
    out = run_pass("task_recovery", run_pass("detensorize", prog, typed=typed), form="flat")
    assert out.platform == "vnni"
    return prog, platforms.module("vnni", "backend").emit(out)


def check_flat(src: str, tmp_path, name: str, args: list, typed: bool = False) -> str:
    prog, text = flat(src, tmp_path, name, typed)
    want = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    run_kernel(tmp_path / f"{name}.mlu", args=want, source=src, program=prog)
    got = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    path = tmp_path / f"{name}.cpp"
    path.write_text(text)
    run_kernel(path, args=got, source=text, program=parse_source(text, "vnni", str(path)))
    for w, g in zip(want, got):
        if isinstance(w, np.ndarray):
            np.testing.assert_array_equal(g, w)
    return text


BUILTINS = """#include <bang.h>
#define PER 64
__nram__ float xa[PER];
__mlu_global__ void ids(float *x, float *out) {
  int base = taskId * PER;
  __memcpy(xa, x + base, PER * sizeof(float), GDRAM2NRAM);
  __bang_add_scalar(xa, xa, (float)(coreId + 10 * clusterId + 100 * taskDim + 1000 * coreDim
                                    + 10000 * clusterDim + 100000 * taskIdX), PER);
  __memcpy(out + base, xa, PER * sizeof(float), NRAM2GDRAM);
}
"""


def test_flat_form_is_one_task_loop_with_task_private_buffers(tmp_path):
    x = np.arange(16 * 64, dtype=np.float32)
    out = np.zeros(16 * 64, dtype=np.float32)
    text = check_flat(BUILTINS, tmp_path, "ids", [x, out])
    assert "for (int taskId = 0; taskId < 16; ++taskId)" in text
    assert "__launch" not in text and "xp_core_slot" not in text
    # tasks that share nothing: their loop carries the kernel's independence
    assert "#pragma omp parallel for\n  for (int taskId = 0;" in text
    task = text[text.index("ids__task("):]
    assert "float xa[PER];" in task            # the NRAM buffer is a local of the task
    assert "static float" not in text


HOST = """#include <bang.h>
#include <cnrt.h>
#define N 512
#define PER 64
__nram__ float buf[PER];
__mlu_global__ void twice(float *x, float *y) {
  if (taskId * PER >= N) return;
  __memcpy(buf, x + taskId * PER, PER * sizeof(float), GDRAM2NRAM);
  __bang_add(buf, buf, buf, PER);
  __memcpy(y + taskId * PER, buf, PER * sizeof(float), NRAM2GDRAM);
}
extern "C" void run(float *x, float *y) {
  cnrtQueue_t q;
  cnrtQueueCreate(&q);
  float *d_x;
  float *d_y;
  cnrtMalloc((void **)&d_x, N * sizeof(float));
  cnrtMalloc((void **)&d_y, N * sizeof(float));
  cnrtMemcpy(d_x, x, N * sizeof(float), CNRT_MEM_TRANS_DIR_HOST2DEV);
  cnrtDim3_t dim = {4, 2, 1};
  cnrtFunctionType_t ktype = CNRT_FUNC_TYPE_UNION2;
  twice<<<dim, ktype, q>>>(d_x, d_y);
  cnrtQueueSync(q);
  cnrtMemcpy(y, d_y, N * sizeof(float), CNRT_MEM_TRANS_DIR_DEV2HOST);
  cnrtFree(d_x);
  cnrtFree(d_y);
  cnrtQueueDestroy(q);
}
"""


def test_flat_form_of_a_host_launch(tmp_path):
    x = np.linspace(-1, 1, 512).astype(np.float32)
    y = np.zeros(512, dtype=np.float32)
    text = check_flat(HOST, tmp_path, "host", [x, y])
    assert "for (int taskId = 0; taskId < 8; ++taskId)" in text
    assert "taskId % 4" in text and "taskId / 4 % 2" in text      # UNION2: coreId, clusterId


PHASED = """#include <bang.h>
#define PER 64
__nram__ float buf[PER];
__mlu_shared__ float part[4 * PER];
__mlu_global__ void phased(float *x, float *out) {
  __memcpy(part + coreId * PER, x + taskId * PER, PER * sizeof(float), GDRAM2SRAM);
  __sync_cluster();
  // every core of the cluster adds its neighbour's slice, staged by the other task
  __memcpy(buf, part + ((coreId + 1) % 4) * PER, PER * sizeof(float), SRAM2NRAM);
  __bang_add_scalar(buf, buf, (float) taskId, PER);
  __memcpy(out + taskId * PER, buf, PER * sizeof(float), NRAM2GDRAM);
}
"""


def test_flat_form_splits_at_barriers_with_sram_per_cluster(tmp_path):
    x = np.arange(16 * 64, dtype=np.float32)
    out = np.zeros(16 * 64, dtype=np.float32)
    text = check_flat(PHASED, tmp_path, "phased", [x, out])
    assert "phased__phase0(" in text and "phased__phase1(" in text
    assert "float xp_sram_part[4 * (4 * PER)];" in text
    assert "omp parallel" not in text          # tasks of one cluster share SRAM: no assertion


def test_flat_form_refuses_state_across_a_barrier():
    src = PHASED.replace("__sync_cluster();", "__bang_add_scalar(buf, buf, 1.0f, PER);\n  __sync_cluster();")
    prog = run_pass("detensorize", parse_source(src, "bang", "phased.mlu"))
    with pytest.raises(PassRefused) as exc:
        run_pass("task_recovery", prog, form="flat")
    assert exc.value.diagnostics[0].code == "XP-TASK-011"
    run_pass("task_recovery", prog)              # the launch form still lifts it


REMAT = """#include <bang.h>
#define PER 64
__nram__ float buf[PER];
__mlu_shared__ float part[4 * PER];
__mlu_global__ void remat(float *x, float *out, int scale) {
  int half_n = scale / 2;
  int lane = (coreId < 2) ? coreId : half_n * 4 + coreId;
  int row = clusterId * 4 + lane % 4;
  const float bias = (float) (row * scale);
  __memcpy(part + coreId * PER, x + taskId * PER, PER * sizeof(float), GDRAM2SRAM);
  __sync_cluster();
  __memcpy(buf, part + ((coreId + 1) % 4) * PER, PER * sizeof(float), SRAM2NRAM);
  __bang_add_scalar(buf, buf, bias, PER);
  __memcpy(out + row * PER, buf, PER * sizeof(float), NRAM2GDRAM);
}
"""


def test_flat_form_recomputes_task_values_after_a_barrier(tmp_path):
    # row and bias live across the barrier but are functions of the task's identity and the
    # unassigned parameter scale: the later phase recomputes them (with half_n and lane)
    x = np.arange(16 * 64, dtype=np.float32)
    out = np.zeros(16 * 64, dtype=np.float32)
    text = check_flat(REMAT, tmp_path, "remat", [x, out, 5])
    phase1 = text[text.index("remat__phase1("):]
    phase1 = phase1[:phase1.index("\n}\n")]
    for decl in ("int half_n = ", "int lane = ", "int row = ", "const float bias = "):
        assert phase1.count(decl) == 1, phase1
    assert "xp_live" not in text


@pytest.mark.parametrize("change", [
    ("int row = clusterId * 4 + lane % 4;", "int row = clusterId * 4 + lane % 4;\n  row += 1;"),   # written
    ("int half_n = scale / 2;", "int half_n = (int) x[0];"),                                        # memory
    ("int half_n = scale / 2;", "int half_n = scale / 2;\n  scale = 3;"),                        # param written
    ("int half_n = scale / 2;", "int half_n = scale / 2;\n  int *hp = &half_n;"),                # address
])
def test_flat_form_refuses_barrier_state_it_cannot_recompute(change):
    src = REMAT.replace(*change)
    assert src != REMAT
    prog = run_pass("detensorize", parse_source(src, "bang", "remat.mlu"))
    with pytest.raises(PassRefused) as exc:
        run_pass("task_recovery", prog, form="flat")
    assert exc.value.diagnostics[0].code == "XP-TASK-011"


def _host_with(params: str, dims: str) -> str:
    src = HOST.replace("extern \"C\" void run(float *x, float *y)", f"extern \"C\" void run(float *x, float *y{params})")
    return src.replace("  cnrtDim3_t dim = {4, 2, 1};\n", dims)


def test_flat_form_takes_launch_dimensions_computed_on_the_host(tmp_path):
    # {4, groups / 2, 1} with groups a parameter of the host function: the runner receives
    # the value (xp_h_groups) and its task loop uses the host expression
    x = np.linspace(-1, 1, 512).astype(np.float32)
    y = np.zeros(512, dtype=np.float32)
    src = _host_with(", int groups", "  int per_x = 4;\n  cnrtDim3_t dim = {per_x, groups / 2, 1};\n")
    text = check_flat(src, tmp_path, "hostdim", [x, y, 4])
    assert "xp_h_groups" in text and "xp_h_per_x" in text
    assert "taskId < xp_h_per_x * (xp_h_groups / 2) * 1" in text


def test_flat_form_takes_dimensions_set_under_a_condition(tmp_path):
    # a field stored under a condition: the runner receives dim.y as the launch reads it
    x = np.linspace(-1, 1, 512).astype(np.float32)
    y = np.zeros(512, dtype=np.float32)
    src = _host_with("", "  cnrtDim3_t dim;\n  dim.x = 4;\n  dim.z = 1;\n  if (x[0] < 0.0f) dim.y = 2; else dim.y = 1;\n")
    text = check_flat(src, tmp_path, "conddim", [x, y])
    assert "xp_dim_y" in text and "(int) dim.y" in text


def test_flat_form_refuses_a_function_type_chosen_at_run_time():
    src = HOST.replace("cnrtFunctionType_t ktype = CNRT_FUNC_TYPE_UNION2;",
                       "cnrtFunctionType_t ktype = CNRT_FUNC_TYPE_UNION2;\n  if (x[0] > 5) ktype = CNRT_FUNC_TYPE_UNION1;")
    prog = run_pass("detensorize", parse_source(src, "bang", "host.mlu"))
    with pytest.raises(PassRefused) as exc:
        run_pass("task_recovery", prog, form="flat")
    assert exc.value.diagnostics[0].code == "XP-TASK-012"
    assert "function type" in exc.value.diagnostics[0].message


def test_flat_form_refuses_cluster_state_with_run_time_dimensions():
    kernel = PHASED.replace("#include <bang.h>", "#include <bang.h>\n#include <cnrt.h>")
    host = HOST[HOST.index("extern \"C\""):].replace("twice<<<", "phased<<<").replace(
        "extern \"C\" void run(float *x, float *y)", "extern \"C\" void run(float *x, float *y, int g)").replace(
        "cnrtDim3_t dim = {4, 2, 1};", "cnrtDim3_t dim = {4, g, 1};")
    prog = run_pass("detensorize", parse_source(kernel + host, "bang", "ph.mlu"))
    with pytest.raises(PassRefused) as exc:
        run_pass("task_recovery", prog, form="flat")
    assert exc.value.diagnostics[0].code == "XP-TASK-011"
    assert "non-constant number of" in exc.value.diagnostics[0].message


def test_flat_form_drops_the_memory_core_exit_idiom(tmp_path):
    # 'if (__is_mpu()) return;' first: the memory core does nothing, the compute cores never
    # take the branch; the barrier/SRAM kernel needs no MPU participant
    src = PHASED.replace("__mlu_global__ void phased(float *x, float *out) {\n",
                         "__mlu_global__ void phased(float *x, float *out) {\n  if (__is_mpu()) return;\n")
    assert src != PHASED
    x = np.arange(16 * 64, dtype=np.float32)
    out = np.zeros(16 * 64, dtype=np.float32)
    text = check_flat(src, tmp_path, "phased", [x, out])
    assert "0x80" not in text and "__is_mpu" not in text and "xp_c" not in text


def test_flat_form_takes_sram_declared_in_the_kernel_with_the_mpu_exit(tmp_path):
    # Cambricon's sample shape: SRAM declared in the kernel, then 'if (__is_mpu()) return;'
    src = PHASED.replace("__mlu_shared__ float part[4 * PER];\n", "").replace(
        "__mlu_global__ void phased(float *x, float *out) {\n",
        "__mlu_global__ void phased(float *x, float *out) {\n  __mlu_shared__ float part[4 * PER];\n"
        "  if (__is_mpu()) return;\n")
    x = np.arange(16 * 64, dtype=np.float32)
    out = np.zeros(16 * 64, dtype=np.float32)
    text = check_flat(src, tmp_path, "phased", [x, out])
    assert "float xp_sram_part[4 * (4 * PER)];" in text and "0x80" not in text


def test_flat_form_declares_a_buffer_in_the_one_phase_that_uses_it(tmp_path):
    # declared before the barrier, used only after it: nothing crosses the barrier
    src = PHASED.replace("__nram__ float buf[PER];\n", "").replace(
        "__mlu_global__ void phased(float *x, float *out) {\n",
        "__mlu_global__ void phased(float *x, float *out) {\n  __nram__ float buf[PER];\n")
    x = np.arange(16 * 64, dtype=np.float32)
    out = np.zeros(16 * 64, dtype=np.float32)
    text = check_flat(src, tmp_path, "phased", [x, out])
    phase1 = text[text.index("phased__phase1("):]
    assert "float buf[PER];" in phase1[:phase1.index("\n}\n")]


@pytest.mark.parametrize("guard", ["if (__is_mpu()) { return; }", "if (coreId == 0x80) return;",
                                   "if (!__is_ipu()) return;"])
def test_memory_core_exit_spellings(guard):
    src = PHASED.replace("__mlu_global__ void phased(float *x, float *out) {\n",
                         "__mlu_global__ void phased(float *x, float *out) {\n  int unused = 3;\n  " + guard + "\n")
    out = run_pass("task_recovery", run_pass("detensorize", parse_source(src, "bang", "p.mlu")), form="flat")
    text = platforms.module("vnni", "backend").emit(out)
    assert "0x80" not in text and "__is_" not in text


def test_memory_core_return_after_work_is_still_refused():
    # the memory core returning after a copy is not the idiom: refused as before
    src = PHASED.replace("  __sync_cluster();\n", "  if (__is_mpu()) return;\n  __sync_cluster();\n")
    prog = run_pass("detensorize", parse_source(src, "bang", "p.mlu"))
    with pytest.raises(PassRefused) as exc:
        run_pass("task_recovery", prog, form="flat")
    assert exc.value.diagnostics[0].code == "XP-TASK-011"


HELPERS = """#include <bang.h>
#define PER 64
__nram__ float buf[PER];
__nram__ float tmp[PER];
__mlu_func__ void scale(float *dst, float s) {
  __bang_mul_scalar(tmp, buf, s, PER);
  __memcpy(dst, tmp, PER * sizeof(float), NRAM2GDRAM);
}
__mlu_func__ void load_and_scale(float *src, float *dst, float s) {
  __memcpy(buf, src, PER * sizeof(float), GDRAM2NRAM);
  scale(dst, s);
}
__mlu_global__ void helpers(float *x, float *y) {
  load_and_scale(x + taskId * PER, y + taskId * PER, (float) (taskId + 1));
}
"""


def test_flat_form_passes_file_scope_buffers_to_device_functions(tmp_path):
    # (XP-TASK-011 before issue 17) the helpers take the task's buffers as parameters, the
    # one calling the other passes them on; the task function declares them
    x = np.arange(16 * 64, dtype=np.float32)
    y = np.zeros(16 * 64, dtype=np.float32)
    text = check_flat(HELPERS, tmp_path, "helpers", [x, y])
    assert "scale(float *dst, float s, float buf[PER], float tmp[PER])" in text
    assert "scale(dst, s, buf, tmp);" in text
    task = text[text.index("helpers__task("):]
    assert "float buf[PER];" in task and "float tmp[PER];" in task


@pytest.mark.parametrize("change, word", [
    ("__bang_mul_scalar(tmp, buf, s, PER);", "sizeof"),
    ("scale(dst, s);", "the address"),
])
def test_flat_form_refuses_array_identity_of_a_buffer_in_a_device_function(change, word):
    new = {"sizeof": "__bang_mul_scalar(tmp, buf, s, sizeof(buf) / sizeof(float));",
           "the address": "scale(dst, s + (float) (&buf == 0));"}[word]
    src = HELPERS.replace(change, new)
    assert src != HELPERS
    prog = run_pass("detensorize", parse_source(src, "bang", "h.mlu"))
    with pytest.raises(PassRefused) as exc:
        run_pass("task_recovery", prog, form="flat")
    d = exc.value.diagnostics[0]
    assert d.code == "XP-TASK-011" and word in d.message and "'buf'" in d.message


def test_flat_form_refuses_sram_in_a_device_function():
    src = PHASED.replace("__mlu_global__", "__mlu_func__ void peek(float *o) { o[0] = part[0]; }\n__mlu_global__")
    prog = run_pass("detensorize", parse_source(src, "bang", "p.mlu"))
    with pytest.raises(PassRefused) as exc:
        run_pass("task_recovery", prog, form="flat")
    d = exc.value.diagnostics[0]
    assert d.code == "XP-TASK-011" and "cluster-shared" in d.message


ISSUE17 = """#include <bang.h>
#include <cnrt.h>
#define PER 64
#define NRAM_FLOATS (__MLU_NRAM_SIZE__ / 12)
__nram__ float nram_buf[NRAM_FLOATS];
__mlu_func__ void compute(float *dst, const float *src, int len) {
  __memcpy(nram_buf, src, len * sizeof(float), GDRAM2NRAM);
  for (int i = 0; i < len; ++i) nram_buf[i] = __cn_scalar_sin_f32(nram_buf[i]) * 0.5f;
  __memcpy(dst, nram_buf, len * sizeof(float), NRAM2GDRAM);
}
__mlu_global__ void sinhalf(float *x, float *y, int n) {
  if (__is_mpu()) return;
  int start = taskId * PER;
  if (start >= n) return;
  int len = n - start < PER ? n - start : PER;
  compute(y + start, x + start, len);
}
extern "C" void run(float *x, float *y, int n) {
  cnrtQueue_t q;
  cnrtQueueCreate(&q);
  float *d_x;
  float *d_y;
  cnrtMalloc((void **)&d_x, n * sizeof(float));
  cnrtMalloc((void **)&d_y, n * sizeof(float));
  cnrtMemcpy(d_x, x, n * sizeof(float), CNRT_MEM_TRANS_DIR_HOST2DEV);
  int tasks = (n + PER - 1) / PER;
  cnrtDim3_t dim = {(unsigned)((tasks + 3) / 4 * 4), 1, 1};
  cnrtFunctionType_t ktype = CNRT_FUNC_TYPE_UNION1;
  sinhalf<<<dim, ktype, q>>>(d_x, d_y, n);
  cnrtQueueSync(q);
  cnrtMemcpy(y, d_y, n * sizeof(float), CNRT_MEM_TRANS_DIR_DEV2HOST);
  cnrtFree(d_x);
  cnrtFree(d_y);
  cnrtQueueDestroy(q);
}
"""


def test_operator_shaped_kernel_translates_to_cuda(tmp_path):
    # issue 17.1 together: __MLU_NRAM_SIZE__ in a buffer size, a file-scope NRAM buffer used by
    # a helper, __cn_scalar_sin_f32, 'if (__is_mpu()) return;' and a launch computed on the host
    from xpiler.argspec import parse_arg_specs

    src = tmp_path / "sinhalf.mlu"
    src.write_text(ISSUE17)
    out = tmp_path / "sinhalf.cu"
    rep = translate(str(src), "cuda", str(out), arg_specs=parse_arg_specs(
        ["x=random:1000", "y=zeros:1000", "n=1000"]), second_size=False)
    assert rep.status == "verified", rep.message
    text = out.read_text()
    assert "#define __MLU_NRAM_SIZE__ 768" in text and "sinf(" in text and "<<<" in text
    assert "__is_mpu" not in text and "__cn_scalar" not in text


def test_unknown_form_is_refused():
    prog = run_pass("detensorize", parse_source(BUILTINS, "bang", "ids.mlu"))
    with pytest.raises(PassRefused) as exc:
        run_pass("task_recovery", prog, form="tiles")
    assert exc.value.diagnostics[0].code == "XP-TASK-013"


STRIDED = """#include <bang.h>
#define ROWS 8
#define COLS 16
__nram__ float tile[ROWS * COLS];
__nram__ int8_t bytes[ROWS * 4];
__mlu_global__ void cols(float *x, int8_t *b, float *out, int8_t *bout) {
  // column block taskId of x [ROWS][64]: ROWS segments of COLS floats, 64 floats apart
  __memcpy(tile, x + taskId * COLS, COLS * sizeof(float), GDRAM2NRAM,
           COLS * sizeof(float), 64 * sizeof(float), ROWS - 1);
  __memcpy(out + taskId * ROWS * COLS, tile, ROWS * COLS * sizeof(float), NRAM2GDRAM);
  __memcpy(bytes, b + taskId * 4, 4 * sizeof(int8_t), GDRAM2NRAM, 4, 16, ROWS - 1);
  __memcpy(bout + taskId * ROWS * 4, bytes, ROWS * 4, NRAM2GDRAM);
}
"""


def test_typed_copies_replace_byte_copies(tmp_path):
    x = np.arange(8 * 64, dtype=np.float32)
    b = (np.arange(8 * 16) % 127).astype(np.int8)
    out = np.zeros(16 * 8 * 16, dtype=np.float32)
    bout = np.zeros(16 * 8 * 4, dtype=np.int8)
    text = check_flat(STRIDED.replace("taskId", "(taskId % 4)"), tmp_path, "cols", [x, b, out, bout], typed=True)
    assert "char *" not in text and "memmove" not in text and "memcpy" not in text
    assert "[xd1_s * 64 + xd1_i]" in text.replace("(", "").replace(")", "")


GUARDED = """#include <cstring>
extern "C" void rows(const float *x, float *y) {
  for (int o = 0; o < 8; ++o) {
    for (int k = 0; k < 3; ++k) {
      int r = o - 1 + k;
      if (r < 0 || r >= 8) continue;
      y[o * 3 + k] = x[r] * 2.0f;
    }
  }
}
"""


def test_guard_continue_turns_early_continue_into_a_guard(tmp_path):
    prog = parse_source(GUARDED, "vnni", str(tmp_path / "rows.cpp"))
    out = run_pass("guard_continue", prog)
    text = platforms.module("vnni", "backend").emit(out)
    assert "continue" not in text and "if (!(r < 0 || r >= 8))" in text.replace("((r < 0) || (r >= 8))", "r < 0 || r >= 8")
    x = np.linspace(1, 2, 8).astype(np.float32)
    want = np.full(24, -1, dtype=np.float32)
    got = want.copy()
    run_kernel(tmp_path / "rows.cpp", args=[x, want], source=GUARDED, program=prog)
    path = tmp_path / "rows2.cpp"
    path.write_text(text)
    run_kernel(path, args=[x, got], source=text, program=parse_source(text, "vnni", str(path)))
    np.testing.assert_array_equal(got, want)
    assert run_pass("guard_continue", out) is out    # nothing left to rewrite: unchanged


@pytest.mark.parametrize("name,to", [
    ("add_18_128", "cuda"),
    pytest.param("add_18_128", "hip", marks=pytest.mark.slow),
    pytest.param("softmax_512_64", "cuda", marks=pytest.mark.slow),
    pytest.param("softmax_512_64", "hip", marks=pytest.mark.slow),
    pytest.param("gemm_32_128_128", "cuda", marks=pytest.mark.slow),
    pytest.param("gemm_32_128_128", "hip", marks=pytest.mark.slow),
    pytest.param("add_4_64_256", "hip", marks=pytest.mark.slow),          # CNRT host code
    pytest.param("conv2d_1_16_16_64_64_3_3_64_1_1", "cuda", marks=pytest.mark.slow),  # continue guard
    pytest.param("gemm_64_256_128", "hip", marks=pytest.mark.slow),   # barrier, SRAM, MPU
])
def test_corpus_bang_to_gpu_is_verified(name, to, tmp_path):
    out = tmp_path / f"{name}.{'cu' if to == 'cuda' else 'hip'}"
    rep = translate(str(CORPUS / f"{name}.mlu"), to, str(out))
    assert rep.status == "verified", rep.message
    text = out.read_text()
    assert "__global__" in text and "<<<" in text
    assert "__bang_" not in text and "__nram__" not in text
    bound = [s for s in rep.steps if s.name == "loop_bind"]
    assert bound and bound[0].status == "verified"


@pytest.mark.parametrize("name,to", [
    ("add_18_128", "hip"),                                                  # tile loop
    pytest.param("avgpool_1_16_16_64_3_3_1_1", "cuda", marks=pytest.mark.slow),  # collapsed band
    pytest.param("rmsnorm_48_256", "cuda", marks=pytest.mark.slow),     # shared + global scratch
])
def test_corpus_bang_to_gpu_keeps_blocks_threads_and_on_chip_buffers(name, to, tmp_path):
    """loop_bind{levels=2}: the task loop over blocks, the element loops over the block's
    threads, the NRAM buffers in __shared__ memory (issue item 8)."""
    out = tmp_path / f"{name}.{'cu' if to == 'cuda' else 'hip'}"
    rep = translate(str(CORPUS / f"{name}.mlu"), to, str(out))
    assert rep.status == "verified", rep.message
    assert "levels=2" in rep.pipeline
    res = rep.resources["output"]
    launches = res["parallel"]["launches"]
    assert launches and all(l["grid"][0] > 1 and l["block"][0] > 32 for l in launches), launches
    assert res["on_chip_bytes"].get("shared", 0) > 0
    assert any(b["space"] == "shared" for b in res["buffers"])
    text = out.read_text()
    assert "__shared__" in text and "__syncthreads();" in text and "threadIdx.x" in text


LAST_CHUNK_SIGMOID = r"""
#include <bang.h>
#define CHUNK 2048
__mlu_global__ void sigmoid_chunks(float* dst, const float* src, int n) {
  __nram__ float buf[CHUNK];
  int chunks = (n + CHUNK - 1) / CHUNK;
  for (int c = taskId; c < chunks; c += taskDim) {
    int len = (c == chunks - 1) ? n - c * CHUNK : CHUNK;
    __memcpy(buf, src + c * CHUNK, len * sizeof(float), GDRAM2NRAM);
    __bang_active_sigmoid(buf, buf, CHUNK);
    __memcpy(dst + c * CHUNK, buf, len * sizeof(float), NRAM2GDRAM);
  }
}
"""


def test_a_kernel_entry_with_a_last_chunk_tail_translates_to_cuda(tmp_path):
    """Kernel-only BANG with the tail written `c == chunks - 1 ? n - c * CHUNK : CHUNK`: the
    extents of dst and src are n (the last chunk's case and the others'), so loop_bind sizes
    the buffers and the output verifies with inferred inputs."""
    src = tmp_path / "sig.mlu"
    src.write_text(LAST_CHUNK_SIGMOID)
    rep = translate(str(src), "cuda", str(tmp_path / "sig.cu"))
    assert rep.status == "verified", [s.to_json() for s in rep.steps]


def test_a_task_s_rows_in_tiles_with_a_bias_translates_to_cuda(tmp_path):
    """Rows split per task, a tile of 32 rows at a time (`for (r = r0; r < r1; r += 32)`, the
    tile's rows `min(r1 - r, 32)`), `__bang_cycle_add` of a bias row: the extents are
    64 * rows, the kernel entry translates with inferred inputs."""
    src = tmp_path / "bias.mlu"
    src.write_text(r"""
#include <bang.h>
#define C 64
#define ROWS_PER 32
__mlu_global__ void bias_add(float* y, const float* x, const float* bias, int rows) {
  __nram__ float nb[C];
  __nram__ float nx[ROWS_PER * C];
  __memcpy(nb, bias, C * sizeof(float), GDRAM2NRAM);
  int per = (rows + taskDim - 1) / taskDim;
  int r0 = taskId * per;
  int r1 = r0 + per < rows ? r0 + per : rows;
  for (int r = r0; r < r1; r += ROWS_PER) {
    int nr = r1 - r < ROWS_PER ? r1 - r : ROWS_PER;
    __memcpy(nx, x + r * C, nr * C * sizeof(float), GDRAM2NRAM);
    __bang_cycle_add(nx, nx, nb, nr * C, C);
    __memcpy(y + r * C, nx, nr * C * sizeof(float), NRAM2GDRAM);
  }
}
""")
    rep = translate(str(src), "cuda", str(tmp_path / "bias.cu"))
    assert rep.status == "verified", [s.to_json() for s in rep.steps]


def test_void_device_buffers_of_a_cnrt_host_and_a_scaled_loop_condition(tmp_path):
    """CNRT host code with `void *dx` buffers (raw memory: the host pointer's element type is
    what the copies carry, so devcopy drops them), and a kernel walking blocks while
    `b * BLK < n` over cluster and core ids (b < ceil(n / BLK))."""
    src = tmp_path / "exp.mlu"
    src.write_text(r"""
#include <bang.h>
#include <cnrt.h>
#define BLK 256
__mlu_entry__ void exp_kernel(float* y, const float* x, int n) {
  __nram__ float buf[BLK];
  int core = clusterId * coreDim + coreId;
  int cores = clusterDim * coreDim;
  for (int b = core; b * BLK < n; b += cores) {
    int len = n - b * BLK < BLK ? n - b * BLK : BLK;
    __memcpy(buf, x + b * BLK, len * sizeof(float), GDRAM2NRAM);
    __bang_active_exp(buf, buf, BLK);
    __memcpy(y + b * BLK, buf, len * sizeof(float), NRAM2GDRAM);
  }
}
extern "C" void exp_host(const float* x, float* y, int n) {
  cnrtQueue_t queue;
  cnrtQueueCreate(&queue);
  void *dx, *dy;
  cnrtMalloc(&dx, n * sizeof(float));
  cnrtMalloc(&dy, n * sizeof(float));
  cnrtMemcpy(dx, (void*)x, n * sizeof(float), cnrtMemcpyHostToDev);
  cnrtDim3_t dim;
  dim.x = 4; dim.y = 1; dim.z = 1;
  exp_kernel<<<dim, CNRT_FUNC_TYPE_UNION1, queue>>>((float*)dy, (const float*)dx, n);
  cnrtQueueSync(queue);
  cnrtMemcpy(y, dy, n * sizeof(float), cnrtMemcpyDevToHost);
  cnrtFree(dx); cnrtFree(dy);
  cnrtQueueDestroy(queue);
}
""")
    rep = translate(str(src), "cuda", str(tmp_path / "exp.cu"))
    assert rep.status == "verified", [s.to_json() for s in rep.steps]
    assert {s.name: s.status for s in rep.steps}["devcopy"] == "verified"


GUARDED_ROWS = r"""
#include <bang.h>
#define ROW 64
__nram__ float row[ROW];
__nram__ float acc[ROW];
__mlu_global__ void vsum3(const float *in, float *out, int batch, int height) {
  for (int r = taskId; r < batch * height; r += taskDim) {
    const int n = r / height;
    const int h = r % height;
    __bang_write_value(acc, ROW, 0.0f);
    for (int i = 0; i < 3; ++i) {
      const int ih = h + i - 1;
      if (ih < 0 || ih >= height) continue;
      __memcpy(row, in + ((size_t) n * height + ih) * ROW, ROW * sizeof(float), GDRAM2NRAM);
      __bang_add(acc, acc, row, ROW);
    }
    __memcpy(out + (size_t) r * ROW, acc, ROW * sizeof(float), NRAM2GDRAM);
  }
}
extern "C" void vsum3_host(const float *in, float *out, int batch, int height) {
  const size_t bytes = (size_t) batch * height * ROW * sizeof(float);
  cnrtQueue_t queue;
  cnrtQueueCreate(&queue);
  float *d_in, *d_out;
  cnrtMalloc((void **) &d_in, bytes);
  cnrtMalloc((void **) &d_out, bytes);
  cnrtMemcpy(d_in, (void *) in, bytes, CNRT_MEM_TRANS_DIR_HOST2DEV);
  cnrtDim3_t dim = {4, 1, 1};
  vsum3<<<dim, CNRT_FUNC_TYPE_UNION1, queue>>>(d_in, d_out, batch, height);
  cnrtQueueSync(queue);
  cnrtMemcpy(out, d_out, bytes, CNRT_MEM_TRANS_DIR_DEV2HOST);
  cnrtFree(d_in);
  cnrtFree(d_out);
  cnrtQueueDestroy(queue);
}
"""


def test_a_host_allocation_bounds_reads_under_a_guard(tmp_path):
    # the rows h - 1 .. h + 1 read under `if (ih >= height) continue;`: the analysis bound
    # (height + 1 rows) would copy a row past the caller's buffer; the source's allocation
    # (height rows) is the buffer (session 24 probe: depthwise 3x3 conv, BANG -> CUDA)
    src = tmp_path / "vsum3.mlu"
    src.write_text(GUARDED_ROWS)
    out = tmp_path / "vsum3.cu"
    report = translate(str(src), "cuda", str(out))
    assert report.status == "verified", report.message
    assert "+ 64) * sizeof(float)" not in out.read_text()
