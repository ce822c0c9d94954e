# Stand-in for a Slicer build tree (Slicer/test/configure-with-stand-in.sh): only what Slicer/CMakeLists.txt
# and canopy_add_slicer_cli read. It proves the extension project configures; it is not Slicer.
set(Slicer_USE_FILE ${CMAKE_CURRENT_LIST_DIR}/UseSlicer.cmake)
set(Slicer_EXTENSION_GENERATE_CONFIG ${CMAKE_CURRENT_LIST_DIR}/empty.cmake)
set(Slicer_EXTENSION_CPACK ${CMAKE_CURRENT_LIST_DIR}/empty.cmake)
