// Subcommands of the canopy command line; each registers its options and callback on the app.
#pragma once

#include <CLI/CLI.hpp>

namespace canopy::app
{
void
RegisterDevicesCommand(CLI::App & app);
void
RegisterTrainPBTCommand(CLI::App & app);
void
RegisterClassifyCommand(CLI::App & app);
void
RegisterAugmentCommand(CLI::App & app);
void
RegisterEvaluateCommand(CLI::App & app);
void
RegisterMeshCommand(CLI::App & app);
void
RegisterExperimentCommand(CLI::App & app);
void
RegisterSegmentCommand(CLI::App & app);
void
RegisterTrainForestCommand(CLI::App & app);
void
RegisterPredictForestCommand(CLI::App & app);
void
RegisterConvertModelCommand(CLI::App & app);
void
RegisterStreamCommand(CLI::App & app);
void
RegisterScribbleSegmentCommand(CLI::App & app);
void
RegisterSynthesizeCommand(CLI::App & app);
void
RegisterTrainShapeCommand(CLI::App & app);
void
RegisterDetectCommands(CLI::App & app); // train-detector, detect, evaluate-poses
void
RegisterSegmentShapeCommand(CLI::App & app);
void
RegisterFuseShapeCommand(CLI::App & app);
} // namespace canopy::app
