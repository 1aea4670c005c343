/* Declarations of the OpenMP runtime API for clang's reading of C++ sources (platforms/common/cxx):
   the clang resource headers bundled with the clang-tidy wheel have no omp.h. Searched after
   every other include directory (-idirafter), so a real omp.h wins; never used to build. */
#ifndef XPILER_CXX_OMP_H
#define XPILER_CXX_OMP_H
#ifdef __cplusplus
extern "C" {
#endif
int omp_get_thread_num(void);
int omp_get_num_threads(void);
int omp_get_max_threads(void);
int omp_get_num_procs(void);
int omp_in_parallel(void);
void omp_set_num_threads(int);
double omp_get_wtime(void);
#ifdef __cplusplus
}
#endif
#endif
