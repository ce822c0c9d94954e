// The channels an auto-context stage adds to an image (canopyForestCascade.h): the previous stage's class
// maps and the context channels derived from them, integrated after the image's own tables, into a copy of
// them or into the image itself. Shared by the cascade's training and prediction.
#pragma once

#include "canopyForestCascade.h"

#include <string>
#include <vector>

namespace canopy
{
/** AppendProbabilityChannels into `out`. With `reuse`, `out` already holds `image`'s tables followed by
 * appended ones of the same shape (the cascade's previous stage on the same image): only the appended
 * tables are recomputed, in place. Otherwise `out` is rebuilt with one copy of `image`'s tables. */
void
WriteProbabilityChannels(const ForestImage &              image,
                         const std::vector<float> &       distribution,
                         int                              numClasses,
                         int                              threads,
                         const std::vector<std::string> & contextChannels,
                         ForestImage &                    out,
                         bool                             reuse);

/** The same without a copy: `image` holds `imageChannels` channels of its own, followed (after the first
 * call) by the previous stage's appended tables, which are rewritten. */
void
AppendProbabilityChannelsInPlace(ForestImage &                    image,
                                 int                              imageChannels,
                                 const std::vector<float> &       distribution,
                                 int                              numClasses,
                                 int                              threads,
                                 const std::vector<std::string> & contextChannels);

/** A stage's training images, written into `out`: the image channels, then the previous stage's maps;
 * with a focus share (`focusFrom`, may be null), each image's focus is its mistakes in those maps. */
void
WriteStageImages(const std::vector<const ForestLabelledImage *> & images,
                 const std::vector<std::vector<float>> &          maps,
                 int                                              numClasses,
                 int                                              threads,
                 const std::vector<std::string> &                 contextChannels,
                 std::vector<ForestLabelledImage> &               out,
                 const ForestCascadeOptions *                     focusFrom = nullptr);

/** WriteStageImages without a copy: `images` (each holding `imageChannels` channels of its own, then the
 * previous stage's appended ones) get the maps' tables after their own, in place (and a focus only
 * with focusFrom, as WriteStageImages). */
void
AppendStageChannelsInPlace(std::vector<ForestLabelledImage> &      images,
                           int                                     imageChannels,
                           const std::vector<std::vector<float>> & maps,
                           int                                     numClasses,
                           int                                     threads,
                           const std::vector<std::string> &        contextChannels,
                           const ForestCascadeOptions *            focusFrom);
} // namespace canopy
