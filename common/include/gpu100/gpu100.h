// Everything a day needs. Light headers only: the CLI, JSON and formatting libraries are
// compiled once in common/, so nvcc's front end never sees them.
#pragma once
#include "gpu100/bench.h"
#include "gpu100/buffer.h"
#include "gpu100/check.h"
#include "gpu100/cli.h"
#include "gpu100/device.h"
#include "gpu100/launch.h"
#include "gpu100/random.h"
#include "gpu100/report.h"
#include "gpu100/util.h"
#include "gpu100/verify.h"
