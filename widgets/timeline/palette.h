// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "analysis/analysis.h"

#include <QBrush>
#include <QColor>
#include <QPalette>
#include <QString>
#include <memory>
#include <string>
#include <vector>

namespace exposure {

enum class PaletteKind {
    Default, // colour-blind-safe (Okabe–Ito based) with related hues per compute sub-group
    ColorBlind, // strict Okabe–Ito: one colour per category, maximal contrast
    Grayscale, // grey levels; hidden vs exposed communication distinguished by hatching
};
QString paletteKindName(PaletteKind kind); // "default", "colorblind", "grayscale"
PaletteKind paletteKindFromName(const QString& name, bool* ok = nullptr);

// All colours of the timeline. Block colours come from the rules' "colours" (the loaded rules, else the built-in
// ones); chrome colours (background, text, grid, selection) are taken from a QPalette so a dark theme works.
class Palette
{
public:
    explicit Palette(PaletteKind kind = PaletteKind::Default, const QPalette& base = QPalette(),
        std::shared_ptr<const Rules> rules = nullptr);

    PaletteKind kind() const { return m_kind; }
    QColor block(Category category, const std::string& subgroup) const;
    QColor overlap(OverlapState state) const;
    QColor idle() const;
    // Fill used for the parts of a communication block (and overlap lane) that are hidden/exposed.
    QBrush hiddenBrush() const;
    QBrush exposedBrush() const;
    // The pattern drawn over overlap(state) (greyscale: hidden and waiting states are hatched; Qt::NoBrush else).
    QBrush overlapPattern(OverlapState state) const;
    // The lines of the hatch over communication spent waiting for peers.
    QColor waitingHatch() const;

    // Every class colour a figure can show, by legend name (in the default palette the sub-groups the rules give
    // colours, "*" as "other <category>"): what the ΔE test compares pairwise.
    struct ClassColour
    {
        QString name;
        QColor colour;
    };
    std::vector<ClassColour> classColours() const;

    QColor background() const { return m_background; }
    QColor rowShade() const { return m_rowShade; } // alternate rank band
    QColor text() const { return m_text; }
    QColor grid() const { return m_grid; }
    QColor selection() const { return m_selection; }
    QColor hover() const { return m_hover; }
    QColor outline() const { return m_outline; } // backward kernels overlapping communication
    // Black or white, whichever reads better on `fill`.
    static QColor textOn(const QColor& fill);

private:
    QColor grey(QColor c) const;

    PaletteKind m_kind;
    std::shared_ptr<const Rules> m_rules; // never null
    QColor m_background, m_rowShade, m_text, m_grid, m_selection, m_hover, m_outline;
};

// CIE 1976 colour difference (ΔE*ab) of two sRGB colours: 100 between black and white; about 2.3 is just noticeable.
double deltaE76(const QColor& a, const QColor& b);

} // namespace exposure
