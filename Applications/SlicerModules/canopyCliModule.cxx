#include "canopyCliModule.h"

#include "canopy/AtomicFile.h"
#include "canopyOptionChecks.h"
#include "canopyProgress.h"
#include "itkMacro.h"

#include <CLI/CLI.hpp>

#include <chrono>
#include <cstdio>
#include <iostream>
#include <limits>
#include <sstream>
#include <type_traits>

namespace canopy::slicer
{
namespace
{
std::string
Escaped(const std::string & text)
{
  std::string out;
  for (const char c : text)
  {
    switch (c)
    {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string
Number(double value)
{
  std::ostringstream out;
  out.precision(std::numeric_limits<double>::max_digits10 - 2); // 0.9 prints as 0.9, not 0.90000000000000002
  out << value;
  return out.str();
}

/** The bound value as text: the XML <default>, and the value written to the return parameter file. */
std::string
ValueText(const Binding & target)
{
  return std::visit(
    [](auto * value) -> std::string
    {
      using T = std::remove_pointer_t<decltype(value)>;
      if constexpr (std::is_same_v<T, std::string>)
        return *value;
      else if constexpr (std::is_same_v<T, bool>)
        return *value ? "true" : "false";
      else if constexpr (std::is_same_v<T, double>)
        return Number(*value);
      else
        return std::to_string(*value);
    },
    target);
}

/** One line for stderr: control characters (newlines in ITK's messages) become spaces. */
std::string
OneLine(std::string message)
{
  for (char & c : message)
  {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
      c = ' ';
  }
  return message;
}

void
Element(std::ostringstream & xml, const char * indent, const char * tag, const std::string & text)
{
  if (!text.empty())
    xml << indent << '<' << tag << '>' << Escaped(text) << "</" << tag << ">\n";
}

void
AddOption(CLI::App & app, const Parameter & p)
{
  const std::string flag = "--" + p.name;
  CLI::Option *     option = nullptr;
  if (p.tag == "boolean")
  {
    option = app.add_flag(flag, *std::get<bool *>(p.target), p.description);
  }
  else if (p.tag == "double")
  {
    option = app.add_option(flag, *std::get<double *>(p.target), p.description);
    option->check(app::FiniteIn(p.minimum.value_or(std::numeric_limits<double>::lowest()),
                                p.maximum.value_or(std::numeric_limits<double>::max())));
  }
  else if (p.tag == "integer")
  {
    option = app.add_option(flag, *std::get<int *>(p.target), p.description);
    if (p.minimum || p.maximum)
      option->check(CLI::Range(static_cast<int>(p.minimum.value_or(std::numeric_limits<int>::min())),
                               static_cast<int>(p.maximum.value_or(std::numeric_limits<int>::max()))));
  }
  else
  {
    option = app.add_option(flag, *std::get<std::string *>(p.target), p.description);
    if (p.tag == "string-enumeration")
      option->check(CLI::IsMember(p.elements));
  }
  if (p.required)
    option->required();
  else if (p.tag != "boolean")
    option->capture_default_str();
}
} // namespace

Parameter &
Parameter::Input()
{
  channel = "input";
  return *this;
}
Parameter &
Parameter::Output()
{
  channel = "output";
  return *this;
}
Parameter &
Parameter::Attributes(std::string xmlAttributes)
{
  attributes = std::move(xmlAttributes);
  return *this;
}
Parameter &
Parameter::Required()
{
  required = true;
  return *this;
}
Parameter &
Parameter::Range(double low, double high, double stepSize)
{
  minimum = low;
  maximum = high;
  step = stepSize;
  return *this;
}
Parameter &
Parameter::Elements(std::vector<std::string> values)
{
  elements = std::move(values);
  return *this;
}

namespace
{
Parameter
Make(std::string tag, std::string name, Binding target, std::string label, std::string description)
{
  Parameter p;
  p.tag = std::move(tag);
  p.name = std::move(name);
  p.target = target;
  p.label = std::move(label);
  p.description = std::move(description);
  return p;
}
} // namespace

Parameter
Image(std::string name, std::string * target, std::string label, std::string description)
{
  return Make("image", std::move(name), target, std::move(label), std::move(description));
}
Parameter
File(std::string name, std::string * target, std::string label, std::string description)
{
  return Make("file", std::move(name), target, std::move(label), std::move(description));
}
Parameter
Geometry(std::string name, std::string * target, std::string label, std::string description)
{
  return Make("geometry", std::move(name), target, std::move(label), std::move(description));
}
Parameter
PointFile(std::string name, std::string * target, std::string label, std::string description)
{
  return Make("pointfile", std::move(name), target, std::move(label), std::move(description));
}
Parameter
Double(std::string name, double * target, std::string label, std::string description)
{
  return Make("double", std::move(name), target, std::move(label), std::move(description));
}
Parameter
Integer(std::string name, int * target, std::string label, std::string description)
{
  return Make("integer", std::move(name), target, std::move(label), std::move(description));
}
Parameter
Boolean(std::string name, bool * target, std::string label, std::string description)
{
  return Make("boolean", std::move(name), target, std::move(label), std::move(description));
}
Parameter
String(std::string name, std::string * target, std::string label, std::string description)
{
  return Make("string", std::move(name), target, std::move(label), std::move(description));
}
Parameter
Enumeration(std::string name, std::string * target, std::string label, std::string description)
{
  return Make("string-enumeration", std::move(name), target, std::move(label), std::move(description));
}
Parameter
Returned(std::string tag, std::string name, Binding target, std::string label, std::string description)
{
  Parameter p = Make(std::move(tag), std::move(name), target, std::move(label), std::move(description));
  p.channel = "output";
  p.returned = true;
  return p;
}

Group &
Group::Add(Parameter parameter)
{
  parameters.push_back(std::move(parameter));
  return *this;
}

Group &
Module::AddGroup(std::string label, std::string groupDescription, bool advanced)
{
  groups.push_back(Group{ std::move(label), std::move(groupDescription), advanced, {} });
  return groups.back();
}

std::string
Module::Xml() const
{
  std::ostringstream xml;
  xml << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<executable>\n";
  Element(xml, "  ", "category", category);
  Element(xml, "  ", "title", title);
  Element(xml, "  ", "description", description);
  Element(xml, "  ", "version", version);
  Element(xml, "  ", "documentation-url", documentationUrl);
  Element(xml, "  ", "license", license);
  Element(xml, "  ", "contributor", contributor);
  Element(xml, "  ", "acknowledgements", acknowledgements);
  for (const Group & group : groups)
  {
    xml << "  <parameters" << (group.advanced ? " advanced=\"true\"" : "") << ">\n";
    Element(xml, "    ", "label", group.label);
    Element(xml, "    ", "description", group.description);
    for (const Parameter & p : group.parameters)
    {
      xml << "    <" << p.tag << (p.attributes.empty() ? "" : " " + p.attributes) << ">\n";
      Element(xml, "      ", "name", p.name);
      if (!p.returned)
        Element(xml, "      ", "longflag", p.name);
      Element(xml, "      ", "label", p.label);
      Element(xml, "      ", "description", p.description);
      Element(xml, "      ", "channel", p.channel);
      for (const std::string & value : p.elements)
        Element(xml, "      ", "element", value);
      Element(xml, "      ", "default", ValueText(p.target));
      if (p.minimum || p.maximum || p.step)
      {
        xml << "      <constraints>\n";
        if (p.minimum)
          Element(xml, "        ", "minimum", Number(*p.minimum));
        if (p.maximum)
          Element(xml, "        ", "maximum", Number(*p.maximum));
        if (p.step)
          Element(xml, "        ", "step", Number(*p.step));
        xml << "      </constraints>\n";
      }
      xml << "    </" << p.tag << ">\n";
    }
    xml << "  </parameters>\n";
  }
  xml << "</executable>\n";
  return xml.str();
}

int
Module::Main(int argc, char ** argv, const std::function<void()> & run) const
{
  // Slicer asks for the description with --xml as the only argument and waits at most 5 s.
  if (argc >= 2 && std::string(argv[1]) == "--xml")
  {
    std::cout << Xml() << std::flush;
    return 0;
  }
  CLI::App app{ title + ": " + description, name };
  for (const Group & group : groups)
  {
    for (const Parameter & p : group.parameters)
    {
      if (!p.returned)
        AddOption(app, p);
    }
  }
  // The flags GenerateCLP gives every module (Slicer passes some of them).
  std::string returnParameterFile, processInformationAddress;
  bool        xml = false, echo = false;
  app.add_option("--returnparameterfile", returnParameterFile, "Write the simple outputs here as name = value lines");
  app.add_option(
    "--processinformationaddress", processInformationAddress, "Accepted and ignored (shared-library modules only)");
  app.add_flag("--xml", xml, "Print the Slicer Execution Model description and exit");
  app.add_flag("--echo", echo, "Print the arguments before running");
  app.set_version_flag("--version", name + " " + version);
  try
  {
    app.parse(argc, argv);
  }
  catch (const CLI::ParseError & e)
  {
    return app.exit(e); // CLI11's codes are 100..115: a plain error, below 128
  }
  if (xml)
  {
    std::cout << Xml() << std::flush;
    return 0;
  }
  if (echo)
  {
    for (int i = 0; i < argc; ++i)
      std::cout << (i ? " " : "") << argv[i];
    std::cout << '\n';
  }

  app::SetProgressOutput(app::ProgressOutput::SlicerFilterProgress);
  const auto start = std::chrono::steady_clock::now();
  std::cout << "<filter-start>\n<filter-name>" << name << "</filter-name>\n<filter-comment>" << Escaped(title)
            << "</filter-comment>\n</filter-start>" << std::endl;
  app::ReportSlicerProgress(0.0);
  try
  {
    run();
    if (!returnParameterFile.empty())
    {
      WriteFileAtomically(returnParameterFile,
                          [this](std::ostream & out)
                          {
                            for (const Group & group : groups)
                              for (const Parameter & p : group.parameters)
                                if (p.returned)
                                  out << p.name << " = " << ValueText(p.target) << '\n';
                          });
    }
  }
  catch (const itk::ExceptionObject & e)
  {
    std::cerr << name << ": error: " << OneLine(e.GetDescription()) << std::endl;
    return 1;
  }
  catch (const std::exception & e)
  {
    std::cerr << name << ": error: " << OneLine(e.what()) << std::endl;
    return 1;
  }
  app::ReportSlicerProgress(1.0);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::cout << "<filter-end>\n<filter-name>" << name << "</filter-name>\n<filter-time>" << seconds
            << "</filter-time>\n</filter-end>" << std::endl;
  return 0;
}
} // namespace canopy::slicer
