// The formats of the library: one line each. A new format is its folder under src/formats
// (layout header, builder, host SpMV, CUDA kernels, module) and a line here; the PETSc glue
// iterates over this list (src/petsc/format_options.hpp). Public type names and setters are in
// include/petscspmv.h.
#pragma once
#include "formats/packsell/packsell_module.hpp"
#include "formats/rgcsr/rgcsr_module.hpp"

namespace pspmv
{

template <class... Module>
struct ModuleList {
};

using Modules = ModuleList<RgCsrModule, PackSellModule>;

} // namespace pspmv
