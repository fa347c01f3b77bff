// SPDX-License-Identifier: GPL-3.0-or-later
#include "shell/session.h"

#include "view/rankgroups.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <algorithm>

namespace exposure {

namespace {

// Nanoseconds as JSON strings: a double holds them exactly only up to 2^53.
QJsonValue nsValue(TimeNs ns)
{
    return QString::number(ns);
}

TimeNs nsOf(const QJsonValue& v, const char* what)
{
    bool ok = false;
    const TimeNs ns = v.isString() ? v.toString().toLongLong(&ok) : TimeNs(v.toDouble());
    if (!v.isString() && !v.isDouble())
        throw SessionError(std::string(what) + " is not a time in nanoseconds");
    if (v.isString() && !ok)
        throw SessionError(std::string(what) + " is not a time in nanoseconds");
    return ns;
}

QJsonObject rangeObject(TimeRange r)
{
    return QJsonObject { { QStringLiteral("start"), nsValue(r.start) }, { QStringLiteral("end"), nsValue(r.end) } };
}

TimeRange rangeOf(const QJsonValue& v, const char* what)
{
    if (!v.isObject())
        throw SessionError(std::string(what) + " is not an object with start and end");
    const QJsonObject o = v.toObject();
    const TimeRange r { nsOf(o.value(QStringLiteral("start")), what), nsOf(o.value(QStringLiteral("end")), what) };
    if (r.end < r.start)
        throw SessionError(std::string(what) + " ends before it starts");
    return r;
}

QJsonObject viewObject(const Session& s)
{
    QJsonObject view;
    if (s.window)
        view.insert(QStringLiteral("window"), rangeObject(*s.window));
    if (s.selection)
        view.insert(QStringLiteral("selection"),
            QJsonObject { { QStringLiteral("rank"), s.selection->rank }, { QStringLiteral("lane"), s.selection->lane },
                { QStringLiteral("interval"), qint64(s.selection->interval) } });
    QJsonArray collapsed;
    for (const int r : s.collapsedRanks)
        collapsed.append(r);
    view.insert(QStringLiteral("firstRow"), s.firstRow);
    view.insert(QStringLiteral("showCpu"), s.showCpu);
    view.insert(QStringLiteral("showOverlap"), s.showOverlap);
    view.insert(QStringLiteral("collapsedRanks"), collapsed);
    if (!s.grouping.isEmpty()) {
        QJsonArray groups;
        for (const int g : s.collapsedGroups)
            groups.append(g);
        view.insert(QStringLiteral("grouping"), s.grouping);
        view.insert(QStringLiteral("collapsedGroups"), groups);
    }
    view.insert(QStringLiteral("palette"), s.palette);
    view.insert(QStringLiteral("alignClocks"), s.alignClocks);
    view.insert(QStringLiteral("find"),
        QJsonObject { { QStringLiteral("text"), s.findText }, { QStringLiteral("regex"), s.findRegex } });
    return view;
}

void readView(const QJsonObject& view, Session& s)
{
    if (view.contains(QStringLiteral("window")))
        s.window = rangeOf(view.value(QStringLiteral("window")), "view.window");
    if (const QJsonValue sel = view.value(QStringLiteral("selection")); sel.isObject()) {
        const QJsonObject o = sel.toObject();
        const auto interval = o.value(QStringLiteral("interval")).toDouble(-1);
        if (interval < 0 || !o.value(QStringLiteral("rank")).isDouble() || !o.value(QStringLiteral("lane")).isDouble())
            throw SessionError("view.selection needs rank, lane and interval");
        s.selection = IntervalRef { o.value(QStringLiteral("rank")).toInt(), o.value(QStringLiteral("lane")).toInt(),
            std::uint32_t(interval) };
    }
    s.firstRow = std::max(0, view.value(QStringLiteral("firstRow")).toInt(0));
    s.showCpu = view.value(QStringLiteral("showCpu")).toBool(true);
    s.showOverlap = view.value(QStringLiteral("showOverlap")).toBool(true);
    for (const QJsonValue r : view.value(QStringLiteral("collapsedRanks")).toArray())
        s.collapsedRanks.insert(r.toInt());
    s.grouping = view.value(QStringLiteral("grouping")).toString();
    if (!s.grouping.isEmpty() && !rankGroupingFromName(s.grouping.toStdString()))
        throw SessionError(
            "view.grouping \"" + s.grouping.toStdString() + "\" is none of none, auto, host, stage, dp, blocks");
    for (const QJsonValue g : view.value(QStringLiteral("collapsedGroups")).toArray())
        if (g.toInt(-1) >= 0)
            s.collapsedGroups.insert(g.toInt());
    s.palette = view.value(QStringLiteral("palette")).toString(QStringLiteral("default"));
    s.alignClocks = view.value(QStringLiteral("alignClocks")).toBool(true);
    const QJsonObject find = view.value(QStringLiteral("find")).toObject();
    s.findText = find.value(QStringLiteral("text")).toString();
    s.findRegex = find.value(QStringLiteral("regex")).toBool();
}

} // namespace

QByteArray Session::toJson(const QString& sessionFile) const
{
    QJsonObject trace { { QStringLiteral("path"), tracePath } };
    const QDir base = QFileInfo(sessionFile).absoluteDir();
    if (!tracePath.isEmpty())
        trace.insert(QStringLiteral("relativePath"), base.relativeFilePath(tracePath));
    QJsonArray rankList;
    for (const int r : ranks)
        rankList.append(r);
    trace.insert(QStringLiteral("ranks"), rankList);
    QJsonArray marks;
    for (const Bookmark& b : bookmarks) {
        QJsonObject o = rangeObject(b.range);
        o.insert(QStringLiteral("name"), b.name);
        marks.append(o);
    }
    QJsonObject root { { QStringLiteral("exposureSession"), kVersion },
        { QStringLiteral("traces"), QJsonArray { trace } }, { QStringLiteral("view"), viewObject(*this) },
        { QStringLiteral("bookmarks"), marks },
        { QStringLiteral("window"),
            QJsonObject { { QStringLiteral("geometry"), QString::fromLatin1(geometry.toBase64()) },
                { QStringLiteral("docks"), QString::fromLatin1(docks.toBase64()) } } },
        { QStringLiteral("rulesFile"), rulesFile } };
    if (!figureSpec.isEmpty())
        root.insert(QStringLiteral("figureSpec"), QJsonDocument::fromJson(figureSpec).object());
    return QJsonDocument(root).toJson(QJsonDocument::Indented);
}

Session Session::fromJson(const QByteArray& json, const QString& sessionFile)
{
    const std::string name = QFileInfo(sessionFile).fileName().toStdString();
    QJsonParseError error;
    const QJsonDocument doc = QJsonDocument::fromJson(json, &error);
    if (doc.isNull())
        throw SessionError(name + ": not valid JSON (" + error.errorString().toStdString() + " at byte "
            + std::to_string(error.offset) + ")");
    const QJsonObject root = doc.object();
    if (!doc.isObject() || !root.contains(QStringLiteral("exposureSession")))
        throw SessionError(name + ": not an Exposure session (no \"exposureSession\" key)");
    if (root.value(QStringLiteral("exposureSession")).toInt() > kVersion)
        throw SessionError(name + ": written by a newer Exposure (session version "
            + std::to_string(root.value(QStringLiteral("exposureSession")).toInt()) + ")");
    Session s;
    try {
        const QJsonObject trace = root.value(QStringLiteral("traces")).toArray().at(0).toObject();
        s.tracePath = trace.value(QStringLiteral("path")).toString();
        s.traceRelative = trace.value(QStringLiteral("relativePath")).toString();
        if (s.tracePath.isEmpty())
            throw SessionError("it names no trace (traces[0].path)");
        for (const QJsonValue r : trace.value(QStringLiteral("ranks")).toArray())
            s.ranks.push_back(r.toInt());
        readView(root.value(QStringLiteral("view")).toObject(), s);
        for (const QJsonValue b : root.value(QStringLiteral("bookmarks")).toArray())
            s.bookmarks.push_back({ b.toObject().value(QStringLiteral("name")).toString(), rangeOf(b, "a bookmark") });
        const QJsonObject window = root.value(QStringLiteral("window")).toObject();
        s.geometry = QByteArray::fromBase64(window.value(QStringLiteral("geometry")).toString().toLatin1());
        s.docks = QByteArray::fromBase64(window.value(QStringLiteral("docks")).toString().toLatin1());
        s.rulesFile = root.value(QStringLiteral("rulesFile")).toString();
        if (root.value(QStringLiteral("figureSpec")).isObject())
            s.figureSpec
                = QJsonDocument(root.value(QStringLiteral("figureSpec")).toObject()).toJson(QJsonDocument::Compact);
    } catch (const SessionError& e) {
        throw SessionError(name + ": " + e.what());
    }
    return s;
}

Session Session::load(const QString& path)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        throw SessionError(QFileInfo(path).fileName().toStdString() + ": " + f.errorString().toStdString());
    return fromJson(f.readAll(), path);
}

QString Session::existingTracePath(const QString& sessionFile) const
{
    if (QFileInfo::exists(tracePath))
        return tracePath;
    if (!traceRelative.isEmpty()) {
        const QString relative = QFileInfo(sessionFile).absoluteDir().absoluteFilePath(traceRelative);
        if (QFileInfo::exists(relative))
            return QDir::cleanPath(relative);
    }
    return {};
}

} // namespace exposure
