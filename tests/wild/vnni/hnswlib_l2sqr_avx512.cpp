// Copyright (c) hnswlib authors (nmslib/hnswlib)
// (hnswlib; the original file has no header: the project is under the Apache License 2.0)
//
// Licensed under the Apache License, Version 2.0 (the "License");
// you may not use this file except in compliance with the License.
// You may obtain a copy of the License at
//
//     http://www.apache.org/licenses/LICENSE-2.0
//
// Unless required by applicable law or agreed to in writing, software
// distributed under the License is distributed on an "AS IS" BASIS,
// WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
// See the License for the specific language governing permissions and
// limitations under the License.
//
// xpiler wild set: vnni/hnswlib_l2sqr_avx512.cpp
// origin: hnswlib 0.8.0 (PyPI sdist), licence Apache-2.0
//   hnswlib-0.8.0/hnswlib/space_l2.h lines 25-54 (verbatim)
// the USE_AVX512 branch of hnswlib's L2 space; qty_ptr points at the dimension (size_t)
// Lines between 'wild: added' markers are not from the original (includes and macros the
// original gets from its framework headers, and the extern "C" entry replacing the
// framework's tensor plumbing); everything else is copied verbatim.

// ---- wild: added ----
#include <immintrin.h>
#include <stddef.h>
#define PORTABLE_ALIGN64 __attribute__((aligned(64)))
// ---- wild: end added ----

static float
L2SqrSIMD16ExtAVX512(const void *pVect1v, const void *pVect2v, const void *qty_ptr) {
    float *pVect1 = (float *) pVect1v;
    float *pVect2 = (float *) pVect2v;
    size_t qty = *((size_t *) qty_ptr);
    float PORTABLE_ALIGN64 TmpRes[16];
    size_t qty16 = qty >> 4;

    const float *pEnd1 = pVect1 + (qty16 << 4);

    __m512 diff, v1, v2;
    __m512 sum = _mm512_set1_ps(0);

    while (pVect1 < pEnd1) {
        v1 = _mm512_loadu_ps(pVect1);
        pVect1 += 16;
        v2 = _mm512_loadu_ps(pVect2);
        pVect2 += 16;
        diff = _mm512_sub_ps(v1, v2);
        // sum = _mm512_fmadd_ps(diff, diff, sum);
        sum = _mm512_add_ps(sum, _mm512_mul_ps(diff, diff));
    }

    _mm512_store_ps(TmpRes, sum);
    float res = TmpRes[0] + TmpRes[1] + TmpRes[2] + TmpRes[3] + TmpRes[4] + TmpRes[5] + TmpRes[6] +
            TmpRes[7] + TmpRes[8] + TmpRes[9] + TmpRes[10] + TmpRes[11] + TmpRes[12] +
            TmpRes[13] + TmpRes[14] + TmpRes[15];

    return (res);
}

// ---- wild: added: entry ----
extern "C" void hnswlib_l2sqr(const float * a, const float * b, int dim, float * result) {
    size_t qty = (size_t) dim;
    result[0] = L2SqrSIMD16ExtAVX512(a, b, &qty);
}
// ---- wild: end added ----
