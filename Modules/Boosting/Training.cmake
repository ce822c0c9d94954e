# PBT training (AdaBoost per node, Tu's soft split) and the model's JSON form; included by CMakeLists.txt.
target_sources(canopy_pbt PRIVATE
  src/canopyAdaBoost.cxx
  src/canopyPBTTraining.cxx
  src/canopyPBTModelJson.cxx
  src/canopySteerablePBT.cxx
)
# ParallelFor.h (ITK-threader loops) lives beside the kernels' CPU sources.
target_include_directories(canopy_pbt PRIVATE ${PROJECT_SOURCE_DIR}/Kernels/src)

canopy_add_gtest(PBTTrainingTest SOURCES test/PBTTrainingTest.cxx LIBS canopy_pbt LABELS cpu)
canopy_add_gtest(PBTModelJsonTest SOURCES test/PBTModelJsonTest.cxx LIBS canopy_pbt LABELS cpu)

# Steerable-feature PBTs (pose hypotheses): training on oriented-ellipsoid phantoms, the generic traversal,
# model files; and their CPU/GPU parity. The phantom helpers come from the steerable features' tests.
canopy_add_gtest(SteerablePBTTest SOURCES test/SteerablePBTTest.cxx LIBS canopy_pbt LABELS cpu)
canopy_add_gtest(SteerablePBTCudaTest SOURCES test/SteerablePBTCudaTest.cxx LIBS canopy_pbt LABELS gpu)
foreach(_test SteerablePBTTest SteerablePBTCudaTest)
  target_include_directories(${_test} PRIVATE ${PROJECT_SOURCE_DIR}/Modules/SteerableFeatures/test)
endforeach()

# Prints the training time of a demo-sized model on a synthetic matrix (docs/BENCHMARKS.md).
add_executable(PBTTrainingBenchmark test/PBTTrainingBenchmark.cxx)
target_link_libraries(PBTTrainingBenchmark PRIVATE canopy_pbt)
