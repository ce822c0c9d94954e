#include "canopyStreamReaders.h"

#include "canopy/Errors.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <deque>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>

namespace canopy::streaming
{
namespace
{

std::string
Trim(const std::string & s)
{
  const auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos)
    return {};
  const auto e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

std::string
Lower(std::string s)
{
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  return s;
}

/** Splits a line at commas outside quotes ('...' or "..."), trimming fields and dropping the quotes. */
bool
SplitFields(const std::string & line, std::vector<std::string> & fields)
{
  fields.clear();
  std::string field;
  char        quote = 0;
  bool        quoted = false;
  for (char ch : line)
  {
    if (quote)
    {
      if (ch == quote)
        quote = 0;
      else
        field += ch;
    }
    else if ((ch == '"' || ch == '\'') && Trim(field).empty())
    {
      field.clear(); // spaces before an opening quote are not part of the value
      quote = ch;
      quoted = true;
    }
    else if (ch == ',')
    {
      fields.push_back(quoted ? field : Trim(field));
      field.clear();
      quoted = false;
    }
    else
      field += ch;
  }
  fields.push_back(quoted ? field : Trim(field));
  return quote == 0;
}

bool
ParseNumber(const std::string & text, double & value)
{
  if (text.empty())
    return false;
  char * end = nullptr;
  value = std::strtod(text.c_str(), &end);
  return end == text.c_str() + text.size();
}

/** Rows of text with their line numbers, and the parsing of a row into a batch. */
class TextStream : public InstanceStream
{
public:
  const StreamSchema & Schema() const override { return m_Schema; }

  std::size_t NextBatch(InstanceBatch & batch, std::size_t maxInstances) override
  {
    const int d = m_Schema.NumberOfAttributes();
    batch.attributes = d;
    batch.Clear();
    batch.values.reserve(maxInstances * std::size_t(d));
    std::string line;
    long        number = 0;
    while (batch.Size() < maxInstances && NextRow(line, number))
      ParseRow(line, number, batch);
    return batch.Size();
  }

protected:
  TextStream(std::unique_ptr<std::istream> in, std::string source)
    : m_In(std::move(in))
    , m_Source(std::move(source))
  {
  }

  [[noreturn]] void Fail(long line, const std::string & message) const
  {
    CANOPY_THROW(m_Source << ":" << line << ": " << message);
  }

  /** Next non-blank, non-comment line of the file (after any held back), with its number. */
  bool ReadLine(std::string & line, long & number)
  {
    while (std::getline(*m_In, line))
    {
      ++m_Line;
      const std::string t = Trim(line);
      if (t.empty() || t[0] == '%')
        continue;
      line = t;
      number = m_Line;
      return true;
    }
    if (m_In->bad())
      CANOPY_THROW(m_Source << ": read error after line " << m_Line);
    return false;
  }

  bool NextRow(std::string & line, long & number)
  {
    if (!m_Held.empty())
    {
      line = std::move(m_Held.front().first);
      number = m_Held.front().second;
      m_Held.pop_front();
      return true;
    }
    return ReadLine(line, number);
  }

  void ParseRow(const std::string & line, long number, InstanceBatch & batch)
  {
    if (!SplitFields(line, m_Fields))
      Fail(number, "unterminated quote");
    const int columns = int(m_Columns.size());
    if (int(m_Fields.size()) != columns)
      Fail(number, "expected " + std::to_string(columns) + " values, found " + std::to_string(m_Fields.size()));
    for (int col = 0; col < columns; ++col)
    {
      const std::string & text = m_Fields[col];
      const int           a = m_Columns[col];
      if (a < 0) // the class
      {
        if (text == "?" || text.empty())
          Fail(number, "the class '" + m_Schema.className + "' is missing ('?')");
        const auto it = m_ClassIndex.find(text);
        if (it == m_ClassIndex.end())
          Fail(number, "unknown class '" + text + "' (" + Listing(m_Schema.classes) + ")");
        batch.labels.push_back(it->second);
        continue;
      }
      const StreamAttribute & attribute = m_Schema.attributes[a];
      if (text == "?" || text.empty())
      {
        batch.values.push_back(NAN);
        continue;
      }
      if (attribute.nominal)
      {
        const auto it = m_ValueIndex[a].find(text);
        if (it == m_ValueIndex[a].end())
          Fail(number,
               "attribute '" + attribute.name + "': unknown value '" + text + "' (" + Listing(attribute.values) + ")");
        batch.values.push_back(float(it->second));
      }
      else
      {
        double v = 0;
        if (!ParseNumber(text, v))
          Fail(number, "attribute '" + attribute.name + "': '" + text + "' is not a number");
        if (!std::isfinite(v) || !std::isfinite(float(v)))
          Fail(number,
               "attribute '" + attribute.name + "': '" + text + "' is not a finite number (write ? for missing)");
        batch.values.push_back(float(v));
      }
    }
  }

  static std::string Listing(const std::vector<std::string> & values)
  {
    std::string s;
    for (std::size_t i = 0; i < values.size() && i < 10; ++i)
      s += (i ? ", " : "") + values[i];
    if (values.size() > 10)
      s += ", ... " + std::to_string(values.size()) + " in all";
    return s.empty() ? "none" : s;
  }

  /** Fixes the schema's index maps once attributes and classes are known; classColumn gets -1. */
  void Finish(const std::vector<int> & columns)
  {
    m_Columns = columns;
    m_ValueIndex.resize(m_Schema.attributes.size());
    for (std::size_t a = 0; a < m_Schema.attributes.size(); ++a)
      for (std::size_t v = 0; v < m_Schema.attributes[a].values.size(); ++v)
        m_ValueIndex[a].emplace(m_Schema.attributes[a].values[v], int(v));
    for (std::size_t c = 0; c < m_Schema.classes.size(); ++c)
      m_ClassIndex.emplace(m_Schema.classes[c], int(c));
    if (m_Schema.classes.size() < 2)
      CANOPY_THROW(m_Source << ": the class '" << m_Schema.className << "' has " << m_Schema.classes.size()
                            << " value(s); at least 2 are needed");
  }

  std::unique_ptr<std::istream>            m_In;
  std::string                              m_Source;
  long                                     m_Line = 0;
  StreamSchema                             m_Schema;
  std::vector<int>                         m_Columns; // column -> attribute, -1 for the class
  std::vector<std::map<std::string, int>>  m_ValueIndex;
  std::map<std::string, int>               m_ClassIndex;
  std::deque<std::pair<std::string, long>> m_Held; // look-ahead rows not yet parsed
  std::vector<std::string>                 m_Fields;
};

class CsvStream : public TextStream
{
public:
  CsvStream(std::unique_ptr<std::istream> in, const std::string & source, const StreamReaderOptions & o)
    : TextStream(std::move(in), source)
  {
    std::string header;
    long        number = 0;
    if (!ReadLine(header, number))
      CANOPY_THROW(m_Source << ": empty stream (no header line)");
    std::vector<std::string> names;
    if (!SplitFields(header, names))
      Fail(number, "unterminated quote in the header");
    if (names.size() < 2)
      Fail(number, "the header names " + std::to_string(names.size()) + " column(s); at least 2 are needed");
    int classColumn = int(names.size()) - 1;
    if (!o.classAttribute.empty())
    {
      const auto it = std::find(names.begin(), names.end(), o.classAttribute);
      if (it == names.end())
        CANOPY_THROW(m_Source << ": no column named '" << o.classAttribute << "' for the class");
      classColumn = int(it - names.begin());
    }
    // Look ahead to decide the kinds of columns and their values.
    std::string row;
    while (m_Held.size() < o.lookAheadRows && ReadLine(row, number))
      m_Held.emplace_back(row, number);
    std::vector<bool>                     numeric(names.size(), true);
    std::vector<std::vector<std::string>> seen(names.size());
    std::vector<std::string>              fields;
    for (const auto & [text, line] : m_Held)
    {
      if (!SplitFields(text, fields))
        Fail(line, "unterminated quote");
      if (fields.size() != names.size())
        Fail(line, "expected " + std::to_string(names.size()) + " values, found " + std::to_string(fields.size()));
      for (std::size_t c = 0; c < names.size(); ++c)
      {
        const std::string & f = fields[c];
        if (f == "?" || f.empty())
          continue;
        double v;
        if (!ParseNumber(f, v))
          numeric[c] = false;
        if (std::find(seen[c].begin(), seen[c].end(), f) == seen[c].end() && seen[c].size() <= 100000)
          seen[c].push_back(f);
      }
    }
    std::vector<int> columns;
    m_Schema.className = names[classColumn];
    m_Schema.classes = o.classes.empty() ? seen[classColumn] : o.classes;
    for (std::size_t c = 0; c < names.size(); ++c)
    {
      if (int(c) == classColumn)
      {
        columns.push_back(-1);
        continue;
      }
      columns.push_back(int(m_Schema.attributes.size()));
      m_Schema.attributes.push_back({ names[c], !numeric[c], numeric[c] ? std::vector<std::string>{} : seen[c] });
    }
    if (m_Held.empty())
      CANOPY_THROW(m_Source << ": empty stream (a header but no rows)");
    Finish(columns);
  }
};

class ArffStream : public TextStream
{
public:
  ArffStream(std::unique_ptr<std::istream> in, const std::string & source, const StreamReaderOptions & o)
    : TextStream(std::move(in), source)
  {
    std::string                  line;
    long                         number = 0;
    std::vector<StreamAttribute> all;
    bool                         data = false;
    while (!data && ReadLine(line, number))
    {
      const std::string lower = Lower(line);
      if (lower.rfind("@relation", 0) == 0)
        continue;
      if (lower.rfind("@data", 0) == 0)
      {
        data = true;
        break;
      }
      if (lower.rfind("@attribute", 0) != 0)
        Fail(number, "expected @relation, @attribute or @data, found '" + line.substr(0, 40) + "'");
      all.push_back(ParseAttribute(Trim(line.substr(10)), number));
    }
    if (!data)
      CANOPY_THROW(m_Source << ": empty stream (no @data section)");
    if (all.size() < 2)
      CANOPY_THROW(m_Source << ": " << all.size() << " attribute(s); at least 2 (one the class) are needed");
    int classIndex = int(all.size()) - 1;
    if (!o.classAttribute.empty())
    {
      classIndex = -1;
      for (std::size_t a = 0; a < all.size(); ++a)
        if (all[a].name == o.classAttribute)
          classIndex = int(a);
      if (classIndex < 0)
        CANOPY_THROW(m_Source << ": no attribute named '" << o.classAttribute << "' for the class");
    }
    if (!all[classIndex].nominal)
      CANOPY_THROW(m_Source << ": the class attribute '" << all[classIndex].name << "' is numeric; it must be nominal");
    std::vector<int> columns;
    for (std::size_t a = 0; a < all.size(); ++a)
    {
      if (int(a) == classIndex)
      {
        columns.push_back(-1);
        m_Schema.className = all[a].name;
        m_Schema.classes = all[a].values;
        continue;
      }
      columns.push_back(int(m_Schema.attributes.size()));
      m_Schema.attributes.push_back(all[a]);
    }
    Finish(columns);
  }

private:
  StreamAttribute ParseAttribute(const std::string & rest, long number)
  {
    StreamAttribute a;
    std::size_t     pos = 0;
    if (!rest.empty() && (rest[0] == '\'' || rest[0] == '"'))
    {
      const auto close = rest.find(rest[0], 1);
      if (close == std::string::npos)
        Fail(number, "unterminated quote in an attribute name");
      a.name = rest.substr(1, close - 1);
      pos = close + 1;
    }
    else
    {
      pos = rest.find_first_of(" \t{");
      if (pos == std::string::npos)
        Fail(number, "@attribute without a type");
      a.name = rest.substr(0, pos);
    }
    const std::string type = Trim(rest.substr(pos));
    const std::string lower = Lower(type);
    if (lower == "numeric" || lower == "real" || lower == "integer")
      return a;
    if (type.empty() || type[0] != '{' || type.back() != '}')
      Fail(number, "attribute '" + a.name + "': type '" + type + "' is not numeric, real, integer or {values}");
    a.nominal = true;
    if (!SplitFields(type.substr(1, type.size() - 2), a.values))
      Fail(number, "attribute '" + a.name + "': unterminated quote among its values");
    if (a.values.empty() || (a.values.size() == 1 && a.values[0].empty()))
      Fail(number, "attribute '" + a.name + "' has no values");
    return a;
  }
};

} // namespace

std::unique_ptr<InstanceStream>
ReadCsvStream(std::unique_ptr<std::istream> in, const std::string & sourceName, const StreamReaderOptions & options)
{
  return std::make_unique<CsvStream>(std::move(in), sourceName, options);
}

std::unique_ptr<InstanceStream>
ReadArffStream(std::unique_ptr<std::istream> in, const std::string & sourceName, const StreamReaderOptions & options)
{
  return std::make_unique<ArffStream>(std::move(in), sourceName, options);
}

std::unique_ptr<InstanceStream>
OpenInstanceStream(const std::string & path, const StreamReaderOptions & options, bool arff)
{
  std::unique_ptr<std::istream> in;
  std::string                   name = path;
  if (path == "-")
  {
    // A non-owning view of stdin: the stream must not delete std::cin.
    in = std::make_unique<std::istream>(std::cin.rdbuf());
    name = "stdin";
  }
  else
  {
    auto file = std::make_unique<std::ifstream>(path);
    if (!*file)
      CANOPY_THROW(path << ": cannot open");
    in = std::move(file);
    arff = arff || (path.size() > 5 && Lower(path.substr(path.size() - 5)) == ".arff");
  }
  return arff ? ReadArffStream(std::move(in), name, options) : ReadCsvStream(std::move(in), name, options);
}

std::size_t
WriteCsv(InstanceStream & stream, std::size_t maxInstances, std::ostream & out)
{
  const StreamSchema & s = stream.Schema();
  for (const auto & a : s.attributes)
    out << a.name << ',';
  out << s.className << '\n';
  InstanceBatch batch;
  std::size_t   written = 0;
  out.precision(9);
  while (written < maxInstances)
  {
    const std::size_t n = stream.NextBatch(batch, std::min<std::size_t>(10000, maxInstances - written));
    if (n == 0)
      break;
    for (std::size_t i = 0; i < n; ++i)
    {
      const float * x = batch.Row(i);
      for (int a = 0; a < s.NumberOfAttributes(); ++a)
      {
        if (IsMissing(x[a]))
          out << '?';
        else if (s.attributes[a].nominal)
          out << s.attributes[a].values[int(x[a])];
        else
          out << x[a];
        out << ',';
      }
      out << s.classes[batch.labels[i]] << '\n';
    }
    written += n;
  }
  return written;
}

} // namespace canopy::streaming
