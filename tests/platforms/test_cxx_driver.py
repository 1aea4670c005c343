"""The C++ front-end's clang driver (platforms/common/cxx/driver.py).

clang reads every platform's sources against the virtual device's own runtime prefix: the
project's corpus and real-world kernels parse without an error, C++ the subset reader refuses
(class templates, cooperative-groups namespaces, alternative tokens) parses too, and a real error
comes back as XP1300 at the user's line and column.
"""
import glob
from pathlib import Path

import pytest

from platforms.common.cxx import driver

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = {
    "cuda": sorted(glob.glob(str(ROOT / "tests/realworld/cuda/*.cu")))[:6],
    "hip": sorted(glob.glob(str(ROOT / "tests/realworld/hip/*.hip")))[:4],
    "bang": sorted(glob.glob(str(ROOT / "tests/realworld/bang/*.mlu")))[:4],
    "vnni": sorted(glob.glob(str(ROOT / "tests/realworld/vnni/*.cpp")))[:4],
}

CXX_CUDA = r"""
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
template <class T> struct SharedMemory {
  __device__ inline operator T *() { extern __shared__ int __smem[]; return (T *)__smem; }
};
template <class T, unsigned blockSize>
__global__ void reduce(const T *in, T *out, unsigned n) {
  cg::thread_block cta = cg::this_thread_block();
  T *s = SharedMemory<T>();
  unsigned i = blockIdx.x * blockSize + threadIdx.x;
  s[threadIdx.x] = (i < n and i >= 0) ? in[i] : T(0);
  cg::sync(cta);
  if (threadIdx.x == 0) out[blockIdx.x] = s[0];
}
extern "C" void entry(const float *in, float *out, unsigned n) {
  reduce<float, 128><<<(n + 127) / 128, 128, 128 * sizeof(float)>>>(in, out, n);
}
"""


@pytest.mark.parametrize("platform", sorted(SAMPLES))
def test_project_kernels_parse_without_error(platform):
    assert SAMPLES[platform]
    for path in SAMPLES[platform]:
        unit = driver.parse(Path(path).read_text(), path, platform)
        assert not unit.errors, [d.render() for d in unit.errors]


def test_cxx_the_subset_reader_refuses_parses_with_clang(tmp_path):
    path = tmp_path / "reduce.cu"
    path.write_text(CXX_CUDA)
    unit = driver.parse(CXX_CUDA, str(path), "cuda")
    assert not unit.errors, [d.render() for d in unit.errors]
    kernels = [c.spelling for c in unit.cursor().walk_preorder()
               if unit.in_user_file(c) and c.kind.name == "FUNCTION_TEMPLATE"]
    assert kernels == ["reduce"]


def test_an_error_is_xp1300_at_the_users_position(tmp_path):
    text = "__global__ void k(float *out) {\n  out[threadIdx.x] = undeclared_name;\n}\n"
    path = tmp_path / "bad.cu"
    path.write_text(text)
    unit = driver.parse(text, str(path), "cuda")
    assert [(d.code, d.coord.line, d.coord.col) for d in unit.errors] == [("XP1300", 2, 22)]
    assert "undeclared_name" in unit.errors[0].message


def test_bang_launch_and_memory_spaces_are_understood(tmp_path):
    text = r"""
#include <bang.h>
__mlu_entry__ void k(float *in, float *out) {
  __nram__ float buf[64];
  __memcpy(buf, in, 64 * sizeof(float), GDRAM2NRAM);
  __bang_active_relu(buf, buf, 64);
  __memcpy(out, buf, 64 * sizeof(float), NRAM2GDRAM);
}
extern "C" void entry(float *in, float *out) {
  cnrtQueue_t q; cnrtQueueCreate(&q);
  cnrtDim3_t dim = {4, 1, 1};
  k<<<dim, CNRT_FUNC_TYPE_UNION1, q>>>(in, out);
  cnrtQueueSync(q);
}
"""
    path = tmp_path / "k.mlu"
    path.write_text(text)
    unit = driver.parse(text, str(path), "bang")
    assert not unit.errors, [d.render() for d in unit.errors]
    annotated = {c.spelling for c in unit.cursor().walk_preorder() if c.kind.name == "ANNOTATE_ATTR"}
    assert "xp_nram" in annotated
