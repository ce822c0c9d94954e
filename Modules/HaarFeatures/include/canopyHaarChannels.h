// Multi-channel Haar features (auto-context: the intensity and the class-probability maps of the
// previous stage). The channels of a volume are stacked along z in one buffer, channel c's plane 0 at
// plane c * stride, with at least as many zero planes between channels as any feature reaches in z.
// A feature of channel c then equals, at every point of channel 0's planes, the same feature shifted
// by c * stride planes: clipping at a channel's ends reads only the zero gap, exactly as clipping at the
// volume's ends (voxels outside count as zero). Resolving a bank for a stack folds the channel into the
// z offsets, so the integral volume, the response kernels and the PBT kernels (CPU and CUDA) evaluate
// multi-channel features without a change, and CPU and GPU agree as they do for one channel.
#pragma once

#include "canopy/HaarFeature.h"

#include <array>
#include <vector>

namespace canopy
{

/** The most channels a feature may name (an image and up to 63 class maps). */
constexpr int kMaxHaarChannels = 64;

/** Planes of z reach of the resolved features (largest |z offset| of any cuboid corner). */
int
HaarReachZ(const std::vector<HaarFeatureVoxels> & resolved);

/** Planes between the starts of consecutive channels of a stack of `planes`-plane channels read by
 * features of `reachZ` planes of reach: planes + reachZ. */
int
HaarChannelStride(int planes, int reachZ);

/** Planes of a stack of `channels` channels: (channels - 1) * stride + planes. */
int
HaarStackPlanes(int channels, int planes, int stride);

/** `bank` resolved for `sampleBox` with each feature's channel folded into its z offsets (channel *
 * stride). `stride` (out) is HaarChannelStride for the bank's reach; give it to StackHaarChannels.
 * Throws canopy::Error when a feature names a channel >= `channels`. */
std::vector<HaarFeatureVoxels>
ResolveHaarBankOnChannels(const std::vector<HaarFeature> & bank,
                          const std::array<int, 3> &       sampleBox,
                          int                              channels,
                          int                              planes,
                          int *                            stride);

/** One buffer of HaarStackPlanes(channels.size(), nz, stride) planes of nx * ny voxels: channel c's
 * voxels (nx * ny * nz floats each, x fastest) from plane c * stride, zeros between. */
std::vector<float>
StackHaarChannels(const std::vector<const float *> & channels, int nx, int ny, int nz, int stride);

} // namespace canopy
