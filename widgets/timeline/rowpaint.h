// SPDX-License-Identifier: GPL-3.0-or-later
// The seam between what a timeline row shows and how it is painted.
#pragma once

#include "analysis/categories.h"
#include "model/trace.h"
#include "timeline/palette.h"
#include "view/drawlist.h"
#include "view/shareindex.h"

#include <cstdint>
#include <functional>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace exposure {

struct TimelineScene;

// Everything the painter needs of one timeline row for one pixel grid, and nothing of the intervals themselves:
// the exact time per paint class in every pixel column (what the area-true stacks are drawn from), the blocks
// wide enough to carry decorations (label, outline, waiting hatch), the two-tone split of communication and the
// peer-copy arrows that start in the row. Its size grows with the columns × classes of the row and the wide
// blocks in view (at most one per two columns), never with the event count, so the rows of a trace can be
// computed where their intervals are (exposure-mpi's processes) and painted elsewhere.
//
// Colours are not part of it: classes and blocks carry their category and sub-group, and the painter's palette
// turns those into colours exactly as it does for the local trace.
struct RowPaint
{
    // A paint class: for lane rows a Category and the sub-group (gemm, AllReduce); for overlap rows an
    // OverlapState (sub-group empty), for group rows an OverlapState or kGroupIdle. In the ShareIndex's local order
    // (increasing class id; group rows: every state in order).
    struct Class
    {
        std::uint8_t kind = 0;
        std::string subgroup;
        bool operator==(const Class&) const = default;
    };
    // One interval drawn as its own block and at least the fold width wide.
    struct Block
    {
        TimeNs start = 0;
        TimeNs end = 0;
        Category category = Category::Host;
        std::string subgroup; // the colour is palette.block(category, subgroup)
        bool outline = false; // backward compute that overlaps hidden communication (drawn when >= 3 px wide)
        TimeNs waitStart = 0; // the waiting part of a matched collective (waitNs 0: none)
        TimeNs waitNs = 0;
        std::string label; // the text drawn in the block when it is wide enough ("" without block labels)
        bool operator==(const Block&) const = default;
    };
    // A peer-to-peer copy starting at t, pointing at row `toRow`.
    struct Arrow
    {
        TimeNs t = 0;
        int toRow = 0;
        bool operator==(const Arrow&) const = default;
    };

    bool visible = false; // some interval of the row is in view (else nothing is drawn)
    std::vector<Class> classes;
    std::vector<TimeNs> columns; // [x · classes.size() + k], exact integer ns
    std::vector<TimeNs> split; // two-tone communication: [2x] exposed, [2x + 1] hidden; empty: no split
    std::vector<Block> blocks; // in time order
    std::vector<Arrow> arrows; // in the lane's order, at most kMaxArrows
    // A group row: its ranks; a column then holds members × the column's span of rank-time (idle included inside the
    // trace). 0 for other rows.
    int members = 0;

    static constexpr std::size_t kMaxArrows = 2000;

    bool operator==(const RowPaint&) const = default;
    std::size_t bytes() const; // resident size, for budgets and reports

    // A flat byte string (native byte order: for processes of one job) and back. fromBytes throws
    // std::runtime_error on a malformed string.
    void appendTo(std::string& out) const;
    static RowPaint readFrom(std::string_view in, std::size_t& pos);
};

// Rows of a figure as byte strings: several RowPaints with their row numbers.
std::string rowPaintsToBytes(const std::vector<std::pair<int, RowPaint>>& rows);
std::vector<std::pair<int, RowPaint>> rowPaintsFromBytes(std::string_view bytes);

// The RowPaint of `row` of `scene` for one axis state. `list` is the row's draw list and `columns` its
// ShareIndex::columns for `grid`; overlapColumns(rank) gives a rank's overlap-state columns for the same grid
// (needed for the two-tone split only).
RowPaint makeRowPaint(const TimelineScene& scene, int row, const DrawListParams& params, const ColumnGrid& grid,
    const std::vector<DrawItem>& list, const std::vector<TimeNs>& columns,
    const std::function<const std::vector<TimeNs>&(int rank)>& overlapColumns);

// The RowPaints of the given rows of `scene` for one axis state (draw lists and columns built as the plottable
// builds them: buildRowData), by row. What a process that holds some ranks of a run computes for the one that draws.
std::vector<std::pair<int, RowPaint>> paintRows(const TimelineScene& scene, const std::vector<int>& rows,
    const DrawListParams& params, const ColumnGrid& grid, double valueLower, double valueUpper);

// Which classes a timeline's legend names: those the trace has (screen), or those drawn in a range (figures).
struct DrawnClasses
{
    std::set<std::pair<int, std::string>> blocks; // (category, sub-group) of lane rows: legendKey
    bool compute = false, communication = false, idleBlocks = false;
    bool hidden = false, exposed = false, computeOnly = false, otherGpu = false, idle = false;
    bool waitingExposed = false, waitingHidden = false; // overlap rows: the waiting states (collectives matched)
    bool waitingBlocks = false; // communication blocks of lane rows hatched where they wait for peers

    // The union with what other rows draw (idle is per row: some row shows idle time).
    void merge(const DrawnClasses& other);
    bool operator==(const DrawnClasses&) const = default;
    // A flat byte string (core/model/bytes.h) and back; fromBytes throws std::runtime_error on a malformed one.
    std::string toBytes() const;
    static DrawnClasses fromBytes(std::string_view bytes);
};

// The legend key of a paint class: sub-groups only where the palette tells them apart.
std::pair<int, std::string> legendKey(Category c, std::string subgroup, PaletteKind palette);

// What the given rows of `scene` paint inside `range` (lane rows: the legend keys of their classes; overlap rows:
// their states and idle time; communication drawn two-tone: its rank's hidden / exposed split). Independent of
// the pixel grid, so a process that holds some ranks of a run computes it for its rows and the one that draws
// merges the parts (DrawnClasses::merge).
DrawnClasses drawnClasses(const TimelineScene& scene, const std::vector<int>& rows, TimeRange range);

} // namespace exposure
