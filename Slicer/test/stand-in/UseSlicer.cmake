set(SlicerExecutionModel_DEFAULT_CLI_RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/lib/Slicer-stand-in/cli-modules)
set(SlicerExecutionModel_DEFAULT_CLI_LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/lib/Slicer-stand-in/cli-modules)
set(SlicerExecutionModel_DEFAULT_CLI_ARCHIVE_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/lib/Slicer-stand-in/cli-modules)
set(SlicerExecutionModel_DEFAULT_CLI_INSTALL_RUNTIME_DESTINATION lib/Slicer-stand-in/cli-modules)
