// A forest member's monitor (ForestMemberMonitor) as the plain data the device ADWIN step keeps
// (canopy/AdwinMemberStep.h), and back: for saving and restoring a device forest's model, and for
// comparing the device step with the CPU monitor.
#pragma once

#include "canopy/AdwinMemberStep.h"
#include "canopyForestMember.h"

namespace canopy::streaming
{

/** The monitors' settings as the device step takes them (Adwin's clock 32, maxBuckets 5). */
AdwinMonitorSettings
DeviceMonitorSettings(const DriftSettings & settings);

/** The state ForestMemberMonitor::State would give for a member in this device state (twins: the
 * warning detector's window is the drift's); generation: the host's tree-key counter. */
MemberMonitorState
MonitorStateFromDevice(const AdwinMemberData & member, std::uint64_t generation);

/** The device state of a monitor restored from `state` (two windows, as ForestMemberMonitor::Restore).
 * Throws canopy::Error for a state ForestMemberMonitor::Restore refuses, or one the device step cannot
 * hold: more than kAdwinDeviceRows rows, or error sums that are not whole numbers (the step's
 * speculative sums are exact only for 0/1 errors). */
void
DeviceMemberFromState(const MemberMonitorState & state, const DriftSettings & settings, AdwinMemberData & member);

} // namespace canopy::streaming
