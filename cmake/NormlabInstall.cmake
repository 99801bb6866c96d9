# `cmake --install BUILD --prefix P` puts normlab under P as a CMake package:
#   P/include/normlab/<folder>/*.h      headers, included as "core/tensor.h", "nn/norms.h", ...
#   P/lib/libnormlab_*.a                the libraries
#   P/lib/cmake/normlab/                normlabConfig.cmake, its version file and the exported targets
#                                       normlab::core, autograd, nn, optim, data, io, config, dist, train,
#                                       sweep, hf, plot, experiments (all seven), stats, xiong
#                                       (and normlab::cuda in a CUDA build)
#   P/bin/normlab                       the command line
# A program then writes find_package(normlab REQUIRED) and links normlab::nn (examples/ does).
# In the build tree each library sees only its own folder's headers (include_roots/); installed,
# they share one root, include/normlab.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(NORMLAB_INSTALL_INCLUDEDIR ${CMAKE_INSTALL_INCLUDEDIR}/normlab)
set(NORMLAB_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/normlab)

# Installs a library target into the export set normlabTargets.
function(normlab_install_library target)
  install(TARGETS ${target} EXPORT normlabTargets
          ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
          LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
endfunction()

# Installs FOLDER's headers (not its cuda/ kernels or its configs/) under include/normlab/FOLDER.
function(normlab_install_headers folder)
  install(DIRECTORY ${CMAKE_SOURCE_DIR}/${folder}/ DESTINATION ${NORMLAB_INSTALL_INCLUDEDIR}/${folder}
          FILES_MATCHING PATTERN "*.h"
          PATTERN "cuda" EXCLUDE PATTERN "configs" EXCLUDE)
endfunction()

# After every library is defined: the export set, normlabConfig.cmake and its version file.
function(normlab_install_package)
  install(EXPORT normlabTargets NAMESPACE normlab:: DESTINATION ${NORMLAB_INSTALL_CMAKEDIR})
  configure_package_config_file(${CMAKE_SOURCE_DIR}/cmake/normlabConfig.cmake.in
                                ${CMAKE_BINARY_DIR}/normlabConfig.cmake
                                INSTALL_DESTINATION ${NORMLAB_INSTALL_CMAKEDIR})
  write_basic_package_version_file(${CMAKE_BINARY_DIR}/normlabConfigVersion.cmake
                                   VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
  install(FILES ${CMAKE_BINARY_DIR}/normlabConfig.cmake ${CMAKE_BINARY_DIR}/normlabConfigVersion.cmake
          DESTINATION ${NORMLAB_INSTALL_CMAKEDIR})
endfunction()
