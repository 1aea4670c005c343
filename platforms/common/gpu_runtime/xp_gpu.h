// xp_gpu.h - umbrella of the CUDA/HIP virtual-device runtime (platforms/common/gpu_runtime).
// The platform prologues (platforms/cuda/runtime/xp_cuda.h, platforms/hip/runtime/xp_hip.h)
// include this after setting XP_PLATFORM_CUDA or XP_PLATFORM_HIP and XP_WARP_SIZE.
#pragma once
// Standard headers first: the qualifier macros below (e.g. __noinline__) must not reach them.
#include <algorithm>
#include <array>
#include <cassert>
#include <cfloat>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <iostream>
#include <limits>
#include <map>
#include <memory>
#include <numeric>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "xp_core.h"
#include "xp_gpu_types.h"
#include "xp_gpu_half.h"
#include "xp_gpu_sched.h"
#include "xp_gpu_device.h"
#include "xp_gpu_host.h"
#include "xp_mfma.h"
#include "xp_coop.h"
