// SPDX-License-Identifier: GPL-3.0-or-later
// A session: what File ▸ Save Session writes and Open Session (or `exposure --session FILE`) restores — the trace,
// the view on it, the window's docks, the rules file, the figure settings and the bookmarks — as a small JSON file.
#pragma once

#include "model/timerange.h"
#include "model/trace.h"

#include <QByteArray>
#include <QString>
#include <optional>
#include <set>
#include <stdexcept>
#include <vector>

namespace exposure {

// A named time range of the trace.
struct Bookmark
{
    QString name;
    TimeRange range;
    bool operator==(const Bookmark&) const = default;
};

struct Session
{
    static constexpr int kVersion = 1;

    QString tracePath; // absolute
    QString traceRelative; // the same, relative to the session file's folder (found again when both moved)
    std::vector<int> ranks; // the ranks loaded of a folder (empty: all)
    std::optional<TimeRange> window; // the visible range
    std::optional<IntervalRef> selection;
    int firstRow = 0; // the first row shown when not every row fits
    bool showCpu = true;
    bool showOverlap = true;
    std::set<int> collapsedRanks;
    QString grouping; // rankGroupingName(); empty: not recorded (the trace opens with its default grouping)
    std::set<int> collapsedGroups; // indexes of the grouping's groups
    QString palette = QStringLiteral("default");
    bool alignClocks = true;
    QByteArray geometry; // QMainWindow::saveGeometry
    QByteArray docks; // QMainWindow::saveState
    QString rulesFile; // empty: the built-in rules
    QByteArray figureSpec; // the Export Figure dialog's spec (JSON), empty if none
    std::vector<Bookmark> bookmarks;
    QString findText;
    bool findRegex = false;

    bool operator==(const Session&) const = default;

    // `sessionFile` is where the JSON goes: the trace's path relative to its folder is written beside the absolute one.
    QByteArray toJson(const QString& sessionFile) const;
    // Throws SessionError with one line that names the file and says what is wrong.
    static Session fromJson(const QByteArray& json, const QString& sessionFile);
    static Session load(const QString& path);
    // The trace's path as saved, or relative to the session file's folder, whichever exists; "" if neither does.
    QString existingTracePath(const QString& sessionFile) const;
};

class SessionError : public std::runtime_error
{
public:
    using std::runtime_error::runtime_error;
};

} // namespace exposure
