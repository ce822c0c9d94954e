#include "canopyStreamGenerators.h"

#include "canopy/Errors.h"
#include "canopy/PortableRandom.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <sstream>

namespace canopy::streaming
{
namespace
{

/** Parameters of a spec, each read once; leftovers are unknown keys. */
class SpecParameters
{
public:
  SpecParameters(const std::string & spec, const std::string & parameter)
    : m_Parameter(parameter)
  {
    const auto colon = spec.find(':');
    m_Name = spec.substr(0, colon);
    if (colon == std::string::npos)
      return;
    std::istringstream list(spec.substr(colon + 1));
    std::string        item;
    while (std::getline(list, item, ','))
    {
      const auto eq = item.find('=');
      if (eq == std::string::npos || eq == 0)
        CANOPY_THROW(m_Parameter << ": '" << item << "' in '" << spec << "' is not key=value");
      m_Values[item.substr(0, eq)] = item.substr(eq + 1);
    }
  }

  const std::string & Name() const { return m_Name; }

  double Number(const std::string & key, double fallback, double low, double high)
  {
    const auto it = m_Values.find(key);
    if (it == m_Values.end())
      return fallback;
    std::istringstream in(it->second);
    double             v = 0;
    if (!(in >> v) || !in.eof() || !(v >= low && v <= high))
      CANOPY_THROW(m_Parameter << ": " << m_Name << " " << key << "=" << it->second << " is not a number in [" << low
                               << ", " << high << "]");
    m_Values.erase(it);
    return v;
  }

  int Integer(const std::string & key, int fallback, int low, int high)
  {
    const double v = Number(key, fallback, low, high);
    if (v != std::floor(v))
      CANOPY_THROW(m_Parameter << ": " << m_Name << " " << key << " must be a whole number");
    return int(v);
  }

  void RequireAllUsed() const
  {
    if (!m_Values.empty())
      CANOPY_THROW(m_Parameter << ": " << m_Name << " has no parameter '" << m_Values.begin()->first << "'");
  }

private:
  std::string                        m_Parameter, m_Name;
  std::map<std::string, std::string> m_Values;
};

class GeneratorBase : public InstanceStream
{
public:
  const StreamSchema & Schema() const override { return m_Schema; }

  std::size_t NextBatch(InstanceBatch & batch, std::size_t maxInstances) override
  {
    const int d = m_Schema.NumberOfAttributes();
    batch.attributes = d;
    batch.values.resize(maxInstances * std::size_t(d));
    batch.labels.resize(maxInstances);
    for (std::size_t i = 0; i < maxInstances; ++i)
      batch.labels[i] = Generate(batch.values.data() + i * std::size_t(d));
    return maxInstances;
  }

protected:
  explicit GeneratorBase(std::uint64_t seed)
    : m_Rng(seed)
  {
  }
  /** Writes one instance's attributes, returns its class. */
  virtual std::int32_t Generate(float * x) = 0;

  double        Uniform() { return UniformUnit(m_Rng); }
  std::uint64_t Index(std::uint64_t n) { return UniformIndex(m_Rng, n); }
  double        Normal()
  {
    const double u1 = 1.0 - Uniform(), u2 = Uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }
  void AddNominal(const std::string & name, int values)
  {
    StreamAttribute a{ name, true, {} };
    for (int v = 0; v < values; ++v)
      a.values.push_back("v" + std::to_string(v));
    m_Schema.attributes.push_back(a);
  }
  /** The concept function of instance `count` under abrupt or gradual drift (SEA, Agrawal): concept k
   * holds for instances [k every, (k+1) every), the next of `functions` each time, starting at `first`;
   * over `width` instances after a change, a sigmoid blends concept k-1 into k (one Uniform() drawn). */
  int DriftingConcept(int first, int functions, std::int64_t count, int every, int width)
  {
    if (every <= 0)
      return first;
    const std::int64_t concept = count / every;
    int function = int((first + concept) % functions);
    if (width > 1 && concept > 0)
    {
      const double t = double(count - concept * every);
      const double pNew = 1.0 / (1.0 + std::exp(-4.0 * (t - 0.5 * width) / width));
      if (Uniform() >= pNew)
        function = int((first + concept - 1) % functions);
    }
    return function;
  }
  void AddNumeric(const std::string & name) { m_Schema.attributes.push_back({ name, false, {} }); }
  void SetClasses(int classes)
  {
    for (int c = 0; c < classes; ++c)
      m_Schema.classes.push_back("c" + std::to_string(c));
  }

  StreamSchema    m_Schema;
  std::mt19937_64 m_Rng;
};

class RandomTreeGenerator : public GeneratorBase
{
public:
  RandomTreeGenerator(SpecParameters & p, std::uint64_t seed)
    : GeneratorBase(seed)
  {
    const int attributes = p.Integer("attributes", 10, 1, 10000);
    m_Values = p.Integer("values", 2, 2, 1000);
    m_Classes = p.Integer("classes", 2, 2, 1000);
    const int    depth = p.Integer("depth", 5, 1, 30);
    const int    firstLeaf = p.Integer("first_leaf", 3, 0, 30);
    const double leafFraction = p.Number("leaf_fraction", 0.15, 0.0, 1.0);
    m_Noise = p.Number("noise", 0.2, 0.0, 1.0);
    for (int a = 0; a < attributes; ++a)
      AddNominal("a" + std::to_string(a), m_Values);
    SetClasses(m_Classes);
    std::vector<bool> used(attributes, false);
    Grow(0, depth, firstLeaf, leafFraction, used);
  }

private:
  struct Node
  {
    int attribute = -1; // -1: leaf
    int label = 0;
    int firstChild = 0;
  };

  int Grow(int level, int depth, int firstLeaf, double leafFraction, std::vector<bool> & used)
  {
    const int index = int(m_Nodes.size());
    m_Nodes.push_back({});
    std::vector<int> free;
    for (int a = 0; a < int(used.size()); ++a)
      if (!used[a])
        free.push_back(a);
    if (level >= depth || free.empty() || (level >= firstLeaf && Uniform() < leafFraction))
    {
      m_Nodes[index].label = int(Index(m_Classes));
      return index;
    }
    const int attribute = free[Index(free.size())];
    m_Nodes[index].attribute = attribute;
    used[attribute] = true;
    std::vector<int> children;
    for (int v = 0; v < m_Values; ++v)
      children.push_back(Grow(level + 1, depth, firstLeaf, leafFraction, used));
    used[attribute] = false;
    // Children of one node are not contiguous while growing depth first: keep their indices.
    m_Nodes[index].firstChild = int(m_Children.size());
    m_Children.insert(m_Children.end(), children.begin(), children.end());
    return index;
  }

  std::int32_t Generate(float * x) override
  {
    const int d = m_Schema.NumberOfAttributes();
    for (int a = 0; a < d; ++a)
      x[a] = float(Index(m_Values));
    int node = 0;
    while (m_Nodes[node].attribute >= 0)
      node = m_Children[m_Nodes[node].firstChild + int(x[m_Nodes[node].attribute])];
    std::int32_t label = m_Nodes[node].label;
    if (m_Noise > 0.0)
    {
      for (int a = 0; a < d; ++a)
        if (Uniform() < m_Noise)
          x[a] = float(Index(m_Values));
      if (Uniform() < m_Noise)
        label = std::int32_t(Index(m_Classes));
    }
    return label;
  }

  int               m_Values, m_Classes;
  double            m_Noise;
  std::vector<Node> m_Nodes;
  std::vector<int>  m_Children;
};

class SeaGenerator : public GeneratorBase
{
public:
  SeaGenerator(SpecParameters & p, std::uint64_t seed)
    : GeneratorBase(seed)
  {
    m_Function = p.Integer("function", 1, 1, 4) - 1;
    m_Noise = p.Number("noise", 0.1, 0.0, 1.0);
    m_DriftEvery = p.Integer("drift_every", 0, 0, 2000000000);
    m_DriftWidth = p.Integer("drift_width", 1, 1, 2000000000);
    for (int a = 0; a < 3; ++a)
      AddNumeric("x" + std::to_string(a));
    SetClasses(2);
  }

private:
  static constexpr double kTheta[4] = { 8.0, 9.0, 7.0, 9.5 };

  std::int32_t Generate(float * x) override
  {
    for (int a = 0; a < 3; ++a)
      x[a] = float(10.0 * Uniform());
    const int function = DriftingConcept(m_Function, 4, m_Count, m_DriftEvery, m_DriftWidth);
    ++m_Count;
    std::int32_t label = double(x[0]) + double(x[1]) <= kTheta[function] ? 1 : 0;
    if (Uniform() < m_Noise)
      label = 1 - label;
    return label;
  }

  int          m_Function, m_DriftEvery, m_DriftWidth;
  double       m_Noise;
  std::int64_t m_Count = 0;
};

class HyperplaneGenerator : public GeneratorBase
{
public:
  HyperplaneGenerator(SpecParameters & p, std::uint64_t seed)
    : GeneratorBase(seed)
  {
    const int d = p.Integer("attributes", 10, 2, 10000);
    m_DriftAttributes = p.Integer("drift_attributes", 2, 0, d);
    m_Magnitude = p.Number("magnitude", 0.001, 0.0, 1.0);
    m_Sigma = p.Number("sigma", 0.1, 0.0, 1.0);
    m_Noise = p.Number("noise", 0.05, 0.0, 1.0);
    for (int a = 0; a < d; ++a)
    {
      AddNumeric("x" + std::to_string(a));
      m_Weights.push_back(Uniform());
      m_Directions.push_back(1.0);
    }
    SetClasses(2);
  }

private:
  std::int32_t Generate(float * x) override
  {
    const int d = int(m_Weights.size());
    double    sum = 0.0, total = 0.0;
    for (int a = 0; a < d; ++a)
    {
      x[a] = float(Uniform());
      sum += m_Weights[a] * double(x[a]);
      total += m_Weights[a];
    }
    std::int32_t label = sum >= 0.5 * total ? 1 : 0;
    if (Uniform() < m_Noise)
      label = 1 - label;
    for (int a = 0; a < m_DriftAttributes; ++a)
    {
      m_Weights[a] += m_Directions[a] * m_Magnitude;
      if (Uniform() < m_Sigma)
        m_Directions[a] = -m_Directions[a];
    }
    return label;
  }

  int                 m_DriftAttributes;
  double              m_Magnitude, m_Sigma, m_Noise;
  std::vector<double> m_Weights, m_Directions;
};

class RandomRbfGenerator : public GeneratorBase
{
public:
  RandomRbfGenerator(SpecParameters & p, std::uint64_t seed)
    : GeneratorBase(seed)
  {
    m_Dimension = p.Integer("attributes", 10, 1, 10000);
    const int classes = p.Integer("classes", 2, 2, 1000);
    const int centroids = p.Integer("centroids", 50, 1, 100000);
    m_Speed = p.Number("speed", 0.0, 0.0, 1.0);
    m_DriftCentroids = p.Integer("drift_centroids", 50, 0, 100000);
    m_DriftCentroids = std::min(m_DriftCentroids, centroids);
    for (int a = 0; a < m_Dimension; ++a)
      AddNumeric("x" + std::to_string(a));
    SetClasses(classes);
    for (int k = 0; k < centroids; ++k)
    {
      Centroid c;
      for (int a = 0; a < m_Dimension; ++a)
        c.centre.push_back(Uniform());
      c.label = int(Index(classes));
      c.deviation = Uniform();
      m_TotalWeight += Uniform();
      m_CumulativeWeight.push_back(m_TotalWeight);
      c.direction = UnitVector();
      m_Centroids.push_back(c);
    }
  }

private:
  struct Centroid
  {
    std::vector<double> centre, direction;
    double              deviation = 0;
    int                 label = 0;
  };

  std::vector<double> UnitVector()
  {
    std::vector<double> v(m_Dimension);
    double              norm = 0.0;
    for (auto & e : v)
    {
      e = Normal();
      norm += e * e;
    }
    norm = std::sqrt(norm);
    for (auto & e : v)
      e = norm > 0 ? e / norm : 0.0;
    return v;
  }

  std::int32_t Generate(float * x) override
  {
    for (int k = 0; k < m_DriftCentroids && m_Speed > 0.0; ++k)
    {
      auto & c = m_Centroids[k];
      for (int a = 0; a < m_Dimension; ++a)
      {
        c.centre[a] += c.direction[a] * m_Speed;
        if (c.centre[a] > 1.0 || c.centre[a] < 0.0)
        {
          c.centre[a] = c.centre[a] > 1.0 ? 2.0 - c.centre[a] : -c.centre[a];
          c.direction[a] = -c.direction[a];
        }
      }
    }
    const double pick = Uniform() * m_TotalWeight;
    const auto k = std::min<std::size_t>(std::upper_bound(m_CumulativeWeight.begin(), m_CumulativeWeight.end(), pick) -
                                           m_CumulativeWeight.begin(),
                                         m_Centroids.size() - 1);
    const auto &              c = m_Centroids[k];
    const std::vector<double> direction = UnitVector();
    const double              magnitude = Normal() * c.deviation;
    for (int a = 0; a < m_Dimension; ++a)
      x[a] = float(c.centre[a] + direction[a] * magnitude);
    return c.label;
  }

  int                   m_Dimension, m_DriftCentroids;
  double                m_Speed, m_TotalWeight = 0.0;
  std::vector<Centroid> m_Centroids;
  std::vector<double>   m_CumulativeWeight;
};

class LedGenerator : public GeneratorBase
{
public:
  LedGenerator(SpecParameters & p, std::uint64_t seed)
    : GeneratorBase(seed)
  {
    m_Noise = p.Number("noise", 0.1, 0.0, 1.0);
    m_Irrelevant = p.Integer("irrelevant", 17, 0, 10000);
    for (int a = 0; a < 7 + m_Irrelevant; ++a)
      AddNominal("s" + std::to_string(a), 2);
    SetClasses(10);
  }

private:
  std::int32_t Generate(float * x) override
  {
    // Segments a..g of the digits 0..9 on a seven-segment display.
    static constexpr int kSegments[10][7] = { { 1, 1, 1, 0, 1, 1, 1 }, { 0, 0, 1, 0, 0, 1, 0 }, { 1, 0, 1, 1, 1, 0, 1 },
                                              { 1, 0, 1, 1, 0, 1, 1 }, { 0, 1, 1, 1, 0, 1, 0 }, { 1, 1, 0, 1, 0, 1, 1 },
                                              { 1, 1, 0, 1, 1, 1, 1 }, { 1, 0, 1, 0, 0, 1, 0 }, { 1, 1, 1, 1, 1, 1, 1 },
                                              { 1, 1, 1, 1, 0, 1, 1 } };
    const int            digit = int(Index(10));
    for (int s = 0; s < 7; ++s)
      x[s] = float(Uniform() < m_Noise ? 1 - kSegments[digit][s] : kSegments[digit][s]);
    for (int a = 0; a < m_Irrelevant; ++a)
      x[7 + a] = float(Index(2));
    return digit;
  }

  double m_Noise;
  int    m_Irrelevant;
};

/** Agrawal et al.'s loan-applicant stream (1993), as MOA's AgrawalGenerator (river's Agrawal): nine
 * attributes, ten classification functions; values drawn, the class taken from the function, then the
 * numeric values perturbed (MOA's perturbValue, hvalue's odd range included). */
class AgrawalGenerator : public GeneratorBase
{
public:
  AgrawalGenerator(SpecParameters & p, std::uint64_t seed)
    : GeneratorBase(seed)
  {
    m_Function = p.Integer("function", 1, 1, 10) - 1;
    m_Perturbation = p.Number("perturbation", 0.05, 0.0, 1.0);
    m_Balance = p.Integer("balance", 0, 0, 1) == 1;
    m_DriftEvery = p.Integer("drift_every", 0, 0, 2000000000);
    m_DriftWidth = p.Integer("drift_width", 1, 1, 2000000000);
    AddNumeric("salary");
    AddNumeric("commission");
    AddNumeric("age");
    AddNominal("elevel", 5);
    AddNominal("car", 20);
    AddNominal("zipcode", 9);
    AddNumeric("hvalue");
    AddNumeric("hyears");
    AddNumeric("loan");
    m_Schema.classes = { "groupA", "groupB" };
  }

  /** Class (0: groupA, 1: groupB) of function f (0-based) for unperturbed values, as MOA. */
  static std::int32_t Classify(int    f,
                               double salary,
                               double commission,
                               int    age,
                               int    elevel,
                               int    zipcode,
                               double hvalue,
                               int    hyears,
                               double loan)
  {
    (void)zipcode;
    auto         in = [](double v, double low, double high) { return low <= v && v <= high; };
    const int    band = age < 40 ? 0 : age < 60 ? 1 : 2;
    const double total = salary + commission;
    switch (f)
    {
      case 0:
        return band == 1 ? 1 : 0;
      case 1:
        return in(salary,
                  band == 0   ? 50000
                  : band == 1 ? 75000
                              : 25000,
                  band == 0   ? 100000
                  : band == 1 ? 125000
                              : 75000)
                 ? 0
                 : 1;
      case 2:
        return (band == 0 ? elevel <= 1 : band == 1 ? elevel >= 1 && elevel <= 3 : elevel >= 2) ? 0 : 1;
      case 3:
        if (band == 0)
          return (elevel <= 1 ? in(salary, 25000, 75000) : in(salary, 50000, 100000)) ? 0 : 1;
        if (band == 1)
          return (elevel >= 1 && elevel <= 3 ? in(salary, 50000, 100000) : in(salary, 75000, 125000)) ? 0 : 1;
        return (elevel >= 2 ? in(salary, 50000, 100000) : in(salary, 25000, 75000)) ? 0 : 1;
      case 4:
        if (band == 0)
          return (in(salary, 50000, 100000) ? in(loan, 100000, 300000) : in(loan, 200000, 400000)) ? 0 : 1;
        if (band == 1)
          return (in(salary, 75000, 125000) ? in(loan, 200000, 400000) : in(loan, 300000, 500000)) ? 0 : 1;
        return (in(salary, 25000, 75000) ? in(loan, 300000, 500000) : in(loan, 100000, 300000)) ? 0 : 1;
      case 5:
        return in(total,
                  band == 0   ? 50000
                  : band == 1 ? 75000
                              : 25000,
                  band == 0   ? 100000
                  : band == 1 ? 125000
                              : 75000)
                 ? 0
                 : 1;
      case 6:
        return 2.0 * total / 3.0 - loan / 5.0 - 20000.0 > 0 ? 0 : 1;
      case 7:
        return 2.0 * total / 3.0 - 5000.0 * elevel - 20000.0 > 0 ? 0 : 1;
      case 8:
        return 2.0 * total / 3.0 - 5000.0 * elevel - loan / 5.0 - 10000.0 > 0 ? 0 : 1;
      default:
      {
        const double equity = hyears >= 20 ? hvalue * (hyears - 20) / 10.0 : 0.0;
        return 2.0 * total / 3.0 - 5000.0 * elevel + equity / 5.0 - 10000.0 > 0 ? 0 : 1;
      }
    }
  }

private:
  std::int32_t Generate(float * x) override
  {
    const int function = DriftingConcept(m_Function, 10, m_Count, m_DriftEvery, m_DriftWidth); // 1..10, cycling
    ++m_Count;
    // MOA's balanceClasses: alternate the classes, drawing until the wanted one comes.
    const std::int32_t wanted = m_NextGroupB ? 1 : 0;
    for (;;)
    {
      double             salary = 20000.0 + 130000.0 * Uniform();
      double             commission = salary >= 75000.0 ? 0.0 : 10000.0 + 75000.0 * Uniform();
      int                age = 20 + int(Index(61));
      const int          elevel = int(Index(5));
      const int          car = 1 + int(Index(20));
      const int          zipcode = int(Index(9));
      double             hvalue = (9.0 - zipcode) * 100000.0 * (0.5 + Uniform());
      int                hyears = 1 + int(Index(30));
      double             loan = Uniform() * 500000.0;
      const std::int32_t label = Classify(function, salary, commission, age, elevel, zipcode, hvalue, hyears, loan);
      if (m_Balance && label != wanted)
        continue;
      m_NextGroupB = !m_NextGroupB;
      if (m_Perturbation > 0.0)
      {
        salary = Perturb(salary, 20000.0, 150000.0);
        if (commission > 0.0)
          commission = Perturb(commission, 10000.0, 75000.0);
        age = int(std::lround(Perturb(age, 20.0, 80.0)));
        hvalue = Perturb(hvalue, (9.0 - zipcode) * 100000.0, 0.0, 135000.0);
        hyears = int(std::lround(Perturb(hyears, 1.0, 30.0)));
        loan = Perturb(loan, 0.0, 500000.0);
      }
      const double values[9] = { salary, commission,     double(age), double(elevel), double(car - 1), double(zipcode),
                                 hvalue, double(hyears), loan };
      for (int a = 0; a < 9; ++a)
        x[a] = float(values[a]);
      return label;
    }
  }

  double Perturb(double v, double low, double high) { return Perturb(v, high - low, low, high); }
  double Perturb(double v, double range, double low, double high)
  {
    v += range * (2.0 * (Uniform() - 0.5)) * m_Perturbation;
    return std::min(high, std::max(low, v));
  }

  int          m_Function, m_DriftEvery, m_DriftWidth;
  double       m_Perturbation;
  bool         m_Balance, m_NextGroupB = false;
  std::int64_t m_Count = 0;
};

} // namespace

std::unique_ptr<InstanceStream>
MakeGenerator(const std::string & spec, std::uint64_t defaultSeed, const std::string & parameter)
{
  SpecParameters                  p(spec, parameter);
  const auto                      seed = std::uint64_t(p.Number("seed", double(defaultSeed), 0.0, 9007199254740992.0));
  std::unique_ptr<InstanceStream> stream;
  if (p.Name() == "randomtree")
    stream = std::make_unique<RandomTreeGenerator>(p, seed);
  else if (p.Name() == "sea")
    stream = std::make_unique<SeaGenerator>(p, seed);
  else if (p.Name() == "hyperplane")
    stream = std::make_unique<HyperplaneGenerator>(p, seed);
  else if (p.Name() == "rbf")
    stream = std::make_unique<RandomRbfGenerator>(p, seed);
  else if (p.Name() == "led")
    stream = std::make_unique<LedGenerator>(p, seed);
  else if (p.Name() == "agrawal")
    stream = std::make_unique<AgrawalGenerator>(p, seed);
  else
    CANOPY_THROW(parameter << ": unknown generator '" << p.Name()
                           << "' (randomtree, sea, hyperplane, rbf, led, agrawal)");
  p.RequireAllUsed();
  return stream;
}

} // namespace canopy::streaming
