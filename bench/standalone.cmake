# Project hook for builds whose top CMakeLists does not add bench/ (yet):
#   cmake -S . -B build -DCMAKE_PROJECT_petscspmv_INCLUDE=$PWD/bench/standalone.cmake
# runs bench/CMakeLists.txt at the end of the top directory, as
#   if(PETSCSPMV_HAVE_CUDA) add_subdirectory(bench) endif()
# in the top CMakeLists would (the target is then build/spmv_bench instead of build/bench/spmv_bench).
cmake_language(DEFER DIRECTORY ${CMAKE_SOURCE_DIR} CALL include ${CMAKE_CURRENT_LIST_DIR}/CMakeLists.txt)
