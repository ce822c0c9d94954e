# Dense PBT evaluation (canopyPBTEvaluator: CPU and CUDA, z-slabs) and its tests.
# Included from Modules/Boosting/CMakeLists.txt.
target_sources(canopy_pbt PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/src/canopyPBTEvaluator.cxx
  ${CMAKE_CURRENT_LIST_DIR}/src/canopyPBTEvaluatorRandom.cxx)

canopy_add_gtest(PBTEvaluatorTest SOURCES ${CMAKE_CURRENT_LIST_DIR}/test/PBTEvaluatorTest.cxx
  LIBS canopy_pbt LABELS cpu)
canopy_add_gtest(PBTEvaluatorCudaTest SOURCES ${CMAKE_CURRENT_LIST_DIR}/test/PBTEvaluatorCudaTest.cxx
  LIBS canopy_pbt LABELS gpu)
