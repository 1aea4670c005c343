// shim: cooperative_groups::reduce is in platforms/common/gpu_runtime/xp_coop.h
#pragma once
#include "../xp_cuda.h"
