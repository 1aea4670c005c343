// shim: cooperative_groups::memcpy_async / wait / wait_prior are in platforms/common/gpu_runtime/xp_coop.h
#pragma once
#include "../xp_cuda.h"
