// A 3D Slicer CLI module from one parameter table: the table generates the Slicer Execution Model XML
// (`--xml`), the CLI11 parser of the same flags, and the return parameter file, so the XML and the flags
// cannot drift apart. The module's run function is one of canopyRuns.h, shared with the canopy command.
//
// Protocol (SlicerExecutionModel, qSlicerCLIModule): `Module --xml` as the first argument prints the XML
// and exits; a run prints <filter-start>, <filter-progress>0..1</filter-progress> lines rising to 1 and
// <filter-end> on stdout (flushed), writes "name = value" lines to --returnparameterfile for the simple
// output parameters, and exits 0; errors are one line on stderr and an exit status in 1..127.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace canopy::slicer
{
/** Where a parameter's value lives (read for the XML default, written by the parser or the run). */
using Binding = std::variant<std::string *, double *, int *, bool *>;

/** One parameter: a SEM element (<image>, <double>, ...) and, unless it is returned, the long flag
 * --name. Build with the helpers below and the chained setters. */
struct Parameter
{
  std::string
    tag; // SEM element: image, file, geometry, pointfile, double, integer, boolean, string, string-enumeration
  std::string              name; // C++-style identifier; also the long flag (camelCase, no hyphens)
  std::string              label;
  std::string              description;
  Binding                  target;
  std::string              channel;    // input or output (files, images, returned values); empty for settings
  std::string              attributes; // extra XML attributes, e.g. type="label" fileExtensions=".nrrd"
  std::vector<std::string> elements;   // string-enumeration values
  std::optional<double>    minimum, maximum, step;
  bool                     required = false;
  bool                     returned = false; // simple return value: no flag, written to --returnparameterfile

  Parameter & Input();
  Parameter & Output();
  Parameter & Attributes(std::string xmlAttributes);
  Parameter & Required();
  Parameter & Range(double low, double high, double stepSize);
  Parameter & Elements(std::vector<std::string> values);
};

Parameter
Image(std::string name, std::string * target, std::string label, std::string description);
Parameter
File(std::string name, std::string * target, std::string label, std::string description);
Parameter
Geometry(std::string name, std::string * target, std::string label, std::string description);
/** Markups (Slicer: a point list node, read or written as a .mrk.json file); attributes give its
 * type, coordinate system and extension, e.g. type="point" coordinateSystem="lps" fileExtensions=".mrk.json". */
Parameter
PointFile(std::string name, std::string * target, std::string label, std::string description);
Parameter
Double(std::string name, double * target, std::string label, std::string description);
Parameter
Integer(std::string name, int * target, std::string label, std::string description);
Parameter
Boolean(std::string name, bool * target, std::string label, std::string description); // default must be false
Parameter
String(std::string name, std::string * target, std::string label, std::string description);
Parameter
Enumeration(std::string name, std::string * target, std::string label, std::string description);
/** A simple output (<channel>output</channel>, no flag) that the run sets and the module writes to
 * --returnparameterfile as "name = value". tag: string, double, integer or boolean. */
Parameter
Returned(std::string tag, std::string name, Binding target, std::string label, std::string description);

struct Group
{
  std::string            label;
  std::string            description;
  bool                   advanced = false;
  std::vector<Parameter> parameters;

  Group & Add(Parameter parameter);
};

struct Module
{
  std::string        name; // executable name, no dot (Slicer only takes dot-less names as CLI modules)
  std::string        category = "Segmentation.Canopy";
  std::string        title, description;
  std::string        version, documentationUrl, license, contributor, acknowledgements;
  std::vector<Group> groups;

  Group & AddGroup(std::string label, std::string description, bool advanced = false);

  /** The Slicer Execution Model description: XML declaration first, then <executable>. */
  std::string Xml() const;

  /** Parses argv against the table (or prints the XML for --xml) and calls run between <filter-start>
   * and <filter-end>; returns the process exit status. */
  int Main(int argc, char ** argv, const std::function<void()> & run) const;
};
} // namespace canopy::slicer
