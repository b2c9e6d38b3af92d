// The device side of every format (PETSc-free): each format's device copy and device builder,
// one include per format, beside registry.hpp (its host side), for the glue and the tests that
// handle all of them. It lives here, not in src/cuda, because the formats build on src/cuda's
// shared device pieces: the includes run one way (scripts/check_layers.py).
#pragma once
#include "formats/packsell/packsell_device.hpp"
#include "formats/rgcsr/rgcsr_device.hpp"
#include "formats/packsell/packsell_device_build.hpp"
#include "formats/rgcsr/rgcsr_device_build.hpp"
