// shim: the CUDA virtual-device prologue provides everything (platforms/cuda/runtime/xp_cuda.h)
#pragma once
#include "xp_cuda.h"
