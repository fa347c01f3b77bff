// SPDX-License-Identifier: GPL-3.0-or-later
#include "analysis/stepmean.h"

#include "analysis/steps.h"
#include "model/timeformat.h"

#include <algorithm>
#include <numeric>

namespace exposure {

namespace {

// Median of the durations of steps[candidates[from..]]; the lower middle for an even count.
TimeNs medianFrom(const std::vector<StepWindow>& steps, const std::vector<std::size_t>& candidates, std::size_t from)
{
    std::vector<TimeNs> d;
    d.reserve(candidates.size() - from);
    for (std::size_t i = from; i < candidates.size(); ++i)
        d.push_back(steps[candidates[i]].range.duration());
    const auto mid = d.begin() + std::ptrdiff_t((d.size() - 1) / 2);
    std::nth_element(d.begin(), mid, d.end());
    return *mid;
}

StepMean finish(const std::vector<StepWindow>& steps, const std::vector<std::size_t>& candidates, std::size_t lead)
{
    StepMean m;
    m.startup.assign(candidates.begin(), candidates.begin() + std::ptrdiff_t(lead));
    m.used.assign(candidates.begin() + std::ptrdiff_t(lead), candidates.end());
    if (!m.used.empty()) {
        // The mean without a sum that could overflow (steps of a trace whose times are near the 64-bit limit): the
        // quotients of each duration by n, plus the remainders' mean (their sum stays below n²).
        const auto n = TimeNs(m.used.size());
        TimeNs quotients = 0, remainders = 0;
        for (const std::size_t k : m.used) {
            const TimeNs d = steps[k].range.duration();
            quotients += d / n;
            remainders += d % n;
        }
        m.meanNs = quotients + remainders / n;
    }
    return m;
}

// duration > kStartupFactor × median, without the product (which overflows for durations near the 64-bit limit).
bool longerThanStartupFactor(TimeNs duration, TimeNs median)
{
    if (duration <= 0)
        return false;
    return median < duration / kStartupFactor + (duration % kStartupFactor != 0 ? 1 : 0);
}

std::string stepRange(const std::vector<StepWindow>& steps, const std::vector<std::size_t>& ks)
{
    const int first = steps[ks.front()].number, last = steps[ks.back()].number;
    // Consecutive numbers read as a range; anything else is listed.
    if (last - first + 1 == int(ks.size()))
        return ks.size() == 1 ? "step " + std::to_string(first)
                              : "steps " + std::to_string(first) + "\xE2\x80\x93" + std::to_string(last);
    std::string out = "steps ";
    for (std::size_t i = 0; i < ks.size(); ++i)
        out += (i ? ", " : "") + std::to_string(steps[ks[i]].number);
    return out;
}

} // namespace

StepMean stepMean(const std::vector<StepWindow>& steps, const std::vector<std::size_t>& candidates)
{
    std::size_t lead = 0;
    while (candidates.size() - lead >= 2
        && longerThanStartupFactor(steps[candidates[lead]].range.duration(), medianFrom(steps, candidates, lead + 1)))
        ++lead;
    return finish(steps, candidates, lead);
}

StepMean stepMean(const std::vector<StepWindow>& steps)
{
    std::vector<std::size_t> all(steps.size());
    std::iota(all.begin(), all.end(), std::size_t(0));
    return stepMean(steps, all);
}

StepMean stepMeanSkipping(const std::vector<StepWindow>& steps, const std::vector<std::size_t>& candidates, int skip)
{
    const std::size_t lead = candidates.empty() ? 0 : std::min(std::size_t(std::max(skip, 0)), candidates.size() - 1);
    StepMean m = finish(steps, candidates, lead);
    m.skippedOnRequest = true;
    return m;
}

std::string StepMean::describe(const std::vector<StepWindow>& steps) const
{
    if (used.empty())
        return {};
    std::string out = stepRange(steps, used);
    if (!startup.empty()) {
        TimeNs left = 0;
        for (const std::size_t k : startup)
            left += steps[k].range.duration();
        out += " (" + stepRange(steps, startup)
            + " left out: " + (skippedOnRequest ? std::string("skipped on request") : std::string("start-up")) + ", "
            + formatDuration(left) + ")";
    }
    return out;
}

} // namespace exposure
