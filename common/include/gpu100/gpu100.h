// Everything a day needs; a day's main starts with gpu100::run (run.h), whose contract
// docs/CONTRACT.md describes. Light headers only: the CLI, JSON and formatting libraries are
// compiled once in common/, so nvcc's front end never sees them.
#pragma once
#include "gpu100/bench.h"
#include "gpu100/buffer.h"
#include "gpu100/check.h"
#include "gpu100/cli.h"
#include "gpu100/device.h"
#include "gpu100/launch.h"
#include "gpu100/pinned.h"
#include "gpu100/random.h"
#include "gpu100/report.h"
#include "gpu100/run.h"
#include "gpu100/util.h"
#include "gpu100/verify.h"
