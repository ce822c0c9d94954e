// Synthetic streams with known concepts and drifts, as in MOA and the Hoeffding-tree literature.
// Each generator is seeded and portable (same instances on every machine). Parameters and defaults:
//
//  randomtree   attributes=10 values=2 classes=2 depth=5 first_leaf=3 leaf_fraction=0.15 noise=0.2
//               A random tree over nominal attributes (VFML's treegen, the paper's RT stream): inner
//               nodes test an attribute not tested above them; from level first_leaf on a node becomes a
//               leaf with probability leaf_fraction, at level depth always; leaves get random classes.
//               Attribute values are uniform; the class is the tree's; then every attribute value and the
//               class are independently replaced by a uniform random value with probability noise.
//  sea          function=1 noise=0.1 drift_every=0 drift_width=1
//               3 numeric attributes uniform in [0, 10]; class 1 when x0 + x1 <= theta, theta = 8, 9, 7,
//               9.5 for functions 1..4; labels flipped with probability noise. drift_every=N > 0 moves to
//               the next function every N instances (abrupt; drift_width > 1: a sigmoid of that width).
//  hyperplane   attributes=10 drift_attributes=2 magnitude=0.001 sigma=0.1 noise=0.05
//               x uniform in [0, 1]^d; class 1 when sum w_i x_i >= sum w_i / 2; every instance the weights
//               of drift_attributes move by magnitude, each reversing direction with probability sigma
//               (gradual drift); labels flipped with probability noise.
//  rbf          attributes=10 classes=2 centroids=50 speed=0.0 drift_centroids=50
//               Gaussian clusters around random centroids with random classes, deviations and weights;
//               speed > 0 moves drift_centroids of them by speed per instance (bouncing in [0, 1]^d).
//  led          noise=0.1 irrelevant=17
//               7 binary segments of a digit (flipped with probability noise) and irrelevant binary
//               attributes; 10 classes.
//  agrawal      function=1 perturbation=0.05 balance=0 drift_every=0 drift_width=1
//               Agrawal et al.'s loan applicants, as MOA's AgrawalGenerator and river's Agrawal: salary
//               U[20k, 150k], commission 0 when salary >= 75k else U[10k, 85k], age 20..80, elevel 0..4,
//               car 1..20, zipcode 0..8 (the last three nominal), hvalue (9 - zipcode) 100k U[0.5, 1.5],
//               hyears 1..30, loan U[0, 500k]; class groupA/groupB by one of the 10 functions (MOA's),
//               then the numeric values perturbed by up to +-perturbation of their range (MOA's default
//               0.05; river's 0); balance=1 alternates the classes. drift_every=N > 0 moves to the next
//               function every N instances (abrupt; drift_width > 1: a sigmoid, as SEA).
// Every generator takes seed=S (default: the seed given to MakeGenerator).
#pragma once

#include "canopyStreamSchema.h"

#include <cstdint>
#include <memory>
#include <string>

namespace canopy::streaming
{

/** A stream from a spec "name[:key=value,...]" (see above); bad names, keys or values throw
 * canopy::Error naming the parameter `parameter`. */
std::unique_ptr<InstanceStream>
MakeGenerator(const std::string & spec, std::uint64_t defaultSeed, const std::string & parameter = "--generator");

} // namespace canopy::streaming
