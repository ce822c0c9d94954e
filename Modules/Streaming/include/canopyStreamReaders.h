// Streams read from CSV or ARFF text, incrementally (a file or stdin; nothing is read before it is
// needed beyond CSV's look-ahead).
//
// ARFF: @attribute types numeric, real, integer and {nominal, values}; dense @data rows; '%' comments.
//   The class is the attribute named by classAttribute, else the last; it must be nominal.
// CSV: a header line of names, then comma-separated rows (double quotes allowed around a field). The
//   first lookAheadRows rows decide each column's kind: numeric when every value there is a number or
//   '?', nominal otherwise, with the values seen there (in order of appearance). The class column
//   (classAttribute, else the last) is nominal; its classes are those seen in the look-ahead, or
//   `classes` when given.
// Both: '?' (or an empty CSV field) is a missing value: NaN in the batch; trees route it to the branch
//   that held most weight when the node split and learn nothing from it about that attribute. A
//   missing class, a wrong number of fields, a non-number in a numeric column, 'nan' or 'inf', an
//   unknown nominal value or class are errors naming the source and the line.
#pragma once

#include "canopyStreamSchema.h"

#include <istream>
#include <memory>
#include <string>
#include <vector>

namespace canopy::streaming
{

struct StreamReaderOptions
{
  std::string              classAttribute; // empty: the last column / attribute
  std::vector<std::string> classes;        // CSV: the class values, in index order (empty: from the look-ahead)
  std::size_t              lookAheadRows = 1000;
};

/** CSV or ARFF (by the extension .arff, case-insensitive) from path, "-" for stdin (then CSV unless
 * arff is true). Errors name the path. */
std::unique_ptr<InstanceStream>
OpenInstanceStream(const std::string & path, const StreamReaderOptions & options, bool arff = false);

std::unique_ptr<InstanceStream>
ReadCsvStream(std::unique_ptr<std::istream> in, const std::string & sourceName, const StreamReaderOptions & options);

std::unique_ptr<InstanceStream>
ReadArffStream(std::unique_ptr<std::istream> in, const std::string & sourceName, const StreamReaderOptions & options);

/** Writes a stream's schema and instances as CSV (header, then rows; nominal values by name, '?' for
 * missing), e.g. for a peer library to read the same data. Returns the number of instances written. */
std::size_t
WriteCsv(InstanceStream & stream, std::size_t maxInstances, std::ostream & out);

} // namespace canopy::streaming
