// canopyWritePosePhantoms DIR FIRST_SEED COUNT: writes the pose detector's test phantoms
// (Modules/PoseDetection/test/PoseTestPhantoms.h: synthesized T1-like heads of 60^3 voxels of 1.5 mm
// holding an ellipsoidal structure "large", label 2) as DIR/pose-SEED.nrrd and DIR/pose-SEED-label.nrrd,
// so the Slicer module driver can train a detector and a shape model with the canopy command and run
// CanopyDetect and CanopySegmentShape on a held-out subject.
#include "../../../Modules/PoseDetection/test/PoseTestPhantoms.h"

#include "itkImageFileWriter.h"

#include <iostream>
#include <string>

int
main(int argc, char ** argv)
{
  if (argc != 4)
  {
    std::cerr << "usage: canopyWritePosePhantoms DIR FIRST_SEED COUNT\n";
    return 2;
  }
  const std::string dir = argv[1];
  const auto        first = std::stoull(argv[2]), count = std::stoull(argv[3]);
  try
  {
    for (auto seed = first; seed < first + count; ++seed)
    {
      const auto        subject = canopy::posetest::MakeSubject(seed, false);
      const std::string stem = dir + "/pose-" + std::to_string(seed);
      itk::WriteImage(subject.image, stem + ".nrrd");
      itk::WriteImage(subject.labels, stem + "-label.nrrd");
    }
  }
  catch (const std::exception & e)
  {
    std::cerr << "canopyWritePosePhantoms: " << e.what() << '\n';
    return 1;
  }
  return 0;
}
