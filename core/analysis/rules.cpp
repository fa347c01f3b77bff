// SPDX-License-Identifier: GPL-3.0-or-later
// Classification rules: ordered, case-insensitive regular expressions read from JSON, compiled once.
// classify() is called once per distinct name (the analysis caches the result by StringId), so the
// regex cost is proportional to the number of distinct names, never to the number of events.
#include "analysis/analysis.h"
#include "analysis/grouproles_p.h"
#include "model/demangle.h"
#include "model/enumnames.h"
#include "model/lanemapping.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QJsonParseError>
#include <QRegularExpression>
#include <QString>
#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>

namespace exposure {

const char* categoryName(Category c)
{
    static constexpr EnumName<Category> names[]
        = { { Category::Compute, "compute" }, { Category::Communication, "communication" },
              { Category::Memcpy, "memcpy" }, { Category::Idle, "idle" }, { Category::Host, "host" } };
    return nameIn(names, c, "host");
}

namespace {

constexpr EnumName<Phase> kPhaseNames[]
    = { { Phase::Forward, "forward" }, { Phase::Backward, "backward" }, { Phase::Optimizer, "optimizer" } };
constexpr EnumName<RuleTarget> kRuleTargetNames[]
    = { { RuleTarget::Kernel, "kernel" }, { RuleTarget::Region, "region" }, { RuleTarget::Any, "any" } };

} // namespace

const char* phaseName(Phase p)
{
    return nameIn(kPhaseNames, p, "unknown");
}

const char* phaseSourceName(PhaseSource s)
{
    static constexpr EnumName<PhaseSource> names[] = { { PhaseSource::Launch, "launch" },
        { PhaseSource::KernelName, "kernel-name" }, { PhaseSource::StepHeuristic, "step-heuristic" } };
    return nameIn(names, s, "none");
}

const char* ruleTargetName(RuleTarget t)
{
    return nameIn(kRuleTargetNames, t, "any");
}

const char* stepSourceName(StepSource s)
{
    static constexpr EnumName<StepSource> names[] = { { StepSource::Regions, "regions" },
        { StepSource::Markers, "region markers" }, { StepSource::KernelPattern, "kernel pattern" } };
    return nameIn(names, s, "none");
}

const char* launchPairingName(LaunchPairing p)
{
    static constexpr EnumName<LaunchPairing> names[] = { { LaunchPairing::StreamReferences, "stream references" },
        { LaunchPairing::StreamReferencesPartly, "stream references, partly" },
        { LaunchPairing::LaunchOrder, "launch order" }, { LaunchPairing::CorrelationIds, "correlation ids" } };
    return nameIn(names, p, "none");
}

const char* overlapStateName(OverlapState s)
{
    static constexpr EnumName<OverlapState> names[] = { { OverlapState::ComputeOnly, "compute" },
        { OverlapState::Hidden, "hidden" }, { OverlapState::Exposed, "exposed" }, { OverlapState::Other, "other" },
        { OverlapState::WaitingExposed, "waiting exposed" }, { OverlapState::WaitingHidden, "waiting hidden" } };
    return nameIn(names, s, "other");
}

namespace {

enum class RuleKind : std::uint8_t { Compute, Communication, Memcpy, Idle, Phase, Step, Launch, Sync, DataLoader };

struct Compiled
{
    QRegularExpression re;
    RuleTarget target = RuleTarget::Kernel;
    RuleKind kind = RuleKind::Compute;
    Phase phase = Phase::Unknown;
    bool hasCaptures = false;
};

const std::array<const char*, 9> kKindNames
    = { "compute", "communication", "memcpy", "idle", "phase", "step", "launch", "sync", "dataloader" };

bool equalsNoCase(std::string_view a, std::string_view b)
{
    return a.size() == b.size()
        && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) { return std::tolower(x) == std::tolower(y); });
}

// Parses NCCL/RCCL kernel names such as ncclKernel_AllReduce_RING_LL_Sum_float,
// ncclDevKernel_AllReduce_Sum_f32_RING_LL(...), ncclDevKernel_Broadcast_RING_LL, ncclDevKernel_SendRecv.
// The order of the fields differs between NCCL versions, so tokens are recognised by their vocabulary.
void parseCollective(std::string_view name, NameClass& nc)
{
    const auto k = name.find("Kernel_");
    if (k == std::string_view::npos)
        return;
    std::string_view rest = name.substr(k + 7);
    const auto stop = rest.find_first_of("(<");
    if (stop != std::string_view::npos)
        rest = rest.substr(0, stop);
    std::vector<std::string_view> tok;
    while (!rest.empty()) {
        const auto u = rest.find('_');
        tok.push_back(rest.substr(0, u));
        if (u == std::string_view::npos)
            break;
        rest.remove_prefix(u + 1);
    }
    static const std::array<const char*, 8> algorithms
        = { "RING", "TREE", "COLLNET", "COLLNETDIRECT", "COLLNETCHAIN", "NVLS", "NVLSTREE", "PAT" };
    static const std::array<const char*, 3> protocols = { "LL", "LL128", "SIMPLE" };
    static const std::array<const char*, 6> reductions = { "Sum", "Prod", "Max", "Min", "PreMulSum", "SumPostDiv" };
    static const std::array<const char*, 25> types = { "f8e4m3", "f8e5m2", "f16", "bf16", "f32", "f64", "i8", "u8",
        "i32", "u32", "i64", "u64", "float", "half", "double", "bfloat16", "int8_t", "uint8_t", "int32_t", "uint32_t",
        "int64_t", "uint64_t", "int8", "int32", "int64" };
    for (std::size_t i = 0; i < tok.size(); ++i) {
        const auto t = tok[i];
        if (t.empty())
            continue;
        auto in = [&](const auto& list) {
            return std::any_of(list.begin(), list.end(), [&](const char* w) { return equalsNoCase(t, w); });
        };
        if (i == 0) {
            nc.collective = std::string(t);
            continue;
        }
        // Multi-token algorithms: COLLNET_DIRECT, COLLNET_CHAIN, NVLS_TREE.
        if ((equalsNoCase(t, "COLLNET") || equalsNoCase(t, "NVLS")) && i + 1 < tok.size()
            && (equalsNoCase(tok[i + 1], "DIRECT") || equalsNoCase(tok[i + 1], "CHAIN")
                || equalsNoCase(tok[i + 1], "TREE"))) {
            nc.algorithm = std::string(t) + "_" + std::string(tok[i + 1]);
            ++i;
        } else if (in(algorithms)) {
            nc.algorithm = std::string(t);
        } else if (in(protocols)) {
            nc.protocol = std::string(t);
        } else if (in(reductions)) {
            nc.reduction = std::string(t);
        } else if (in(types)) {
            nc.dataType = std::string(t);
            // int8_t, uint64_t ...: the '_t' was split off as a token of its own.
            if (i + 1 < tok.size() && tok[i + 1] == "t" && t.find("int") != std::string_view::npos) {
                nc.dataType += "_t";
                ++i;
            }
        }
    }
}

std::string copyDirection(std::string_view name)
{
    static const std::array<const char*, 7> dirs = { "HtoD", "DtoH", "DtoD", "HtoH", "PtoP", "DtoA", "AtoD" };
    for (const char* d : dirs) {
        const std::string_view dv(d);
        for (std::size_t i = 0; i + dv.size() <= name.size(); ++i)
            if (equalsNoCase(name.substr(i, dv.size()), dv))
                return d;
    }
    for (std::size_t i = 0; i + 6 <= name.size(); ++i)
        if (equalsNoCase(name.substr(i, 6), "memset"))
            return "memset";
    return {};
}

bool isGpuKind(RegionKind k)
{
    return k == RegionKind::Kernel || k == RegionKind::Memcpy || k == RegionKind::Idle || k == RegionKind::Sync
        || k == RegionKind::CommOp || k == RegionKind::ComputeOp || k == RegionKind::DeviceOp
        || k == RegionKind::Unknown;
}
bool isHostKind(RegionKind k)
{
    return k == RegionKind::HostApi || k == RegionKind::HostRegion || k == RegionKind::Unknown;
}

} // namespace

struct Rules::Impl
{
    std::vector<Rule> rules;
    std::vector<Compiled> compiled;
    std::string source;
    std::string description;
    std::map<std::pair<Category, std::string>, std::uint32_t> colours; // (category, sub-group or "*") -> 0xRRGGBB
    std::vector<ChromeMappingRule> chromeMapping;
    std::vector<GroupRoleRule> groupRoles;
    std::vector<detail::GroupRolePatterns> groupRolePatterns;
};

Rules::Rules()
    : d(std::make_unique<Impl>())
{ }
Rules::~Rules() = default;
Rules::Rules(const Rules& o)
    : d(std::make_unique<Impl>(*o.d))
{ }
Rules& Rules::operator=(const Rules& o)
{
    if (this != &o)
        d = std::make_unique<Impl>(*o.d);
    return *this;
}
Rules::Rules(Rules&& o) noexcept
    : d(std::move(o.d))
{
    o.d = std::make_unique<Impl>();
}
Rules& Rules::operator=(Rules&& o) noexcept
{
    std::swap(d, o.d);
    return *this;
}

const std::vector<Rules::Rule>& Rules::rules() const
{
    return d->rules;
}
const std::string& Rules::source() const
{
    return d->source;
}
const std::string& Rules::description() const
{
    return d->description;
}
const std::vector<ChromeMappingRule>& Rules::chromeMapping() const
{
    return d->chromeMapping;
}
const std::vector<GroupRoleRule>& Rules::groupRoles() const
{
    return d->groupRoles;
}

namespace {

// Line and column of a byte offset, for error messages that point into the file.
std::string position(const std::string& text, int offset)
{
    int line = 1, col = 1;
    for (int i = 0; i < offset && i < int(text.size()); ++i) {
        if (text[std::size_t(i)] == '\n') {
            ++line;
            col = 1;
        } else {
            ++col;
        }
    }
    return "line " + std::to_string(line) + ", column " + std::to_string(col);
}

struct Parsed
{
    std::vector<Rules::Rule> rules;
    std::vector<Compiled> compiled;
    std::string description;
    std::map<std::pair<Category, std::string>, std::uint32_t> colours;
    std::vector<ChromeMappingRule> chromeMapping;
    std::vector<GroupRoleRule> groupRoles;
    std::vector<detail::GroupRolePatterns> groupRolePatterns;
};

// "chrome_mapping": [{"id", "process", "thread", "pid", "role", "roles", "step"}, ...] (model/lanemapping.h): how a
// Chrome trace's threads become workers and lanes. Patterns must compile; roles and coordinates must be known names.
template <typename Fail> void parseChromeMapping(const QJsonValue& value, Parsed& out, const Fail& fail)
{
    if (value.isUndefined())
        return;
    if (!value.isArray())
        throw fail("\"chrome_mapping\" must be an array of mapping rules");
    std::set<std::string> ids;
    for (const QJsonValue& v : value.toArray()) {
        const std::string where = "chrome_mapping rule " + std::to_string(out.chromeMapping.size() + 1);
        if (!v.isObject())
            throw fail(where + " is not an object");
        const QJsonObject o = v.toObject();
        static const std::array<const char*, 9> keys
            = { "id", "process", "thread", "pid", "role", "roles", "step", "description", "comment" };
        for (auto it = o.begin(); it != o.end(); ++it)
            if (std::none_of(keys.begin(), keys.end(), [&](const char* k) { return it.key() == QLatin1String(k); }))
                throw fail(where + ": unknown key \"" + it.key().toStdString()
                    + "\" (expected id, process, thread, pid, role, roles, step, description)");
        auto str = [&](const QJsonValue& x, const std::string& key) {
            if (!x.isUndefined() && !x.isString())
                throw fail(where + ": \"" + key + "\" must be a string");
            return x.toString().toStdString();
        };
        ChromeMappingRule r;
        r.id = str(o.value(QLatin1String("id")), "id");
        if (r.id.empty() || !ids.insert(r.id).second)
            throw fail(where + ": \"id\" missing, empty or used twice");
        r.process = str(o.value(QLatin1String("process")), "process");
        r.thread = str(o.value(QLatin1String("thread")), "thread");
        r.pid = str(o.value(QLatin1String("pid")), "pid");
        r.role = str(o.value(QLatin1String("role")), "role");
        r.step = str(o.value(QLatin1String("step")), "step");
        for (const std::string& p : { r.process, r.thread })
            if (const QRegularExpression re(QString::fromStdString(p)); !re.isValid())
                throw fail(where + " (\"" + r.id + "\"): bad pattern \"" + p + "\": " + re.errorString().toStdString());
        ParallelCoords probe;
        if (!r.pid.empty() && !coordinateNamed(probe, r.pid))
            throw fail(where + " (\"" + r.id + "\"): \"pid\" must be dp, pp, tp, ep or cp");
        const QJsonValue roles = o.value(QLatin1String("roles"));
        if (!roles.isUndefined() && !roles.isObject())
            throw fail(where + " (\"" + r.id + "\"): \"roles\" must be an object of role names");
        const QJsonObject roleObject = roles.toObject();
        for (auto it = roleObject.begin(); it != roleObject.end(); ++it)
            r.roles.emplace_back(it.key().toStdString(), str(it.value(), "roles"));
        if (!r.role.empty())
            r.roles.emplace_back(std::string(), r.role); // checked with the others, dropped below
        for (const auto& [text, role] : r.roles)
            if (!laneRoleNamed(role))
                throw fail(where + " (\"" + r.id + "\"): unknown role \"" + role
                    + "\" (expected compute, dp-comm, pp-comm, tp-comm, ep-comm, cp-comm, comm, host or device)");
        if (!r.role.empty())
            r.roles.pop_back();
        out.chromeMapping.push_back(std::move(r));
    }
}

// "colours": {"compute": {"gemm": "#1F5FA6", "*": "#6C9BCB"}, ...}: the colour of each sub-group of a category.
template <typename Fail> void parseColours(const QJsonValue& value, Parsed& out, const Fail& fail)
{
    if (value.isUndefined())
        return;
    if (!value.isObject())
        throw fail("\"colours\" must be an object of categories");
    const QJsonObject categories = value.toObject();
    for (auto c = categories.begin(); c != categories.end(); ++c) {
        const std::string name = c.key().toStdString();
        static const std::array<Category, 5> all
            = { Category::Compute, Category::Communication, Category::Memcpy, Category::Idle, Category::Host };
        const auto category = std::find_if(all.begin(), all.end(), [&](Category k) { return name == categoryName(k); });
        if (category == all.end() || !c.value().isObject())
            throw fail("\"colours\": \"" + name
                + "\" must be a category (compute, communication, memcpy, idle, host) "
                  "holding an object of sub-group colours");
        const QJsonObject groups = c.value().toObject();
        for (auto g = groups.begin(); g != groups.end(); ++g) {
            const QString text = g.value().toString();
            bool ok = text.size() == 7 && text.startsWith(QLatin1Char('#'));
            const std::uint32_t rgb = ok ? text.mid(1).toUInt(&ok, 16) : 0;
            if (!ok)
                throw fail("\"colours\": " + name + " \"" + g.key().toStdString() + "\" must be a colour \"#RRGGBB\"");
            out.colours[{ *category, g.key().toStdString() }] = rgb;
        }
    }
}

// A rule's target, kind, phase and compiled pattern; throws fail(...) naming the rule (`named`) on bad values.
template <typename Fail>
Compiled compileRule(Rules::Rule& r, const std::string& target, const std::string& named, const Fail& fail)
{
    Compiled c;
    const auto parsedTarget = target.empty() ? RuleTarget::Kernel : valueIn(kRuleTargetNames, target);
    if (!parsedTarget)
        throw fail(named + ": unknown target \"" + target + "\" (expected kernel, region or any)");
    r.target = *parsedTarget;
    c.target = r.target;

    const auto kindIt
        = std::find_if(kKindNames.begin(), kKindNames.end(), [&](const char* k) { return r.category == k; });
    if (kindIt == kKindNames.end())
        throw fail(named + ": unknown category \"" + r.category
            + "\" (expected compute, communication, memcpy, idle, phase, step, launch, sync or dataloader)");
    c.kind = RuleKind(kindIt - kKindNames.begin());
    if (c.kind == RuleKind::Phase) {
        const auto phase = valueIn(kPhaseNames, r.subgroup);
        if (!phase)
            throw fail(
                named + ": a phase rule needs subgroup forward, backward or optimizer, not \"" + r.subgroup + "\"");
        c.phase = *phase;
    }
    if (c.kind == RuleKind::Launch && !r.subgroup.empty() && r.subgroup != "graph")
        throw fail(named + ": a launch rule's subgroup is \"graph\" (a CUDA graph launch) or none, not \"" + r.subgroup
            + "\"");
    if (c.kind == RuleKind::Compute && r.subgroup.empty())
        r.subgroup = "other";
    if (c.kind == RuleKind::Compute && r.subgroup == "optimizer")
        c.phase = Phase::Optimizer; // the optimizer's own kernels (multi_tensor_apply, adam...)

    c.re = QRegularExpression(QString::fromStdString(r.pattern), QRegularExpression::CaseInsensitiveOption);
    if (!c.re.isValid())
        throw fail(named + ": bad pattern at offset " + std::to_string(c.re.patternErrorOffset()) + ": "
            + c.re.errorString().toStdString());
    c.re.optimize();
    const QStringList groups = c.re.namedCaptureGroups();
    for (const char* g : { "collective", "algorithm", "protocol", "datatype" })
        if (groups.contains(QLatin1String(g)))
            c.hasCaptures = true;
    return c;
}

Parsed parseRules(const std::string& json, const std::string& source)
{
    // One line even when a quoted value holds control characters (\n in a JSON string): they are shown escaped.
    auto fail = [&](const std::string& problem) -> std::runtime_error {
        std::string line;
        for (const char c : source + ": " + problem) {
            if (static_cast<unsigned char>(c) < 0x20) {
                static const char hex[] = "0123456789abcdef";
                line += c == '\n' ? std::string("\\n")
                    : c == '\t'   ? std::string("\\t")
                                  : std::string("\\x") + hex[(c >> 4) & 0xf] + hex[c & 0xf];
            } else {
                line += c;
            }
        }
        return std::runtime_error(line);
    };
    QJsonParseError err;
    const QJsonDocument doc = QJsonDocument::fromJson(QByteArray::fromStdString(json), &err);
    if (err.error != QJsonParseError::NoError)
        throw fail("not valid JSON at " + position(json, err.offset) + ": " + err.errorString().toStdString());
    if (!doc.isObject())
        throw fail("the top level must be an object with a \"rules\" array");
    const QJsonObject top = doc.object();
    for (auto it = top.begin(); it != top.end(); ++it) {
        if (it.key() != QLatin1String("rules") && it.key() != QLatin1String("description")
            && it.key() != QLatin1String("colours") && it.key() != QLatin1String("chrome_mapping")
            && it.key() != QLatin1String("process_groups"))
            throw fail("unknown top-level key \"" + it.key().toStdString()
                + "\" (expected \"description\", \"rules\", \"colours\", \"chrome_mapping\", "
                  "\"process_groups\")");
    }
    if (!top.value(QLatin1String("rules")).isArray())
        throw fail("missing \"rules\" array");
    Parsed out;
    out.description = top.value(QLatin1String("description")).toString().toStdString();
    parseColours(top.value(QLatin1String("colours")), out, fail);
    parseChromeMapping(top.value(QLatin1String("chrome_mapping")), out, fail);
    detail::parseGroupRoles(top.value(QLatin1String("process_groups")), out.groupRoles, out.groupRolePatterns,
        [&](const std::string& problem) { return fail(problem); });
    const QJsonArray arr = top.value(QLatin1String("rules")).toArray();
    std::set<std::string> ids;
    int index = 0;
    for (const QJsonValue& v : arr) {
        const std::string where = "rule " + std::to_string(index + 1);
        ++index;
        if (!v.isObject())
            throw fail(where + " is not an object");
        const QJsonObject o = v.toObject();
        static const std::array<const char*, 8> keys
            = { "id", "pattern", "target", "category", "subgroup", "catchAll", "description", "comment" };
        for (auto it = o.begin(); it != o.end(); ++it) {
            const std::string k = it.key().toStdString();
            if (std::none_of(keys.begin(), keys.end(), [&](const char* x) { return k == x; }))
                throw fail(where + ": unknown key \"" + k
                    + "\" (expected id, pattern, target, category, subgroup, catchAll, description)");
        }
        auto str = [&](const char* key, bool required) -> std::string {
            const QJsonValue x = o.value(QLatin1String(key));
            if (x.isUndefined()) {
                if (required)
                    throw fail(where + ": missing \"" + key + "\"");
                return {};
            }
            if (!x.isString())
                throw fail(where + ": \"" + key + "\" must be a string");
            return x.toString().toStdString();
        };
        Rules::Rule r;
        r.id = str("id", true);
        r.pattern = str("pattern", true);
        const std::string target = str("target", false);
        r.category = str("category", true);
        r.subgroup = str("subgroup", false);
        const QJsonValue ca = o.value(QLatin1String("catchAll"));
        if (!ca.isUndefined() && !ca.isBool())
            throw fail(where + " (\"" + r.id + "\"): \"catchAll\" must be true or false");
        r.catchAll = ca.toBool(false);
        if (r.id.empty())
            throw fail(where + ": empty \"id\"");
        if (!ids.insert(r.id).second)
            throw fail(where + ": duplicate id \"" + r.id + "\"");
        const std::string named = where + " (\"" + r.id + "\")";

        Compiled c = compileRule(r, target, named, fail);
        out.rules.push_back(std::move(r));
        out.compiled.push_back(std::move(c));
    }
    return out;
}

} // namespace

Rules Rules::fromJson(const std::string& json, const std::string& sourceName)
{
    Parsed p = parseRules(json, sourceName);
    Rules r;
    r.d->rules = std::move(p.rules);
    r.d->compiled = std::move(p.compiled);
    r.d->source = sourceName;
    r.d->description = std::move(p.description);
    r.d->colours = std::move(p.colours);
    r.d->chromeMapping = std::move(p.chromeMapping);
    r.d->groupRoles = std::move(p.groupRoles);
    r.d->groupRolePatterns = std::move(p.groupRolePatterns);
    return r;
}

Rules Rules::defaults()
{
    // Parsed once per process; copies are cheap next to a regex compile (QRegularExpression is shared).
    static const Rules builtIn = fromJson(defaultJson(), "built-in rules");
    return builtIn;
}

Rules Rules::fromFile(const std::string& path, bool extend)
{
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw std::runtime_error(path + ": cannot open the rules file");
    std::stringstream ss;
    ss << in.rdbuf();
    if (in.bad())
        throw std::runtime_error(path + ": cannot read the rules file");
    Rules r = fromJson(ss.str(), path);
    if (extend) {
        const Rules def = defaults();
        r.d->rules.insert(r.d->rules.end(), def.d->rules.begin(), def.d->rules.end());
        r.d->compiled.insert(r.d->compiled.end(), def.d->compiled.begin(), def.d->compiled.end());
        r.d->source = path + " + built-in rules";
        r.d->colours.insert(def.d->colours.begin(), def.d->colours.end()); // the file's colours win
        if (r.d->description.empty())
            r.d->description = def.d->description;
    }
    return r;
}

namespace {
QJsonArray chromeMappingJson(const std::vector<ChromeMappingRule>& mapping)
{
    QJsonArray arr;
    for (const ChromeMappingRule& r : mapping) {
        QJsonObject o;
        o.insert(QLatin1String("id"), QString::fromStdString(r.id));
        for (const auto& [key, value] : { std::pair<const char*, const std::string*> { "process", &r.process },
                 { "thread", &r.thread }, { "pid", &r.pid }, { "role", &r.role }, { "step", &r.step } })
            if (!value->empty())
                o.insert(QLatin1String(key), QString::fromStdString(*value));
        QJsonObject roles;
        for (const auto& [text, role] : r.roles)
            roles.insert(QString::fromStdString(text), QString::fromStdString(role));
        if (!roles.isEmpty())
            o.insert(QLatin1String("roles"), roles);
        arr.append(o);
    }
    return arr;
}
} // namespace

std::string Rules::toJson() const
{
    QJsonArray arr;
    for (const Rule& r : d->rules) {
        QJsonObject o;
        o.insert(QLatin1String("id"), QString::fromStdString(r.id));
        o.insert(QLatin1String("pattern"), QString::fromStdString(r.pattern));
        o.insert(QLatin1String("target"), QLatin1String(ruleTargetName(r.target)));
        o.insert(QLatin1String("category"), QString::fromStdString(r.category));
        if (!r.subgroup.empty())
            o.insert(QLatin1String("subgroup"), QString::fromStdString(r.subgroup));
        if (r.catchAll)
            o.insert(QLatin1String("catchAll"), true);
        arr.append(o);
    }
    QJsonObject top;
    if (!d->description.empty())
        top.insert(QLatin1String("description"), QString::fromStdString(d->description));
    top.insert(QLatin1String("rules"), arr);
    if (!d->colours.empty()) {
        QJsonObject colours;
        for (const auto& [key, rgb] : d->colours) {
            QJsonObject groups = colours.value(QLatin1String(categoryName(key.first))).toObject();
            groups.insert(
                QString::fromStdString(key.second), QStringLiteral("#%1").arg(rgb, 6, 16, QLatin1Char('0')).toUpper());
            colours.insert(QLatin1String(categoryName(key.first)), groups);
        }
        top.insert(QLatin1String("colours"), colours);
    }
    if (!d->chromeMapping.empty())
        top.insert(QLatin1String("chrome_mapping"), chromeMappingJson(d->chromeMapping));
    if (!d->groupRoles.empty())
        top.insert(QLatin1String("process_groups"), detail::groupRolesJson(d->groupRoles));
    return QJsonDocument(top).toJson(QJsonDocument::Indented).toStdString();
}

std::string Rules::groupRole(const CollectiveArgs& args) const
{
    return detail::matchGroupRole(d->groupRoles, d->groupRolePatterns, args);
}

std::optional<std::uint32_t> Rules::colour(Category category, const std::string& subgroup) const
{
    auto it = d->colours.find({ category, subgroup });
    if (it == d->colours.end())
        it = d->colours.find({ category, "*" });
    if (it == d->colours.end())
        return std::nullopt;
    return it->second;
}

std::vector<std::string> Rules::colouredSubgroups(Category category) const
{
    std::vector<std::string> out;
    for (const auto& [key, rgb] : d->colours)
        if (key.first == category && !key.second.empty())
            out.push_back(key.second);
    return out;
}

namespace {

// A compute, communication, memcpy or idle rule that matched: the name's category and sub-group (for communication
// also the collective and its fields, from the name or the pattern's named groups).
void applyClassRule(
    NameClass& nc, const Compiled& c, const Rules::Rule& r, const QRegularExpressionMatch& m, int ruleIndex)
{
    nc.rule = ruleIndex;
    nc.unclassified = r.catchAll;
    nc.category = c.kind == RuleKind::Compute ? Category::Compute
        : c.kind == RuleKind::Communication   ? Category::Communication
        : c.kind == RuleKind::Memcpy          ? Category::Memcpy
                                              : Category::Idle;
    nc.subgroup = r.subgroup;
    nc.subgroupPhase = c.kind == RuleKind::Compute ? c.phase : Phase::Unknown;
    if (c.kind == RuleKind::Communication) {
        parseCollective(nc.displayName, nc);
        if (c.hasCaptures) {
            auto cap = [&](const char* g, std::string& field) {
                const QString v = m.captured(QLatin1String(g));
                if (!v.isEmpty())
                    field = v.toStdString();
            };
            cap("collective", nc.collective);
            cap("algorithm", nc.algorithm);
            cap("protocol", nc.protocol);
            cap("datatype", nc.dataType);
        }
        if (!nc.collective.empty())
            nc.subgroup = nc.collective;
        else if (nc.subgroup.empty())
            nc.subgroup = "other";
    }
}

// What the trace itself says about a region beats a name rule.
void applyRegionKind(NameClass& nc, RegionKind kind)
{
    // Copies are copies, and idle or synchronisation regions are never compute, whatever they are called.
    if (kind == RegionKind::Memcpy) {
        if (nc.category != Category::Memcpy) {
            nc.rule = -1;
            nc.category = Category::Memcpy;
            nc.subgroup.clear();
        }
        nc.unclassified = false;
    } else if (kind == RegionKind::Idle || kind == RegionKind::Sync) {
        if (nc.category != Category::Idle) {
            nc.rule = -1;
            nc.category = Category::Idle;
            nc.subgroup = kind == RegionKind::Idle ? "idle" : "sync";
        }
        nc.unclassified = false;
    } else if (kind == RegionKind::CommOp || kind == RegionKind::ComputeOp) {
        // The layout says compute or communication (a Chrome trace's lane role): a rule of that category keeps its
        // sub-group, any other answer gives way.
        const Category wanted = kind == RegionKind::CommOp ? Category::Communication : Category::Compute;
        if (nc.category != wanted) {
            nc.rule = -1;
            nc.category = wanted;
            nc.subgroup = "other";
            nc.subgroupPhase = Phase::Unknown;
            nc.collective.clear();
        }
        nc.unclassified = false;
    }
}

} // namespace

NameClass Rules::classify(std::string_view name, RegionKind kind) const
{
    NameClass nc;
    nc.displayName = demangle(std::string(name));
    const QString qname = QString::fromStdString(nc.displayName);
    const bool gpu = isGpuKind(kind);
    const bool host = isHostKind(kind);
    nc.category = gpu ? Category::Compute : Category::Host;

    bool classified = false;
    bool phaseDone = false;
    bool regionPhaseDone = false;
    for (std::size_t i = 0; i < d->compiled.size(); ++i) {
        const Compiled& c = d->compiled[i];
        const bool forKernel = gpu && c.target != RuleTarget::Region;
        const bool forRegion = host && c.target != RuleTarget::Kernel;
        if (!forKernel && !forRegion)
            continue;
        const bool isClassRule = c.kind == RuleKind::Compute || c.kind == RuleKind::Communication
            || c.kind == RuleKind::Memcpy || c.kind == RuleKind::Idle;
        // A memcpy rule on a CPU region names a copy call.
        const bool copyCallRule = c.kind == RuleKind::Memcpy && forRegion && !nc.copyCall;
        // Skip the regex when this kind of question is already answered.
        if (isClassRule && (classified || !forKernel) && !copyCallRule)
            continue;
        if (c.kind == RuleKind::Phase && (!forKernel || phaseDone) && (!forRegion || regionPhaseDone))
            continue;
        if (c.kind == RuleKind::Step && (!forRegion || nc.stepRegion))
            continue;
        if (c.kind == RuleKind::Launch && (!forRegion || nc.kernelLaunch))
            continue;
        if (c.kind == RuleKind::Sync && (!forRegion || nc.syncCall))
            continue;
        if (c.kind == RuleKind::DataLoader && (!forRegion || nc.dataLoader))
            continue;
        const QRegularExpressionMatch m = c.re.match(qname);
        if (!m.hasMatch())
            continue;
        const int ruleIndex = int(i);
        const Rule& r = d->rules[i];
        nc.copyCall = nc.copyCall || copyCallRule;
        if (isClassRule && (classified || !forKernel))
            continue; // only the copy call was asked
        switch (c.kind) {
        case RuleKind::Compute:
        case RuleKind::Communication:
        case RuleKind::Memcpy:
        case RuleKind::Idle:
            classified = true;
            applyClassRule(nc, c, r, m, ruleIndex);
            break;
        case RuleKind::Phase:
            if (forKernel && !phaseDone) {
                phaseDone = true;
                nc.namePhase = c.phase;
                nc.phaseRule = ruleIndex;
            }
            if (forRegion && !regionPhaseDone) {
                regionPhaseDone = true;
                nc.regionPhase = c.phase;
                if (nc.phaseRule < 0)
                    nc.phaseRule = ruleIndex;
            }
            break;
        case RuleKind::Step:
            nc.stepRegion = true;
            nc.stepRule = ruleIndex;
            break;
        case RuleKind::Launch:
            nc.kernelLaunch = true;
            nc.graphLaunch = r.subgroup == "graph";
            break;
        case RuleKind::Sync:
            nc.syncCall = true;
            break;
        case RuleKind::DataLoader:
            nc.dataLoader = true;
            break;
        }
    }

    if (gpu && !classified) {
        // Nothing matched (a rules file without a catch-all): still compute, and visibly unclassified.
        nc.unclassified = true;
        nc.subgroup = "other";
    }
    applyRegionKind(nc, kind);
    if (nc.category == Category::Memcpy) {
        const std::string dir = copyDirection(nc.displayName);
        if (!dir.empty())
            nc.subgroup = dir;
    }
    if (nc.category == Category::Idle)
        nc.namePhase = Phase::Unknown; // idle and sync regions are no work of any phase
    return nc;
}

} // namespace exposure
