// canopy: GPU tree ensembles for medical volumes, from the command line.
#include "canopy/Device.h"
#include "canopy/DeviceSupport.h"
#include "canopyCommands.h"
#include "canopyConfigure.h"
#include "canopyMpiCollective.h"
#include "canopyNcclReduction.h"
#include "itkMacro.h"

#include <iomanip>
#include <iostream>

namespace canopy::app
{
void
RegisterDevicesCommand(CLI::App & app)
{
  auto * command = app.add_subcommand("devices", "List the CUDA devices Canopy can use, and MPI and NCCL");
  command->callback([] {
    std::cout << "Canopy " << CANOPY_VERSION_STRING << ", CUDA support: " << (CudaCompiledIn() ? "yes" : "no");
    if (CudaCompiledIn())
    {
      std::cout << " (built for " << DescribeCudaArchitectures(CompiledCudaArchitectures()) << ")";
    }
    std::cout << '\n';
    // what --distributed runs over (docs/DISTRIBUTED.md), before the devices: it holds without a GPU too
    std::cout << "Distributed runs: MPI "
              << (MpiCompiledIn() ? "yes (mpirun -np N canopy ... --distributed)" : "no (built without MPI)")
              << "; GPU sums: "
              << (NcclReduction::Available() ? NcclReduction::Describe()
                                             : "through host memory (" + NcclReduction::Describe() + ")")
              << '\n';
    const auto devices = QueryCudaDevices();
    if (devices.empty())
    {
      std::cout << "No usable CUDA device: " << WhyNoCudaDevice() << "; commands run on the CPU.\n";
      return;
    }
    bool anyUsable = false;
    for (const auto & d : devices)
    {
      std::cout << "cuda:" << d.index << "  " << d.name << "  compute " << d.computeMajor << '.' << d.computeMinor
                << "  " << d.multiprocessors << " SMs  " << std::fixed << std::setprecision(1)
                << d.totalMemoryBytes / 1073741824.0 << " GiB (" << d.freeMemoryBytes / 1073741824.0 << " free)\n"
                << "        " << (d.kernelsUsable ? "runs " : "NOT USABLE: ") << d.kernelSupport << '\n';
      anyUsable = anyUsable || d.kernelsUsable;
    }
    if (!anyUsable)
    {
      std::cout << "No device has code in this build; --device auto runs on the CPU and --device cuda fails.\n";
    }
  });
}
} // namespace canopy::app

namespace
{
/** The error as one printable line: control characters (newlines in ITK descriptions, bytes of a
 * binary file quoted by a parser) become '?', so the message stays one line on any terminal. */
std::string
OneLine(std::string message)
{
  for (char & c : message)
  {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte == 0x7f)
      c = '?';
  }
  return message;
}
} // namespace

int
main(int argc, char ** argv)
{
  canopy::RegisterMpiCollective(); // --distributed runs under mpirun (MPI starts only when asked)
  CLI::App app{ "Canopy " CANOPY_VERSION_STRING ": GPU tree ensembles for medical volume detection" };
  app.set_version_flag("--version", std::string("canopy ") + CANOPY_VERSION_STRING);
  app.require_subcommand(1);
  canopy::app::RegisterDevicesCommand(app);
  canopy::app::RegisterTrainPBTCommand(app);
  canopy::app::RegisterClassifyCommand(app);
  canopy::app::RegisterAugmentCommand(app);
  canopy::app::RegisterEvaluateCommand(app);
  canopy::app::RegisterMeshCommand(app);
  canopy::app::RegisterExperimentCommand(app);
  canopy::app::RegisterSegmentCommand(app);
  canopy::app::RegisterTrainForestCommand(app);
  canopy::app::RegisterPredictForestCommand(app);
  canopy::app::RegisterConvertModelCommand(app);
  canopy::app::RegisterStreamCommand(app);
  canopy::app::RegisterScribbleSegmentCommand(app);
  canopy::app::RegisterSynthesizeCommand(app);
  canopy::app::RegisterTrainShapeCommand(app);
  canopy::app::RegisterDetectCommands(app);
  canopy::app::RegisterSegmentShapeCommand(app);
  canopy::app::RegisterFuseShapeCommand(app);
  try
  {
    app.parse(argc, argv);
  }
  catch (const CLI::ParseError & e)
  {
    return app.exit(e);
  }
  catch (const itk::ExceptionObject & e)
  {
    std::cerr << "canopy: error: " << OneLine(e.GetDescription()) << '\n';
    return 1;
  }
  catch (const std::exception & e)
  {
    std::cerr << "canopy: error: " << OneLine(e.what()) << '\n';
    return 1;
  }
  return 0;
}
