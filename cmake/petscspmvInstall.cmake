# Install rules: `cmake --install build --prefix P` installs
#   P/include/petscspmv.h, P/include/petscspmvversion.h          (the public headers)
#   P/lib/libpetscspmv.so -> .so.<major> -> .so.<major>.<minor>.<subminor>   (RUNPATH: PETSc's lib dir, $ORIGIN)
#   P/lib/pkgconfig/petscspmv.pc                                   (Requires: PETSc)
#   P/lib/cmake/petscspmv/petscspmv{Config,ConfigVersion,Targets,Targets-<config>}.cmake
#                                                                  (find_package(petscspmv CONFIG), target petscspmv::petscspmv)
#   P/share/doc/petscspmv/manual/*.md                              (the man pages, docs/manual: CMAKE_INSTALL_DOCDIR)
#   P/share/petscspmv/tutorials/{ex1.c,ex2.c,*.h}                  (the tutorials' sources: CMAKE_INSTALL_DATADIR)
# tests/install checks the installed tree with a downstream program (pkg-config and find_package).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(PETSCSPMV_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/petscspmv)

install(TARGETS petscspmv EXPORT petscspmvTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
# include/petscspmv.h needs only PETSc's headers and the generated petscspmvversion.h
install(FILES ${PROJECT_SOURCE_DIR}/include/petscspmv.h ${PROJECT_BINARY_DIR}/include/petscspmvversion.h
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})

# ------------------------------------------------------------------ CMake package
# The exported target links petscspmv::petsc (see src/petsc/CMakeLists.txt), which the config
# file defines from the PETSc found here: its include dirs and the absolute path of libpetsc,
# the same library the RUNPATH of libpetscspmv points at, so a downstream project cannot pick up
# another PETSc by accident (and needs no pkg-config), plus MPI's C target (find_dependency(MPI)).
get_target_property(PETSCSPMV_PETSC_INCLUDE_DIRS PkgConfig::PETSC INTERFACE_INCLUDE_DIRECTORIES)
get_target_property(PETSCSPMV_PETSC_LINK_LIBRARIES PkgConfig::PETSC INTERFACE_LINK_LIBRARIES)
get_target_property(PETSCSPMV_PETSC_COMPILE_OPTIONS PkgConfig::PETSC INTERFACE_COMPILE_OPTIONS)
get_target_property(PETSCSPMV_PETSC_LINK_OPTIONS PkgConfig::PETSC INTERFACE_LINK_OPTIONS)
foreach(_v PETSCSPMV_PETSC_INCLUDE_DIRS PETSCSPMV_PETSC_LINK_LIBRARIES PETSCSPMV_PETSC_COMPILE_OPTIONS PETSCSPMV_PETSC_LINK_OPTIONS)
  if(NOT ${_v})
    set(${_v} "")
  endif()
endforeach()
# PETSc's lib dir, where libpetsc is (the RUNPATH has it through INSTALL_RPATH_USE_LINK_PATH)
set(PETSCSPMV_PETSC_LIBDIR "")
foreach(_l ${PETSCSPMV_PETSC_LINK_LIBRARIES})
  if(_l MATCHES "/libpetsc[^/]*\\.so[^/]*$")
    get_filename_component(PETSCSPMV_PETSC_LIBDIR "${_l}" DIRECTORY)
  endif()
endforeach()
if(NOT PETSCSPMV_PETSC_LIBDIR)
  message(FATAL_ERROR "PkgConfig::PETSC links no libpetsc (${PETSCSPMV_PETSC_LINK_LIBRARIES}): cannot record PETSc in petscspmvConfig.cmake")
endif()
install(EXPORT petscspmvTargets NAMESPACE petscspmv:: FILE petscspmvTargets.cmake DESTINATION ${PETSCSPMV_INSTALL_CMAKEDIR})
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/petscspmvConfig.cmake.in ${PROJECT_BINARY_DIR}/cmake/petscspmvConfig.cmake
  INSTALL_DESTINATION ${PETSCSPMV_INSTALL_CMAKEDIR})
# 0.x: a minor release may change the API, so only the same major.minor is compatible
write_basic_package_version_file(${PROJECT_BINARY_DIR}/cmake/petscspmvConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/cmake/petscspmvConfig.cmake ${PROJECT_BINARY_DIR}/cmake/petscspmvConfigVersion.cmake
  DESTINATION ${PETSCSPMV_INSTALL_CMAKEDIR})

# ------------------------------------------------------------------ pkg-config
# The prefix is the one given at install time (cmake --install --prefix P): the template is
# filled now except for @PETSCSPMV_PC_PREFIX@, which is filled when installing.
foreach(_d LIBDIR INCLUDEDIR)
  if(IS_ABSOLUTE "${CMAKE_INSTALL_${_d}}")
    set(PETSCSPMV_PC_${_d} "${CMAKE_INSTALL_${_d}}")
  else()
    set(PETSCSPMV_PC_${_d} "\${prefix}/${CMAKE_INSTALL_${_d}}")
  endif()
endforeach()
# prefix relative to the .pc file (pkg-config's ${pcfiledir}): a moved prefix still works
set(PETSCSPMV_PC_PREFIX "@PETSCSPMV_PC_PREFIX@")
if(NOT IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
  file(RELATIVE_PATH _pc_up "/p/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/p")
  set(PETSCSPMV_PC_PREFIX "\${pcfiledir}/${_pc_up}")
endif()
configure_file(${CMAKE_CURRENT_LIST_DIR}/petscspmv.pc.in ${PROJECT_BINARY_DIR}/cmake/petscspmv.pc.in @ONLY)
install(CODE "
  set(PETSCSPMV_PC_PREFIX \"\${CMAKE_INSTALL_PREFIX}\")
  configure_file(\"${PROJECT_BINARY_DIR}/cmake/petscspmv.pc.in\" \"${PROJECT_BINARY_DIR}/cmake/petscspmv.pc\" @ONLY)")
install(FILES ${PROJECT_BINARY_DIR}/cmake/petscspmv.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

# ------------------------------------------------------------------ documentation and tutorials
# The man pages as rendered in docs/manual by scripts/manpages.py (the test manpages_up_to_date
# keeps them in step with the sources); their "Location:" links point into the source tree.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/manual/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/manual
  FILES_MATCHING PATTERN "*.md")
# The tutorials' sources, to read and to copy from (built with the project, not from here):
# the programs and their headers, and a README.md when the folder has one.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/tutorials/ DESTINATION ${CMAKE_INSTALL_DATADIR}/petscspmv/tutorials
  FILES_MATCHING PATTERN "*.c" PATTERN "*.h" PATTERN "README.md")
