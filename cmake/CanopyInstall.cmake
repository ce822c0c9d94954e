# Install rules and the exported CMake package (find_package(Canopy) -> Canopy::<Module> targets).
# Included from the root CMakeLists.txt before the subdirectories; every library calls
# canopy_install_target() after its add_library / add_executable.
#
# Layout under the prefix (GNUInstallDirs):
#   bin/canopy
#   lib/libcanopy_*.a
#   include/canopy-X.Y/            module headers, canopyConfigure.h, canopy/ (kernel headers)
#   lib/cmake/Canopy-X.Y/          CanopyConfig.cmake, CanopyConfigVersion.cmake, CanopyTargets*.cmake
#   share/doc/Canopy/MODEL_FORMAT.md
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(CANOPY_INSTALL_INCLUDEDIR ${CMAKE_INSTALL_INCLUDEDIR}/canopy-${PROJECT_VERSION_MAJOR}.${PROJECT_VERSION_MINOR})
set(CANOPY_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/Canopy-${PROJECT_VERSION_MAJOR}.${PROJECT_VERSION_MINOR})

# canopy_install_target(<target> <ExportName>)
# Exports <target> as Canopy::<ExportName> and installs it. For a library, also installs the
# headers of the calling module's include/ folder and adds the installed include directory to the
# target's interface (its build-tree include directories are wrapped in $<BUILD_INTERFACE:...>).
function(canopy_install_target target export_name)
  set_target_properties(${target} PROPERTIES EXPORT_NAME ${export_name})
  get_target_property(_type ${target} TYPE)
  if(_type STREQUAL "INTERFACE_LIBRARY")
    target_include_directories(${target} INTERFACE $<INSTALL_INTERFACE:${CANOPY_INSTALL_INCLUDEDIR}>)
  elseif(NOT _type STREQUAL "EXECUTABLE")
    target_include_directories(${target} PUBLIC $<INSTALL_INTERFACE:${CANOPY_INSTALL_INCLUDEDIR}>)
  endif()
  install(TARGETS ${target} EXPORT CanopyTargets
    ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT Development
    LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT Runtime
    RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT Runtime)
  if(NOT _type STREQUAL "EXECUTABLE" AND EXISTS ${CMAKE_CURRENT_SOURCE_DIR}/include)
    install(DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}/include/ DESTINATION ${CANOPY_INSTALL_INCLUDEDIR}
      COMPONENT Development FILES_MATCHING PATTERN "*.h" PATTERN "*.hxx")
  endif()
endfunction()

install(FILES ${CMAKE_BINARY_DIR}/include/canopyConfigure.h DESTINATION ${CANOPY_INSTALL_INCLUDEDIR}
  COMPONENT Development)
install(FILES ${PROJECT_SOURCE_DIR}/docs/MODEL_FORMAT.md DESTINATION ${CMAKE_INSTALL_DOCDIR}
  COMPONENT Runtime)

# Export sets are resolved at generate time, so the install(TARGETS) calls in the subdirectories
# that follow fill this one.
install(EXPORT CanopyTargets NAMESPACE Canopy:: DESTINATION ${CANOPY_INSTALL_CMAKEDIR}
  COMPONENT Development)

# The config file is written once every module has been configured: Modules/Mesh records the VTK
# components it uses in the global property CANOPY_VTK_COMPONENTS.
function(_canopy_write_package_config)
  get_property(CANOPY_CONFIG_VTK_COMPONENTS GLOBAL PROPERTY CANOPY_VTK_COMPONENTS)
  # CUDAToolkit: cudart is linked statically into the consumer, so it needs the toolkit's
  # libcudart_static, of the version the kernels were compiled with or newer.
  set(CANOPY_CONFIG_CUDA_VERSION "")
  set(CANOPY_CONFIG_CUDA_ROOT "")
  set(CANOPY_CONFIG_CUDA_ARCHITECTURES "")
  if(CANOPY_USE_CUDA)
    set(CANOPY_CONFIG_CUDA_VERSION ${CUDAToolkit_VERSION_MAJOR}.${CUDAToolkit_VERSION_MINOR})
    get_filename_component(CANOPY_CONFIG_CUDA_ROOT ${CUDAToolkit_BIN_DIR} DIRECTORY)
    set(CANOPY_CONFIG_CUDA_ARCHITECTURES "${CMAKE_CUDA_ARCHITECTURES}")
  endif()
  configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/CanopyConfig.cmake.in
    ${PROJECT_BINARY_DIR}/CanopyConfig.cmake
    INSTALL_DESTINATION ${CANOPY_INSTALL_CMAKEDIR}
    PATH_VARS CANOPY_INSTALL_INCLUDEDIR)
endfunction()
cmake_language(DEFER CALL _canopy_write_package_config)

# 0.x: a minor release may change the API, so only the same major.minor is compatible.
if(PROJECT_VERSION_MAJOR EQUAL 0)
  set(_canopy_compatibility SameMinorVersion)
else()
  set(_canopy_compatibility SameMajorVersion)
endif()
write_basic_package_version_file(${PROJECT_BINARY_DIR}/CanopyConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY ${_canopy_compatibility})
install(FILES ${PROJECT_BINARY_DIR}/CanopyConfig.cmake ${PROJECT_BINARY_DIR}/CanopyConfigVersion.cmake
  DESTINATION ${CANOPY_INSTALL_CMAKEDIR} COMPONENT Development)
