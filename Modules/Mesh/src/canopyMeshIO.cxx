#include "canopyMeshIO.h"

#include "canopy/Errors.h"

#include <vtkCommand.h>
#include <vtkFieldData.h>
#include <vtkNew.h>
#include <vtkPoints.h>
#include <vtkPolyDataReader.h>
#include <vtkPolyDataWriter.h>
#include <vtkSTLReader.h>
#include <vtkSTLWriter.h>
#include <vtkStringArray.h>
#include <vtkTriangleFilter.h>
#include <vtkUnsignedCharArray.h>
#include <vtkXMLPolyDataReader.h>
#include <vtkXMLPolyDataWriter.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <unistd.h>

namespace canopy
{
namespace
{
const char * kHeader = "Canopy output. SPACE=LPS"; // Slicer's "<text>. SPACE=<frame>" convention

// VTK reports errors through events rather than exceptions: keep the last message for ours.
class ErrorObserver : public vtkCommand
{
public:
  static ErrorObserver * New() { return new ErrorObserver; }
  void                   Execute(vtkObject *, unsigned long, void * data) override
  {
    m_Message = data ? static_cast<const char *>(data) : "unknown VTK error";
  }
  const std::string & Message() const { return m_Message; }

private:
  std::string m_Message;
};

std::string
LowerExtension(const std::string & path)
{
  std::string ext = std::filesystem::path(path).extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  return ext;
}

// One-line form of a VTK message (they span lines and name the C++ object).
std::string
Brief(const std::string & message)
{
  std::string s = message;
  std::replace(s.begin(), s.end(), '\n', ' ');
  const auto colon = s.find(": ");
  return colon != std::string::npos && s.rfind("ERROR", 0) == 0 ? s.substr(colon + 2) : s;
}

void
FlipRASToLPS(vtkPolyData * mesh)
{
  vtkPoints * points = mesh->GetPoints();
  for (vtkIdType i = 0; i < points->GetNumberOfPoints(); ++i)
  {
    double p[3];
    points->GetPoint(i, p);
    points->SetPoint(i, -p[0], -p[1], p[2]);
  }
  // (-x, -y, z) is a rotation: normals keep their orientation, other point vectors are not kept.
}
} // namespace

std::string
CoordinateSpaceInHeader(const std::string & header)
{
  std::string upper = header;
  std::transform(upper.begin(), upper.end(), upper.begin(), [](unsigned char c) { return char(std::toupper(c)); });
  if (upper.find("SPACE=RAS") != std::string::npos)
    return "RAS";
  if (upper.find("SPACE=LPS") != std::string::npos)
    return "LPS";
  return "";
}

void
RequireMeshExtension(const std::string & path, const std::string & parameter)
{
  const std::string ext = LowerExtension(path);
  if (ext != ".vtk" && ext != ".vtp" && ext != ".stl")
    CANOPY_THROW(parameter << " " << path << ": unknown mesh format '" << ext << "' (use .vtk, .vtp or .stl)");
}

void
WriteMesh(vtkPolyData * mesh, const std::string & path, const std::string & parameter)
{
  if (!mesh)
    CANOPY_THROW(parameter << " " << path << ": no mesh to write");
  RequireMeshExtension(path, parameter);
  const std::string           ext = LowerExtension(path);
  const std::filesystem::path target(path);
  const std::string           temporary =
    (target.parent_path() / (target.stem().string() + ".tmp-" + std::to_string(::getpid()) + ext)).string();
  vtkNew<ErrorObserver> errors;
  int                   ok = 0;
  if (ext == ".vtk")
  {
    vtkNew<vtkPolyDataWriter> writer;
    writer->AddObserver(vtkCommand::ErrorEvent, errors);
    writer->SetInputData(mesh);
    writer->SetFileName(temporary.c_str());
    writer->SetFileVersion(vtkPolyDataWriter::VTK_LEGACY_READER_VERSION_4_2); // 9.1 writes 5.1 otherwise
    writer->SetFileTypeToBinary();
    writer->SetHeader(kHeader);
    ok = writer->Write();
  }
  else if (ext == ".vtp")
  {
    vtkNew<vtkPolyData> copy; // shallow: the SPACE field must not be added to the caller's mesh
    copy->ShallowCopy(mesh);
    vtkNew<vtkFieldData> fields;
    if (mesh->GetFieldData())
      fields->ShallowCopy(mesh->GetFieldData());
    fields->RemoveArray("SPACE");
    vtkNew<vtkStringArray> space;
    space->SetName("SPACE");
    space->InsertNextValue("LPS");
    fields->AddArray(space);
    copy->SetFieldData(fields);
    vtkNew<vtkXMLPolyDataWriter> writer;
    writer->AddObserver(vtkCommand::ErrorEvent, errors);
    writer->SetInputData(copy);
    writer->SetFileName(temporary.c_str());
    writer->SetDataModeToAppended();
    writer->SetCompressorTypeToZLib();
    ok = writer->Write();
  }
  else
  {
    vtkNew<vtkTriangleFilter> triangles;
    triangles->SetInputData(mesh);
    vtkNew<vtkSTLWriter> writer;
    writer->AddObserver(vtkCommand::ErrorEvent, errors);
    writer->SetInputConnection(triangles->GetOutputPort());
    writer->SetFileName(temporary.c_str());
    writer->SetFileTypeToBinary();
    writer->SetHeader(kHeader);
    ok = writer->Write();
  }
  std::error_code ignored;
  if (!ok || !errors->Message().empty())
  {
    std::filesystem::remove(temporary, ignored);
    CANOPY_THROW(parameter << " " << path << ": cannot write the mesh ("
                           << (errors->Message().empty() ? "writer failed" : Brief(errors->Message())) << ")");
  }
  std::error_code renamed;
  std::filesystem::rename(temporary, path, renamed);
  if (renamed)
  {
    std::filesystem::remove(temporary, ignored);
    CANOPY_THROW(parameter << " " << path << ": cannot rename " << temporary << " to it (" << renamed.message() << ")");
  }
}

MeshFile
ReadMesh(const std::string & path, MeshSpace untagged, const std::string & parameter)
{
  if (!std::filesystem::is_regular_file(path))
    CANOPY_THROW(parameter << " " << path << ": no such file");
  const std::string     ext = LowerExtension(path);
  vtkNew<ErrorObserver> errors;
  MeshFile              result;
  if (ext == ".vtk")
  {
    vtkNew<vtkPolyDataReader> reader;
    reader->AddObserver(vtkCommand::ErrorEvent, errors);
    reader->SetFileName(path.c_str());
    if (!reader->IsFilePolyData())
      CANOPY_THROW(parameter << " " << path << ": not a legacy VTK file of polygonal data (DATASET POLYDATA)");
    reader->Update();
    result.mesh = reader->GetOutput();
    result.spaceInFile = CoordinateSpaceInHeader(reader->GetHeader() ? reader->GetHeader() : "");
  }
  else if (ext == ".vtp")
  {
    vtkNew<vtkXMLPolyDataReader> reader;
    reader->AddObserver(vtkCommand::ErrorEvent, errors);
    reader->SetFileName(path.c_str());
    reader->Update();
    result.mesh = reader->GetOutput();
    auto * tag = result.mesh && result.mesh->GetFieldData()
                   ? vtkStringArray::SafeDownCast(result.mesh->GetFieldData()->GetAbstractArray("SPACE"))
                   : nullptr;
    if (tag && tag->GetNumberOfValues() > 0)
      result.spaceInFile = CoordinateSpaceInHeader("SPACE=" + tag->GetValue(0));
  }
  else if (ext == ".stl")
  {
    vtkNew<vtkSTLReader> reader;
    reader->AddObserver(vtkCommand::ErrorEvent, errors);
    reader->SetFileName(path.c_str());
    reader->Update();
    result.mesh = reader->GetOutput();
    std::string header = reader->GetHeader() ? reader->GetHeader() : "";
    if (auto * binary = reader->GetBinaryHeader())
      header.append(reinterpret_cast<const char *>(binary->GetPointer(0)), std::size_t(binary->GetNumberOfValues()));
    result.spaceInFile = CoordinateSpaceInHeader(header);
  }
  else
  {
    RequireMeshExtension(path, parameter);
  }
  if (!errors->Message().empty())
    CANOPY_THROW(parameter << " " << path << ": cannot read the mesh (" << Brief(errors->Message()) << ")");
  if (!result.mesh || result.mesh->GetNumberOfPoints() == 0)
    CANOPY_THROW(parameter << " " << path << ": the mesh has no points");

  const std::string frame = !result.spaceInFile.empty()  ? result.spaceInFile
                            : untagged == MeshSpace::RAS ? "RAS"
                                                         : "LPS";
  if (frame == "RAS")
  {
    FlipRASToLPS(result.mesh);
    result.convertedFromRAS = true;
  }
  return result;
}

} // namespace canopy
