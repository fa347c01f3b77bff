// SPDX-License-Identifier: GPL-3.0-or-later
#include "whatif/whatif.h"

#include "analysis/stepmean.h"

#include <QRegularExpression>
#include <QString>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace exposure::whatif {

namespace {

QRegularExpression compile(const std::string& pattern)
{
    QRegularExpression re(QString::fromStdString(pattern), QRegularExpression::CaseInsensitiveOption);
    if (!re.isValid())
        throw std::invalid_argument(
            "'" + pattern + "': not a regular expression (" + re.errorString().toStdString() + ")");
    return re;
}

bool searched(const QRegularExpression& re, const std::string& a, const std::string& b)
{
    return re.match(QString::fromStdString(a)).hasMatch() || (a != b && re.match(QString::fromStdString(b)).hasMatch());
}

bool sameWord(const std::string& a, const std::string& b)
{
    return a.size() == b.size()
        && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) { return std::tolower(x) == std::tolower(y); });
}

std::string factorText(double f)
{
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", f);
    return buf;
}

// Per name: the product of the factors of the edits whose pattern matches it (computed when first asked).
class NameFactors
{
public:
    NameFactors(const Trace& trace, const Analysis& analysis, const std::vector<Edits::Scale>& scales, bool gpu)
        : m_trace(trace)
        , m_analysis(analysis)
        , m_scales(scales)
        , m_gpu(gpu)
        , m_factor(analysis.names.size(), -1.0)
    {
        for (const auto& s : scales)
            m_res.push_back(compile(s.pattern));
    }

    double operator()(StringId id)
    {
        if (m_scales.empty())
            return 1.0;
        double& f = m_factor[id];
        if (f >= 0)
            return f;
        f = 1.0;
        const NameClass& nc = m_analysis.names[id];
        for (std::size_t i = 0; i < m_scales.size(); ++i) {
            const std::string& p = m_scales[i].pattern;
            const bool byClass = m_gpu && (sameWord(p, categoryName(nc.category)) || sameWord(p, nc.subgroup));
            if (byClass || searched(m_res[i], nc.displayName, m_trace.name(id)))
                f *= m_scales[i].factor;
        }
        return f;
    }

private:
    const Trace& m_trace;
    const Analysis& m_analysis;
    const std::vector<Edits::Scale>& m_scales;
    bool m_gpu;
    std::vector<QRegularExpression> m_res;
    std::vector<double> m_factor;
};

TimeNs scaled(TimeNs t, double f)
{
    return f == 1.0 ? t : TimeNs(std::llround(double(t) * f));
}

void planHostLane(
    const Trace& trace, const Graph& g, const LaneNodes& ln, const Edits& edits, NameFactors& regions, Plan& plan)
{
    const IntervalTable& t = trace.ranks[std::size_t(ln.rank)].lanes[std::size_t(ln.lane)].intervals;
    // Parents precede their children (sorted by start, then depth): one pass gives each interval its factor.
    std::vector<double> factor(t.size(), 1.0);
    for (std::size_t i = 0; i < t.size(); ++i)
        factor[i] = regions(t.name(i)) * (ln.parent[i] != kNone ? factor[ln.parent[i]] : 1.0);
    std::vector<std::uint8_t> removedSync; // intervals whose waiting piece is removed
    for (std::uint32_t n = ln.first; n < ln.first + ln.count; ++n) {
        const std::uint32_t iv = g.owner[n];
        if (iv == kNone)
            continue;
        double f = factor[iv];
        if (g.kind[n] == NodeKind::Launch && edits.launchFactor > 0)
            f /= edits.launchFactor;
        plan.work[n] = scaled(g.work[n], f);
        if (g.kind[n] == NodeKind::Sync && (edits.noSync || f == 0.0)) {
            plan.noRelease[n] = 1;
            plan.work[n] = 0;
            if (edits.noSync) // the whole call goes, not only its waiting
                for (std::uint32_t k = ln.firstPiece[iv]; k <= n; ++k)
                    if (g.owner[k] == iv)
                        plan.work[k] = 0;
        }
    }
}

void planGpuLane(const Trace& trace, const Analysis& a, const Graph& g, const LaneNodes& ln, const Edits& edits,
    NameFactors& kernels, const std::vector<TimeNs>& base, Plan& plan)
{
    const IntervalTable& t = trace.ranks[std::size_t(ln.rank)].lanes[std::size_t(ln.lane)].intervals;
    for (std::uint32_t n = ln.first; n < ln.first + ln.count; ++n) {
        const StringId name = t.name(g.owner[n]);
        double f = kernels(name);
        if (a.names[name].category == Category::Communication) {
            if (edits.comm == Edits::Comm::Hidden) {
                f = 0.0;
                plan.noRelease[n] = 1;
            } else if (edits.comm == Edits::Comm::Faster && edits.commFactor > 0) {
                f /= edits.commFactor;
            }
        }
        plan.work[n] = scaled(base.empty() ? g.work[n] : base[n], f);
    }
}

} // namespace

bool Edits::empty() const
{
    return regions.empty() && gpu.empty() && comm == Comm::Measured && !noSync && launchFactor == 1.0 && !even;
}

std::string Edits::describe() const
{
    std::vector<std::string> parts;
    if (even)
        parts.push_back("every operation at its typical duration");
    for (const Scale& s : regions)
        parts.push_back(s.factor == 0 ? "remove regions '" + s.pattern + "'"
                                      : "regions '" + s.pattern + "' ×" + factorText(s.factor));
    for (const Scale& s : gpu)
        parts.push_back("GPU work '" + s.pattern + "' ×" + factorText(s.factor));
    if (comm == Comm::Hidden)
        parts.push_back("communication hidden");
    else if (comm == Comm::Faster)
        parts.push_back("communication " + factorText(commFactor) + "× faster");
    else if (comm == Comm::NoWait)
        parts.push_back("no waiting for peers after the median");
    if (noSync)
        parts.push_back("no synchronising calls");
    if (launchFactor != 1.0)
        parts.push_back("launch calls " + factorText(launchFactor) + "× faster");
    if (parts.empty())
        return "none";
    std::string out;
    for (std::size_t i = 0; i < parts.size(); ++i)
        out += (i ? "; " : "") + parts[i];
    return out;
}

bool parseScale(const std::string& text, Edits::Scale& out)
{
    const auto eq = text.rfind('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == text.size())
        return false;
    const std::string num = text.substr(eq + 1);
    char* end = nullptr;
    const double f = std::strtod(num.c_str(), &end);
    if (end != num.c_str() + num.size() || !std::isfinite(f) || f < 0)
        return false;
    out.pattern = text.substr(0, eq);
    out.factor = f;
    return true;
}

bool parseComm(const std::string& text, Edits& out)
{
    if (text == "hidden") {
        out.comm = Edits::Comm::Hidden;
        return true;
    }
    if (text == "no-wait") {
        out.comm = Edits::Comm::NoWait;
        return true;
    }
    std::string num = text;
    if (num.rfind("x", 0) == 0 || num.rfind("X", 0) == 0)
        num = num.substr(1);
    else if (num.rfind("\xC3\x97", 0) == 0)
        num = num.substr(2);
    else
        return false;
    char* end = nullptr;
    const double f = std::strtod(num.c_str(), &end);
    if (num.empty() || end != num.c_str() + num.size() || !std::isfinite(f) || f <= 0)
        return false;
    out.comm = Edits::Comm::Faster;
    out.commFactor = f;
    return true;
}

Plan makePlan(const Trace& trace, const Analysis& analysis, const Graph& graph, const Edits& edits)
{
    if (edits.empty())
        return recordedPlan(graph);
    Plan plan = editablePlan(graph);
    NameFactors regions(trace, analysis, edits.regions, false);
    NameFactors kernels(trace, analysis, edits.gpu, true);
    const std::vector<TimeNs> base = edits.even ? evenedWork(trace, analysis, graph) : std::vector<TimeNs> {};
    for (const LaneNodes& ln : graph.lanes) {
        if (ln.rank < 0 || ln.count == 0)
            continue;
        if (trace.ranks[std::size_t(ln.rank)].lanes[std::size_t(ln.lane)].isGpu())
            planGpuLane(trace, analysis, graph, ln, edits, kernels, base, plan);
        else
            planHostLane(trace, graph, ln, edits, regions, plan);
    }
    plan.groupsAtMedian = edits.comm == Edits::Comm::NoWait;
    return plan;
}

} // namespace exposure::whatif
