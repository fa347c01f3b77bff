// SPDX-License-Identifier: GPL-3.0-or-later
#include "figure/figurespec.h"

#include "analysis/analysis.h"
#include "common/atomicwrite.h"
#include "model/enumnames.h"
#include "model/timeformat.h"
#include "view/rankgroups.h"
#include "view/viewindex.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSet>
#include <cmath>
#include <optional>

namespace exposure {

namespace {

[[noreturn]] void fail(const QString& source, const QString& problem)
{
    // One line even when a quoted value holds control characters (\n in a JSON string): they are shown escaped.
    QString line;
    for (const QChar c : QString(source + QStringLiteral(": ") + problem)) {
        if (c.unicode() < 0x20)
            line += c == u'\n' ? QStringLiteral("\\n")
                               : QStringLiteral("\\x%1").arg(uint(c.unicode()), 2, 16, QLatin1Char('0'));
        else
            line += c;
    }
    throw FigureSpecError(line.toStdString());
}

QString rangeKindName(FigureSpec::RangeKind k)
{
    static constexpr EnumName<FigureSpec::RangeKind> names[] = { { FigureSpec::RangeKind::Visible, "visible" },
        { FigureSpec::RangeKind::Custom, "range" }, { FigureSpec::RangeKind::Step, "step" } };
    return QString::fromLatin1(nameIn(names, k, "whole"));
}

QString rowsKindName(FigureSpec::RowsKind k)
{
    static constexpr EnumName<FigureSpec::RowsKind> names[] = { { FigureSpec::RowsKind::Gpu, "gpu" },
        { FigureSpec::RowsKind::Overlap, "overlap" }, { FigureSpec::RowsKind::List, "list" },
        { FigureSpec::RowsKind::All, "all" }, { FigureSpec::RowsKind::Groups, "groups" } };
    return QString::fromLatin1(nameIn(names, k, "auto"));
}

// Rejects keys the format does not know: a misspelt "heigth" must not silently give the default height.
void checkKeys(
    const QJsonObject& o, std::initializer_list<const char*> known, const QString& where, const QString& source)
{
    for (auto it = o.begin(); it != o.end(); ++it) {
        bool ok = false;
        for (const char* k : known)
            ok = ok || it.key() == QLatin1String(k);
        if (!ok)
            fail(source, QStringLiteral("unknown key '%1' in %2").arg(it.key(), where));
    }
}

// The value of `key`: nullopt when absent; fails with "'key' must be …" (`must`) when `is` says it is of the wrong
// type.
std::optional<QJsonValue> typedAt(
    const QJsonObject& o, const char* key, bool (QJsonValue::*is)() const, const char* must, const QString& source)
{
    const QJsonValue v = o.value(QLatin1String(key));
    if (v.isUndefined())
        return std::nullopt;
    if (!(v.*is)())
        fail(source, QStringLiteral("'%1' must be %2").arg(QLatin1String(key), QLatin1String(must)));
    return v;
}

QJsonObject objectAt(const QJsonObject& o, const char* key, const QString& source)
{
    const auto v = typedAt(o, key, &QJsonValue::isObject, "an object", source);
    return v ? v->toObject() : QJsonObject();
}

QString stringAt(const QJsonObject& o, const char* key, const QString& def, const QString& source)
{
    const auto v = typedAt(o, key, &QJsonValue::isString, "a string", source);
    return v ? v->toString() : def;
}

double numberAt(const QJsonObject& o, const char* key, double def, const QString& source)
{
    const auto v = typedAt(o, key, &QJsonValue::isDouble, "a number", source);
    return v ? v->toDouble() : def;
}

int intAt(const QJsonObject& o, const char* key, int def, const QString& source)
{
    const double d = numberAt(o, key, def, source);
    if (d != std::floor(d) || std::abs(d) > 1e9)
        fail(source, QStringLiteral("'%1' must be an integer").arg(QLatin1String(key)));
    return int(d);
}

bool boolAt(const QJsonObject& o, const char* key, bool def, const QString& source)
{
    const auto v = typedAt(o, key, &QJsonValue::isBool, "true or false", source);
    return v ? v->toBool() : def;
}

// The enum at `key` by its name, read with `fromName` (absent: it keeps its value); another name fails with
// "WHAT 'name' is not CHOICES".
template <class E>
void namedAt(const QJsonObject& o, const char* key, E* value, QString (*name)(E), bool (*fromName)(const QString&, E*),
    const char* what, const char* choices, const QString& source)
{
    const QString text = stringAt(o, key, name(*value), source);
    if (!fromName(text, value))
        fail(source, QStringLiteral("%1 '%2' is not %3").arg(QLatin1String(what), text, QLatin1String(choices)));
}

// "fromNs": integer ns, or "from": "1.5ms".
TimeNs timeAt(const QJsonObject& o, const char* nsKey, const char* textKey, const QString& source)
{
    if (o.contains(QLatin1String(nsKey))) {
        const double d = numberAt(o, nsKey, 0, source);
        if (d != std::floor(d) || std::abs(d) > 9e15)
            fail(source, QStringLiteral("'%1' must be an integer number of nanoseconds").arg(QLatin1String(nsKey)));
        return TimeNs(d);
    }
    const QString text = stringAt(o, textKey, QString(), source);
    if (text.isEmpty())
        fail(source, QStringLiteral("range needs '%1' (or '%2')").arg(QLatin1String(nsKey), QLatin1String(textKey)));
    const auto v = parseDuration(text.toStdString());
    if (!v)
        fail(source,
            QStringLiteral("'%1': '%2' is not a time (use 120ns, 350us, 1.5ms, 2s)").arg(QLatin1String(textKey), text));
    // The same bound as the integer form, which toJson() writes (found by fuzzing: a larger time did not read back).
    if (std::abs(double(*v)) > 9e15)
        fail(source, QStringLiteral("'%1': '%2' is out of range (at most 9e15 ns)").arg(QLatin1String(textKey), text));
    return *v;
}

} // namespace

namespace {

constexpr EnumName<FigureSpec::Format> kFormatNames[]
    = { { FigureSpec::Format::Png, "png" }, { FigureSpec::Format::Svg, "svg" }, { FigureSpec::Format::Pdf, "pdf" } };
constexpr EnumName<LegendPosition> kLegendPositionNames[]
    = { { LegendPosition::Top, "top" }, { LegendPosition::Bottom, "bottom" }, { LegendPosition::Right, "right" },
          { LegendPosition::InsideTopRight, "inside" } };
// "\u00B5s" (micro sign) is read as well as "us", never written.
constexpr EnumName<TimeUnit> kTimeUnitNames[]
    = { { TimeUnit::Auto, "auto" }, { TimeUnit::Nanoseconds, "ns" }, { TimeUnit::Microseconds, "us" },
          { TimeUnit::Microseconds, "\xC2\xB5s" }, { TimeUnit::Milliseconds, "ms" }, { TimeUnit::Seconds, "s" } };

// Stores the value named `name` (trimmed, any case) in `*out`; false, leaving it, where no row names it.
template <class E, std::size_t N> bool readName(const EnumName<E> (&table)[N], const QString& name, E* out)
{
    const auto value = valueIn(table, name.trimmed().toLower().toStdString());
    if (value)
        *out = *value;
    return value.has_value();
}

} // namespace

QString figureFormatName(FigureSpec::Format f)
{
    return QString::fromLatin1(nameIn(kFormatNames, f, "png"));
}

bool figureFormatFromName(const QString& name, FigureSpec::Format* f)
{
    return readName(kFormatNames, name, f);
}

QString legendPositionName(LegendPosition p)
{
    return QString::fromLatin1(nameIn(kLegendPositionNames, p, "top"));
}

bool legendPositionFromName(const QString& name, LegendPosition* p)
{
    return readName(kLegendPositionNames, name, p);
}

QString timeUnitName(TimeUnit u)
{
    return QString::fromLatin1(nameIn(kTimeUnitNames, u, "auto"));
}

bool timeUnitFromName(const QString& name, TimeUnit* u)
{
    return readName(kTimeUnitNames, name, u);
}

bool parseRowsArgument(const QString& text, FigureSpec* spec, QString* error)
{
    const QString t = text.trimmed().toLower();
    if (t == QLatin1String("auto")) {
        spec->rows = FigureSpec::RowsKind::Auto;
    } else if (t == QLatin1String("all")) {
        spec->rows = FigureSpec::RowsKind::All;
    } else if (t == QLatin1String("gpu")) {
        spec->rows = FigureSpec::RowsKind::Gpu;
    } else if (t == QLatin1String("overlap")) {
        spec->rows = FigureSpec::RowsKind::Overlap;
    } else if (t == QLatin1String("groups")) {
        spec->rows = FigureSpec::RowsKind::Groups;
    } else {
        QStringList list;
        for (const QString& part : t.split(QLatin1Char(','), Qt::SkipEmptyParts)) {
            const QString p = part.trimmed();
            const QStringList rl = p.split(QLatin1Char(':'));
            bool ok = rl.size() <= 2;
            if (ok)
                rl[0].toUInt(&ok);
            if (ok && rl.size() == 2 && rl[1] != QLatin1String("overlap"))
                rl[1].toUInt(&ok);
            if (!ok) {
                *error = QStringLiteral("'%1' is not a row (use auto, all, gpu, overlap, groups, or a list such as "
                                        "0,1:2,1:overlap of ranks, rank:lane or rank:overlap)")
                             .arg(p);
                return false;
            }
            list << p;
        }
        if (list.isEmpty()) {
            *error = QStringLiteral("no rows given");
            return false;
        }
        spec->rows = FigureSpec::RowsKind::List;
        spec->rowList = list;
    }
    return true;
}

QSize FigureSpec::pixelSize() const
{
    if (sizeUnit == SizeUnit::Pixels)
        return QSize(widthPx, heightPx);
    return QSize(int(std::lround(widthMm * dpi / 25.4)), int(std::lround(heightMm * dpi / 25.4)));
}

QSizeF FigureSpec::sizeMm() const
{
    if (sizeUnit == SizeUnit::Millimetres)
        return QSizeF(widthMm, heightMm);
    return QSizeF(widthPx * 25.4 / dpi, heightPx * 25.4 / dpi);
}

void FigureSpec::validate(const QString& source) const
{
    if (dpi < 30 || dpi > 2400)
        fail(source, QStringLiteral("dpi %1 is out of range (30 to 2400)").arg(dpi));
    if (sizeUnit == SizeUnit::Pixels) {
        if (widthPx < 100 || heightPx < 60 || widthPx > 20000 || heightPx > 20000)
            fail(source,
                QStringLiteral("size %1×%2 px is out of range (100×60 to 20000×20000)").arg(widthPx).arg(heightPx));
    } else {
        if (!(widthMm >= 20 && heightMm >= 10 && widthMm <= 2000 && heightMm <= 2000))
            fail(source,
                QStringLiteral("size %1×%2 mm is out of range (20×10 to 2000×2000)").arg(widthMm).arg(heightMm));
        const QSize px = pixelSize();
        if (px.width() > 20000 || px.height() > 20000)
            fail(source,
                QStringLiteral("%1×%2 mm at %3 dpi is %4×%5 px, more than 20000 px")
                    .arg(widthMm)
                    .arg(heightMm)
                    .arg(dpi)
                    .arg(px.width())
                    .arg(px.height()));
    }
    if (!(fontSize >= 2 && fontSize <= 72))
        fail(source, QStringLiteral("font size %1 pt is out of range (2 to 72)").arg(fontSize));
    if ((rangeKind == RangeKind::Custom || rangeKind == RangeKind::Visible) && range.end <= range.start)
        fail(source,
            QStringLiteral("the range %1 to %2 is empty")
                .arg(QString::fromStdString(formatDuration(range.start)),
                    QString::fromStdString(formatDuration(range.end))));
    if (rows == RowsKind::List && rowList.isEmpty())
        fail(source, QStringLiteral("the row list is empty"));
}

QByteArray FigureSpec::toJson() const
{
    QJsonObject o;
    o.insert(QStringLiteral("exposureFigure"), kVersion);
    o.insert(QStringLiteral("trace"), tracePath);
    o.insert(QStringLiteral("format"), figureFormatName(format));

    QJsonObject r;
    r.insert(QStringLiteral("kind"), rangeKindName(rangeKind));
    if (rangeKind == RangeKind::Custom || rangeKind == RangeKind::Visible) {
        r.insert(QStringLiteral("fromNs"), double(range.start));
        r.insert(QStringLiteral("toNs"), double(range.end));
    } else if (rangeKind == RangeKind::Step) {
        r.insert(QStringLiteral("step"), step);
        r.insert(QStringLiteral("origin"), stepOrigin ? QStringLiteral("step") : QStringLiteral("trace"));
    }
    o.insert(QStringLiteral("range"), r);

    QJsonObject rw;
    rw.insert(QStringLiteral("select"), rowsKindName(rows));
    if (rows == RowsKind::List)
        rw.insert(QStringLiteral("list"), QJsonArray::fromStringList(rowList));
    if (rows == RowsKind::Groups)
        rw.insert(QStringLiteral("groups"), QString::fromLatin1(rankGroupingName(grouping)));
    rw.insert(QStringLiteral("overlapLanes"), overlapLanes);
    o.insert(QStringLiteral("rows"), rw);

    o.insert(QStringLiteral("palette"), paletteKindName(palette));

    QJsonObject sz;
    if (sizeUnit == SizeUnit::Pixels) {
        sz.insert(QStringLiteral("unit"), QStringLiteral("px"));
        sz.insert(QStringLiteral("width"), widthPx);
        sz.insert(QStringLiteral("height"), heightPx);
    } else {
        sz.insert(QStringLiteral("unit"), QStringLiteral("mm"));
        sz.insert(QStringLiteral("width"), widthMm);
        sz.insert(QStringLiteral("height"), heightMm);
    }
    sz.insert(QStringLiteral("dpi"), dpi);
    o.insert(QStringLiteral("size"), sz);

    QJsonObject f;
    f.insert(QStringLiteral("family"), fontFamily);
    f.insert(QStringLiteral("size"), fontSize);
    o.insert(QStringLiteral("font"), f);

    QJsonObject l;
    l.insert(QStringLiteral("show"), legend);
    l.insert(QStringLiteral("position"), legendPositionName(legendPosition));
    o.insert(QStringLiteral("legend"), l);

    o.insert(QStringLiteral("title"), title);
    if (!alignedClocks) // written only when not the default, so that existing specs keep their bytes
        o.insert(QStringLiteral("clock"), QStringLiteral("recorded"));
    QJsonObject ta;
    ta.insert(QStringLiteral("label"), timeAxisLabel);
    ta.insert(QStringLiteral("unit"), timeUnitName(timeUnit));
    o.insert(QStringLiteral("timeAxis"), ta);
    if (heatmap) { // written only when set, so that timeline specs keep their bytes
        QJsonObject h;
        h.insert(QStringLiteral("metric"), QString::fromLatin1(heatMetricName(*heatmap)));
        h.insert(QStringLiteral("order"), QString::fromLatin1(rankOrderName(heatmapOrder)));
        o.insert(QStringLiteral("heatmap"), h);
    }
    return QJsonDocument(o).toJson(QJsonDocument::Indented);
}

// The "heatmap" key, if present: the metric and the order of the heat map figure.
static void readHeatMap(const QJsonObject& o, FigureSpec& s, const QString& src)
{
    if (!o.contains(QStringLiteral("heatmap")))
        return;
    const QJsonObject h = objectAt(o, "heatmap", src);
    checkKeys(h, { "metric", "order" }, QStringLiteral("'heatmap'"), src);
    const QString metric = stringAt(h, "metric", QStringLiteral("step"), src);
    s.heatmap = heatMetricFromName(metric.toStdString());
    if (!s.heatmap)
        fail(src,
            QStringLiteral("heat map metric '%1' is not step, compute, exposed, waiting, idle or bubble").arg(metric));
    const QString order = stringAt(h, "order", QStringLiteral("number"), src);
    const auto ro = rankOrderFromName(order.toStdString());
    if (!ro)
        fail(src, QStringLiteral("heat map order '%1' is not number, host, stage or value").arg(order));
    s.heatmapOrder = *ro;
}

// The spec's "rows": which rows (select, list), the grouping of a row per group of ranks, the overlap lanes.
static void readRows(const QJsonObject& o, FigureSpec& s, const QString& src)
{
    const QJsonObject rw = objectAt(o, "rows", src);
    checkKeys(rw, { "select", "list", "overlapLanes", "groups" }, QStringLiteral("'rows'"), src);
    const QString select = stringAt(rw, "select", QStringLiteral("auto"), src);
    QString rowsText = select;
    if (select == QLatin1String("list")) {
        const QJsonValue lv = rw.value(QStringLiteral("list"));
        if (!lv.isArray())
            fail(src, QStringLiteral("rows of kind 'list' need a 'list' array"));
        QStringList parts;
        for (const QJsonValue& v : lv.toArray()) {
            if (!v.isString())
                fail(src, QStringLiteral("'rows.list' entries are strings such as \"0\", \"1:2\", \"1:overlap\""));
            parts << v.toString();
        }
        rowsText = parts.join(QLatin1Char(','));
    } else if (select != QLatin1String("auto") && select != QLatin1String("all") && select != QLatin1String("gpu")
        && select != QLatin1String("overlap") && select != QLatin1String("groups")) {
        fail(src, QStringLiteral("rows 'select' '%1' is not auto, all, gpu, overlap, groups or list").arg(select));
    }
    if (rw.contains(QStringLiteral("groups"))) {
        const QString g = stringAt(rw, "groups", QStringLiteral("auto"), src);
        const auto grouping = rankGroupingFromName(g.toStdString());
        if (!grouping || *grouping == RankGrouping::None)
            fail(src, QStringLiteral("rows 'groups' '%1' is not auto, host, stage, dp or blocks").arg(g));
        s.grouping = *grouping;
    }
    QString rowError;
    if (!parseRowsArgument(rowsText, &s, &rowError))
        fail(src, rowError);
    s.overlapLanes = boolAt(rw, "overlapLanes", s.overlapLanes, src);
}

FigureSpec FigureSpec::fromJson(const QByteArray& json, const QString& src)
{
    QJsonParseError err;
    const QJsonDocument doc = QJsonDocument::fromJson(json, &err);
    if (err.error != QJsonParseError::NoError)
        fail(src, QStringLiteral("not valid JSON at byte %1: %2").arg(err.offset).arg(err.errorString()));
    if (!doc.isObject())
        fail(src, QStringLiteral("a figure spec is a JSON object"));
    const QJsonObject o = doc.object();
    if (!o.contains(QStringLiteral("exposureFigure")))
        fail(src, QStringLiteral("not a figure spec (no \"exposureFigure\" version key)"));
    const int version = intAt(o, "exposureFigure", 0, src);
    if (version < 1 || version > kVersion)
        fail(src,
            QStringLiteral("figure spec version %1 is not supported (this build reads version %2)")
                .arg(version)
                .arg(kVersion));
    checkKeys(o,
        { "exposureFigure", "trace", "format", "range", "rows", "palette", "size", "font", "legend", "title",
            "timeAxis", "clock", "heatmap" },
        QStringLiteral("the spec"), src);

    FigureSpec s;
    s.tracePath = stringAt(o, "trace", s.tracePath, src);
    const QString clock = stringAt(o, "clock", QStringLiteral("aligned"), src);
    if (clock != QStringLiteral("aligned") && clock != QStringLiteral("recorded"))
        fail(src, QStringLiteral("clock '%1' is not aligned or recorded").arg(clock));
    s.alignedClocks = clock == QStringLiteral("aligned");
    namedAt(o, "format", &s.format, figureFormatName, figureFormatFromName, "format", "png, svg or pdf", src);

    const QJsonObject r = objectAt(o, "range", src);
    checkKeys(r, { "kind", "fromNs", "toNs", "from", "to", "step", "origin" }, QStringLiteral("'range'"), src);
    const QString kind = stringAt(r, "kind", QStringLiteral("whole"), src);
    if (kind == QLatin1String("whole")) {
        s.rangeKind = RangeKind::Whole;
    } else if (kind == QLatin1String("visible") || kind == QLatin1String("range")) {
        s.rangeKind = kind == QLatin1String("visible") ? RangeKind::Visible : RangeKind::Custom;
        s.range.start = timeAt(r, "fromNs", "from", src);
        s.range.end = timeAt(r, "toNs", "to", src);
    } else if (kind == QLatin1String("step")) {
        s.rangeKind = RangeKind::Step;
        if (!r.contains(QStringLiteral("step")))
            fail(src, QStringLiteral("a range of kind 'step' needs 'step'"));
        s.step = intAt(r, "step", 0, src);
        const QString origin = stringAt(r, "origin", QStringLiteral("step"), src);
        if (origin != QLatin1String("step") && origin != QLatin1String("trace"))
            fail(src, QStringLiteral("range origin '%1' is not step or trace").arg(origin));
        s.stepOrigin = origin == QLatin1String("step");
    } else {
        fail(src, QStringLiteral("range kind '%1' is not whole, visible, range or step").arg(kind));
    }

    readRows(o, s, src);

    const QString pal = stringAt(o, "palette", paletteKindName(s.palette), src);
    bool palOk = false;
    s.palette = paletteKindFromName(pal, &palOk);
    if (!palOk)
        fail(src, QStringLiteral("palette '%1' is not default, colorblind or grayscale").arg(pal));

    const QJsonObject sz = objectAt(o, "size", src);
    checkKeys(sz, { "unit", "width", "height", "dpi" }, QStringLiteral("'size'"), src);
    const QString unit = stringAt(sz, "unit", QStringLiteral("px"), src);
    if (unit == QLatin1String("px")) {
        s.sizeUnit = SizeUnit::Pixels;
        s.widthPx = intAt(sz, "width", s.widthPx, src);
        s.heightPx = intAt(sz, "height", s.heightPx, src);
    } else if (unit == QLatin1String("mm")) {
        s.sizeUnit = SizeUnit::Millimetres;
        s.widthMm = numberAt(sz, "width", s.widthMm, src);
        s.heightMm = numberAt(sz, "height", s.heightMm, src);
    } else {
        fail(src, QStringLiteral("size unit '%1' is not px or mm").arg(unit));
    }
    s.dpi = intAt(sz, "dpi", s.dpi, src);

    const QJsonObject f = objectAt(o, "font", src);
    checkKeys(f, { "family", "size" }, QStringLiteral("'font'"), src);
    s.fontFamily = stringAt(f, "family", s.fontFamily, src);
    s.fontSize = numberAt(f, "size", s.fontSize, src);

    const QJsonObject l = objectAt(o, "legend", src);
    checkKeys(l, { "show", "position" }, QStringLiteral("'legend'"), src);
    s.legend = boolAt(l, "show", s.legend, src);
    namedAt(l, "position", &s.legendPosition, legendPositionName, legendPositionFromName, "legend position",
        "top, bottom, right or inside", src);

    s.title = stringAt(o, "title", s.title, src);
    const QJsonObject ta = objectAt(o, "timeAxis", src);
    checkKeys(ta, { "label", "unit" }, QStringLiteral("'timeAxis'"), src);
    s.timeAxisLabel = stringAt(ta, "label", s.timeAxisLabel, src);
    namedAt(ta, "unit", &s.timeUnit, timeUnitName, timeUnitFromName, "time unit", "auto, ns, us, ms or s", src);
    readHeatMap(o, s, src);

    s.validate(src);
    return s;
}

FigureSpec FigureSpec::load(const QString& path)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        fail(path, QStringLiteral("cannot read the figure spec (%1)").arg(file.errorString()));
    if (file.size() > 1 << 20)
        fail(path, QStringLiteral("too large for a figure spec (%1 bytes)").arg(file.size()));
    return fromJson(file.readAll(), path);
}

void FigureSpec::save(const QString& path) const
{
    const QString problem = writeFileAtomically(path, toJson());
    if (!problem.isEmpty())
        fail(path, QStringLiteral("cannot write the figure spec (%1); nothing was changed").arg(problem));
}

TimeRange FigureSpec::resolveRange(const Trace& trace, const Analysis* analysis) const
{
    const QString src = QString::fromStdString(trace.sourcePath);
    switch (rangeKind) {
    case RangeKind::Whole: {
        // What Zoom to Fit shows: the recorded activity, without a tail in which only a NCCL watchdog polls.
        const TimeRange activity = activityRange(trace);
        return activity.isEmpty() ? TimeRange { 0, 1000 } : activity;
    }
    case RangeKind::Visible:
    case RangeKind::Custom:
        if (range.end <= trace.extent.start || range.start >= trace.extent.end)
            fail(src,
                QStringLiteral("the range %1 to %2 lies outside the trace (0 to %3)")
                    .arg(QString::fromStdString(formatDuration(range.start)),
                        QString::fromStdString(formatDuration(range.end)),
                        QString::fromStdString(formatDuration(trace.extent.end))));
        return range;
    case RangeKind::Step: {
        // The step window of all ranks together: the steps numbered `step` (StepWindow::number).
        TimeRange r { 0, 0 };
        bool found = false;
        QStringList available;
        if (analysis) {
            for (const auto& ra : analysis->ranks) {
                for (const auto& st : ra.steps) {
                    if (available.size() < 50 && !available.contains(QString::number(st.number)))
                        available << QString::number(st.number);
                    if (st.number != step)
                        continue;
                    r = found ? TimeRange { std::min(r.start, st.range.start), std::max(r.end, st.range.end) }
                              : st.range;
                    found = true;
                }
            }
        }
        if (!found || r.isEmpty())
            fail(src,
                available.isEmpty() ? QStringLiteral("step %1: the trace has no training steps").arg(step)
                                    : QStringLiteral("step %1 is not in the trace (steps: %2)")
                                          .arg(step)
                                          .arg(available.join(QStringLiteral(", "))));
        return r;
    }
    }
    return trace.extent;
}

TimelineOptions FigureSpec::timelineOptions(const Trace& trace, const Analysis* analysis) const
{
    TimelineOptions o;
    o.range = resolveRange(trace, analysis);
    o.showOverlap = overlapLanes;
    o.palette = palette;
    o.legend = legend;
    o.legendPosition = legendPosition;
    o.title = title;
    o.fontFamily = fontFamily;
    o.fontPointSize = fontSize;
    o.timeAxisLabel = timeAxisLabel;
    o.timeUnit = timeUnit;
    if (rangeKind == RangeKind::Step && stepOrigin) {
        o.timeOrigin = o.range->start;
        if (timeAxisLabel == FigureSpec().timeAxisLabel)
            o.timeAxisLabel = QStringLiteral("Time since the start of step %1").arg(step);
    }
    const QString src = QString::fromStdString(trace.sourcePath);
    const int rankCount = int(trace.ranks.size());
    switch (rows) {
    case RowsKind::Auto: // FigureRenderer narrows the selection when not every row is legible
    case RowsKind::All:
        o.rows = RowSelection::All;
        break;
    case RowsKind::Gpu:
        o.rows = RowSelection::GpuOnly;
        break;
    case RowsKind::Overlap:
        o.rows = RowSelection::Custom;
        o.showOverlap = true;
        for (int r = 0; r < rankCount; ++r)
            o.customRows.emplace_back(r, -1);
        break;
    case RowsKind::Groups: // every group collapsed to its one area-true row
        o.rows = RowSelection::All;
        o.grouping = grouping;
        for (int g = 0, n = int(groupRanks(trace, grouping).size()); g < n; ++g)
            o.collapsedGroups.insert(g);
        break;
    case RowsKind::List: {
        o.rows = RowSelection::Custom;
        for (const QString& entry : rowList) {
            const QStringList p = entry.split(QLatin1Char(':'));
            const int r = p[0].toInt();
            if (r < 0 || r >= rankCount)
                fail(src, QStringLiteral("row '%1': the trace has ranks 0 to %2").arg(entry).arg(rankCount - 1));
            const int laneCount = int(trace.ranks[r].lanes.size());
            if (p.size() == 1) {
                for (int l = 0; l < laneCount; ++l)
                    o.customRows.emplace_back(r, l);
                if (overlapLanes)
                    o.customRows.emplace_back(r, -1);
            } else if (p[1] == QLatin1String("overlap")) {
                o.customRows.emplace_back(r, -1);
                o.showOverlap = true; // asked for by name: shown even with overlapLanes off
            } else {
                const int l = p[1].toInt();
                if (l < 0 || l >= laneCount)
                    fail(src,
                        QStringLiteral("row '%1': rank %2 has lanes 0 to %3").arg(entry).arg(r).arg(laneCount - 1));
                o.customRows.emplace_back(r, l);
            }
        }
        break;
    }
    }
    return o;
}

} // namespace exposure
