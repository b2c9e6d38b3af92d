// The device copies of every format (PETSc-free): one include per format, for the glue and
// the tests that handle all of them.
#pragma once
#include "formats/packsell/packsell_device.hpp"
#include "formats/rgcsr/rgcsr_device.hpp"
#include "formats/packsell/packsell_device_build.hpp"
#include "formats/rgcsr/rgcsr_device_build.hpp"
